# Where the CUTLASS headers are: -DCUTLASS_DIR, $TILECRAFT_CUTLASS_DIR, $CUTLASS_DIR, or the copy
# scripts/setup.sh unpacked from the pinned nvidia-cutlass wheel into .deps/cutlass.
# The core never includes them (DESIGN, Decided 1); generated kernels do, at JIT time.
set(_tc_cutlass_candidates "${CUTLASS_DIR}" "$ENV{TILECRAFT_CUTLASS_DIR}" "$ENV{CUTLASS_DIR}"
    "${CMAKE_CURRENT_SOURCE_DIR}/.deps/cutlass")
set(TILECRAFT_CUTLASS_DIR "")
foreach(_dir IN LISTS _tc_cutlass_candidates)
  if(_dir AND EXISTS "${_dir}/include/cutlass/cutlass.h")
    set(TILECRAFT_CUTLASS_DIR "${_dir}")
    break()
  endif()
endforeach()
if(TILECRAFT_CUTLASS_DIR)
  message(STATUS "tilecraft: CUTLASS headers in ${TILECRAFT_CUTLASS_DIR}")
else()
  message(WARNING "tilecraft: no CUTLASS headers found; run scripts/setup.sh or set CUTLASS_DIR. "
                  "Kernels cannot be compiled until TILECRAFT_CUTLASS_DIR names them at run time.")
endif()
