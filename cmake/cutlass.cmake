# Where the CUTLASS headers are: -DCUTLASS_DIR, $TILECRAFT_CUTLASS_DIR, $CUTLASS_DIR, the copy
# scripts/setup.sh unpacked into .deps/cutlass, or else the include trees of the pinned
# nvidia-cutlass wheel, unpacked into the build folder: from $TILECRAFT_CUTLASS_WHEEL, from a
# folder of $PIP_FIND_LINKS, or downloaded (`pip download --no-deps` where pip runs, else the file
# itself from PyPI): only the wheel, none of its Python dependencies. A wheel is used only when
# its SHA-256 is the pinned one.
# The core never includes the headers (DESIGN, Decided 1); generated kernels do, at JIT time, and
# the Python package installs them beside libtilecraft (tilecraft/cutlass).
set(TILECRAFT_CUTLASS_PIP_VERSION "4.2.0.0")
set(TILECRAFT_CUTLASS_WHEEL_SHA256
    "f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6")
set(_tc_wheel_name "nvidia_cutlass-${TILECRAFT_CUTLASS_PIP_VERSION}-py3-none-any.whl")
set(TILECRAFT_CUTLASS_WHEEL_URL
    "https://files.pythonhosted.org/packages/21/6b/e86fc2fd536dd4b8bd2209aa31d7002610c501b0802337787eac9c9b328c/${_tc_wheel_name}"
    CACHE STRING "Where the pinned nvidia-cutlass wheel is downloaded from when pip cannot")

set(_tc_cutlass_candidates "${CUTLASS_DIR}" "$ENV{TILECRAFT_CUTLASS_DIR}" "$ENV{CUTLASS_DIR}"
    "${CMAKE_CURRENT_SOURCE_DIR}/.deps/cutlass"
    "${CMAKE_BINARY_DIR}/cutlass-${TILECRAFT_CUTLASS_PIP_VERSION}")
set(TILECRAFT_CUTLASS_DIR "")
foreach(_dir IN LISTS _tc_cutlass_candidates)
  if(_dir AND EXISTS "${_dir}/include/cutlass/cutlass.h")
    set(TILECRAFT_CUTLASS_DIR "${_dir}")
    break()
  endif()
endforeach()

if(NOT TILECRAFT_CUTLASS_DIR)
  set(_tc_tried "")
  set(_tc_wheel "")
  if(DEFINED ENV{TILECRAFT_CUTLASS_WHEEL} AND NOT "$ENV{TILECRAFT_CUTLASS_WHEEL}" STREQUAL "")
    set(_tc_wheel "$ENV{TILECRAFT_CUTLASS_WHEEL}")
    list(APPEND _tc_tried "TILECRAFT_CUTLASS_WHEEL=${_tc_wheel}")
  else()
    string(REPLACE " " ";" _tc_links "$ENV{PIP_FIND_LINKS}")
    foreach(_link IN LISTS _tc_links)
      if(EXISTS "${_link}/${_tc_wheel_name}")
        set(_tc_wheel "${_link}/${_tc_wheel_name}")
        break()
      endif()
    endforeach()
    list(APPEND _tc_tried "PIP_FIND_LINKS='$ENV{PIP_FIND_LINKS}'")
  endif()
  set(_tc_download "${CMAKE_BINARY_DIR}/cutlass-wheel")
  if(NOT _tc_wheel)
    find_package(Python3 COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import pip"
                      RESULT_VARIABLE _tc_no_pip OUTPUT_QUIET ERROR_QUIET)
    endif()
    if(Python3_Interpreter_FOUND AND _tc_no_pip EQUAL 0)
      message(STATUS "tilecraft: downloading ${_tc_wheel_name} (headers only, no dependencies)")
      execute_process(
        COMMAND "${Python3_EXECUTABLE}" -m pip download --quiet --disable-pip-version-check
                --no-deps --only-binary=:all: "nvidia-cutlass==${TILECRAFT_CUTLASS_PIP_VERSION}"
                -d "${_tc_download}"
        RESULT_VARIABLE _tc_pip_result ERROR_VARIABLE _tc_pip_error OUTPUT_QUIET)
      if(_tc_pip_result EQUAL 0 AND EXISTS "${_tc_download}/${_tc_wheel_name}")
        set(_tc_wheel "${_tc_download}/${_tc_wheel_name}")
      else()
        string(STRIP "${_tc_pip_error}" _tc_pip_error)
        list(APPEND _tc_tried "pip download (${_tc_pip_error})")
      endif()
    else()
      list(APPEND _tc_tried "pip download (no Python with pip here)")
    endif()
  endif()
  if(NOT _tc_wheel)
    # Inside pip's isolated build environment pip itself cannot be run: fetch the file directly.
    message(STATUS "tilecraft: downloading ${TILECRAFT_CUTLASS_WHEEL_URL}")
    file(DOWNLOAD "${TILECRAFT_CUTLASS_WHEEL_URL}" "${_tc_download}/${_tc_wheel_name}"
         EXPECTED_HASH SHA256=${TILECRAFT_CUTLASS_WHEEL_SHA256} STATUS _tc_download_status
         TLS_VERIFY ON)
    list(GET _tc_download_status 0 _tc_download_code)
    if(_tc_download_code EQUAL 0)
      set(_tc_wheel "${_tc_download}/${_tc_wheel_name}")
    else()
      list(GET _tc_download_status 1 _tc_download_text)
      list(APPEND _tc_tried "${TILECRAFT_CUTLASS_WHEEL_URL} (${_tc_download_text})")
      file(REMOVE "${_tc_download}/${_tc_wheel_name}")
    endif()
  endif()
  if(_tc_wheel)
    file(SHA256 "${_tc_wheel}" _tc_sha)
    if(NOT _tc_sha STREQUAL TILECRAFT_CUTLASS_WHEEL_SHA256)
      message(FATAL_ERROR
        "tilecraft: ${_tc_wheel}: expected nvidia-cutlass ${TILECRAFT_CUTLASS_PIP_VERSION} with "
        "SHA-256 ${TILECRAFT_CUTLASS_WHEEL_SHA256}, got ${_tc_sha}; refusing to use it")
    endif()
    set(_tc_dest "${CMAKE_BINARY_DIR}/cutlass-${TILECRAFT_CUTLASS_PIP_VERSION}")
    set(_tc_unpack "${CMAKE_BINARY_DIR}/cutlass-unpack")
    file(REMOVE_RECURSE "${_tc_unpack}" "${_tc_dest}")
    file(ARCHIVE_EXTRACT INPUT "${_tc_wheel}" DESTINATION "${_tc_unpack}"
         PATTERNS "cutlass_library/source/include/*" "cutlass_library/source/tools/util/include/*"
                  "nvidia_cutlass-${TILECRAFT_CUTLASS_PIP_VERSION}.dist-info/licenses/LICENSE.txt")
    file(MAKE_DIRECTORY "${_tc_dest}/tools/util")
    file(RENAME "${_tc_unpack}/cutlass_library/source/include" "${_tc_dest}/include")
    file(RENAME "${_tc_unpack}/cutlass_library/source/tools/util/include"
         "${_tc_dest}/tools/util/include")
    file(RENAME
         "${_tc_unpack}/nvidia_cutlass-${TILECRAFT_CUTLASS_PIP_VERSION}.dist-info/licenses/LICENSE.txt"
         "${_tc_dest}/LICENSE.txt")
    file(REMOVE_RECURSE "${_tc_unpack}")
    set(TILECRAFT_CUTLASS_DIR "${_tc_dest}")
  else()
    list(JOIN _tc_tried "; " _tc_tried_text)
    message(FATAL_ERROR
      "tilecraft: no CUTLASS headers. Tried -DCUTLASS_DIR, TILECRAFT_CUTLASS_DIR, CUTLASS_DIR, "
      ".deps/cutlass and the pinned wheel ${_tc_wheel_name} (${_tc_tried_text}). Without a "
      "registry: set TILECRAFT_CUTLASS_WHEEL to that wheel file (or put it in a PIP_FIND_LINKS "
      "folder), or CUTLASS_DIR to a folder holding include/cutlass.")
  endif()
endif()
message(STATUS "tilecraft: CUTLASS headers in ${TILECRAFT_CUTLASS_DIR}")
