# OpenBLAS with its CBLAS header, from the distribution (Debian/Ubuntu: libopenblas-dev).
find_path(OPENBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread x86_64-linux-gnu aarch64-linux-gnu/openblas-pthread
  REQUIRED)
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
add_library(gemmlab::openblas INTERFACE IMPORTED)
target_include_directories(gemmlab::openblas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(gemmlab::openblas INTERFACE ${OPENBLAS_LIBRARY})
message(STATUS "OpenBLAS: ${OPENBLAS_LIBRARY} (cblas.h in ${OPENBLAS_INCLUDE_DIR})")
