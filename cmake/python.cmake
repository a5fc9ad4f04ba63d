# The Python module gemmlab (python/gemmlab + the native part src/python/module.cpp), built when a
# Python with its headers, pybind11 and the DLPack header are found; skipped with a message else.
# The Python: GEMMLAB_PYTHON if given, else the first of `python3` on PATH and /usr/bin/python3
# that imports torch (the distribution's python3-torch, or a virtual environment's), else the first.
set(GEMMLAB_PYTHON "" CACHE FILEPATH "the Python the gemmlab module is built for")
if(NOT GEMMLAB_PYTHON)
  find_program(GEMMLAB_PATH_PYTHON python3 NO_CACHE)
  set(candidates ${GEMMLAB_PATH_PYTHON} /usr/bin/python3)
  list(REMOVE_DUPLICATES candidates)
  foreach(py IN LISTS candidates)
    if(EXISTS "${py}")
      if(NOT GEMMLAB_PYTHON)
        set(GEMMLAB_PYTHON "${py}")
      endif()
      execute_process(COMMAND "${py}" -c "import torch" RESULT_VARIABLE no_torch OUTPUT_QUIET ERROR_QUIET)
      if(no_torch EQUAL 0)
        set(GEMMLAB_PYTHON "${py}")
        break()
      endif()
    endif()
  endforeach()
endif()

set(GEMMLAB_PYTHON_MODULE OFF)
if(GEMMLAB_PYTHON)
  set(Python_EXECUTABLE "${GEMMLAB_PYTHON}")
  find_package(Python COMPONENTS Interpreter Development.Module)
  # pybind11: the distribution's (pybind11-dev) or the one pip installed into that Python.
  execute_process(COMMAND "${GEMMLAB_PYTHON}" -m pybind11 --cmakedir OUTPUT_VARIABLE pip_pybind11
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET HINTS ${pip_pybind11})
  find_path(GEMMLAB_DLPACK_INCLUDE dlpack/dlpack.h HINTS ${CMAKE_SOURCE_DIR}/.deps/include)
  if(NOT Python_Development.Module_FOUND)
    message(STATUS "Python module: skipped (no headers for ${GEMMLAB_PYTHON}; Debian: python3-dev)")
  elseif(NOT pybind11_FOUND)
    message(STATUS "Python module: skipped (pybind11 not found; Debian: pybind11-dev)")
  elseif(NOT GEMMLAB_DLPACK_INCLUDE)
    message(STATUS "Python module: skipped (dlpack/dlpack.h not found; Debian: libdlpack-dev)")
  else()
    set(GEMMLAB_PYTHON_MODULE ON)
  endif()
else()
  message(STATUS "Python module: skipped (no python3)")
endif()

if(GEMMLAB_PYTHON_MODULE)
  message(STATUS "Python module: built for ${GEMMLAB_PYTHON} (Python ${Python_VERSION})")
  pybind11_add_module(gemmlab_python src/python/module.cpp)
  set_target_properties(gemmlab_python PROPERTIES OUTPUT_NAME _gemmlab
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python/gemmlab INSTALL_RPATH "$ORIGIN/../../..")
  target_include_directories(gemmlab_python PRIVATE ${GEMMLAB_DLPACK_INCLUDE})
  target_link_libraries(gemmlab_python PRIVATE gemmlab CUDA::cudart)
  target_link_options(gemmlab_python PRIVATE -Wl,--exclude-libs,ALL)  # as libgemmlab (CMakeLists.txt)
  target_compile_definitions(gemmlab_python PRIVATE GEMMLAB_VERSION_STRING="${PROJECT_VERSION}")
  # The package's Python part beside the native one, so build/python is importable as is.
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/python/gemmlab/__init__.py
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/python/gemmlab/__init__.py
            ${CMAKE_BINARY_DIR}/python/gemmlab/__init__.py
    DEPENDS ${CMAKE_SOURCE_DIR}/python/gemmlab/__init__.py)
  add_custom_target(gemmlab_python_files ALL DEPENDS ${CMAKE_BINARY_DIR}/python/gemmlab/__init__.py)
  add_dependencies(gemmlab_python gemmlab_python_files)
  # Installed into <prefix>/lib/pythonX.Y/site-packages/gemmlab (the RPATH finds libgemmlab in <prefix>/lib).
  set(GEMMLAB_PYTHON_DIR "${CMAKE_INSTALL_LIBDIR}/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/site-packages"
      CACHE STRING "where the Python package is installed, under the prefix")
  install(TARGETS gemmlab_python LIBRARY DESTINATION ${GEMMLAB_PYTHON_DIR}/gemmlab)
  install(FILES python/gemmlab/__init__.py DESTINATION ${GEMMLAB_PYTHON_DIR}/gemmlab)
endif()
