# The C++ package, component `cpp`: libtilecraft, its headers (the public API and the jit and
# module-ABI headers generated modules include), the pinned CUTLASS headers the JIT compiles
# against, and a CMake package: find_package(tilecraft) gives the target tilecraft::tilecraft.
#   cmake --install BUILD --component cpp --prefix PREFIX
# (a build of the C++ project alone installs it with plain `cmake --install BUILD` too; in the
# Python package's build it is left out of the wheel, which has a layout of its own, src/python).
# The installed library finds the headers relative to itself (TILECRAFT_INSTALLED_*_DIR in the
# top CMakeLists), so the prefix may be moved as a whole; TILECRAFT_CUTLASS_DIR still overrides.
include(CMakePackageConfigHelpers)

set(TILECRAFT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tilecraft")
set(_tc_cpp COMPONENT cpp)
if(TILECRAFT_BUILD_PYTHON)
  list(APPEND _tc_cpp EXCLUDE_FROM_ALL)
endif()

install(TARGETS tilecraft EXPORT tilecraftTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ${_tc_cpp}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tilecraft" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        ${_tc_cpp})

install(DIRECTORY "${TILECRAFT_CUTLASS_DIR}/include/"
        DESTINATION "${TILECRAFT_INSTALL_CUTLASS_SUBDIR}/include" ${_tc_cpp})
if(EXISTS "${TILECRAFT_CUTLASS_DIR}/tools/util/include")
  install(DIRECTORY "${TILECRAFT_CUTLASS_DIR}/tools/util/include/"
          DESTINATION "${TILECRAFT_INSTALL_CUTLASS_SUBDIR}/tools/util/include" ${_tc_cpp})
endif()
if(EXISTS "${TILECRAFT_CUTLASS_DIR}/LICENSE.txt")
  install(FILES "${TILECRAFT_CUTLASS_DIR}/LICENSE.txt"
          DESTINATION "${TILECRAFT_INSTALL_CUTLASS_SUBDIR}" ${_tc_cpp})
endif()

install(EXPORT tilecraftTargets NAMESPACE tilecraft:: DESTINATION "${TILECRAFT_INSTALL_CMAKEDIR}"
        ${_tc_cpp})
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/tilecraftConfig.cmake.in"
                              "${CMAKE_CURRENT_BINARY_DIR}/tilecraftConfig.cmake"
                              INSTALL_DESTINATION "${TILECRAFT_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/tilecraftConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/tilecraftConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/tilecraftConfigVersion.cmake"
        DESTINATION "${TILECRAFT_INSTALL_CMAKEDIR}" ${_tc_cpp})
