# OpenSSL's libcrypto: SHA-256, HMAC and Ed25519 for cache keys, manifests and signed archives.
# Its CMake package where the development files are installed (Debian / Ubuntu: libssl-dev, which
# scripts/setup.sh installs); else the headers scripts/setup.sh copied into .deps/openssl (carried
# to machines without a registry) with the system's libcrypto.so.3.
find_package(OpenSSL 3.0 COMPONENTS Crypto QUIET)
if(NOT OpenSSL_FOUND)
  find_path(_tc_openssl_include openssl/evp.h
            HINTS "${CMAKE_CURRENT_SOURCE_DIR}/.deps/openssl/include" NO_DEFAULT_PATH)
  find_library(_tc_libcrypto NAMES crypto libcrypto.so.3)
  if(NOT _tc_openssl_include OR NOT _tc_libcrypto)
    message(FATAL_ERROR "OpenSSL 3 (libcrypto) not found: install libssl-dev "
                        "(scripts/setup.sh does), or put its headers in .deps/openssl/include")
  endif()
  add_library(OpenSSL::Crypto SHARED IMPORTED)
  set_target_properties(OpenSSL::Crypto PROPERTIES IMPORTED_LOCATION "${_tc_libcrypto}"
                        INTERFACE_INCLUDE_DIRECTORIES "${_tc_openssl_include}")
  message(STATUS "OpenSSL: ${_tc_libcrypto} with the headers in ${_tc_openssl_include}")
endif()
