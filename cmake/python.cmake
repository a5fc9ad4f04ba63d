# The Python package gemmlab (python/gemmlab/*.py + the native part src/python/module.cpp), built
# when a Python with its headers, pybind11 and a DLPack header are found; skipped with a message else.
# The Python: GEMMLAB_PYTHON if given, else the one a driver names (scikit-build-core passes
# Python_EXECUTABLE), else the first of `python3` on PATH and /usr/bin/python3 that imports torch
# (the distribution's python3-torch, or a virtual environment's), else the first.
set(GEMMLAB_PYTHON "" CACHE FILEPATH "the Python the gemmlab module is built for")
if(NOT GEMMLAB_PYTHON AND Python_EXECUTABLE)
  set(GEMMLAB_PYTHON "${Python_EXECUTABLE}")
endif()
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

# Where a package of that Python keeps something: `expr` is Python printing a folder, or nothing.
function(gemmlab_python_dir out expr)
  execute_process(COMMAND "${GEMMLAB_PYTHON}" -c "${expr}" OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE failed)
  if(failed OR NOT dir)
    set(dir "")
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

set(GEMMLAB_PYTHON_MODULE OFF)
if(GEMMLAB_PYTHON)
  set(Python_EXECUTABLE "${GEMMLAB_PYTHON}")
  find_package(Python COMPONENTS Interpreter Development.Module)
  # pybind11: the distribution's (pybind11-dev) or the one pip installed into that Python.
  gemmlab_python_dir(pip_pybind11 "import pybind11; print(pybind11.get_cmake_dir())")
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET HINTS ${pip_pybind11})
  # DLPack: the distribution's dlpack/dlpack.h (libdlpack-dev), one in .deps, or the copy every
  # PyTorch installs (torch/include/ATen/dlpack.h), so that a pip user needs no package for it.
  gemmlab_python_dir(torch_include "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'include'))")
  find_path(GEMMLAB_DLPACK_INCLUDE dlpack/dlpack.h HINTS ${CMAKE_SOURCE_DIR}/.deps/include)
  if(GEMMLAB_DLPACK_INCLUDE)
    set(GEMMLAB_DLPACK_HEADER "<dlpack/dlpack.h>")
  elseif(torch_include AND EXISTS "${torch_include}/ATen/dlpack.h")
    set(GEMMLAB_DLPACK_INCLUDE "${torch_include}")
    set(GEMMLAB_DLPACK_HEADER "<ATen/dlpack.h>")
  endif()
  if(NOT Python_Development.Module_FOUND)
    message(STATUS "Python module: skipped (no headers for ${GEMMLAB_PYTHON}; Debian: python3-dev)")
  elseif(NOT pybind11_FOUND)
    message(STATUS "Python module: skipped (pybind11 not found; Debian: pybind11-dev, pip: pybind11)")
  elseif(NOT GEMMLAB_DLPACK_INCLUDE)
    message(STATUS "Python module: skipped (no dlpack/dlpack.h, no PyTorch with ATen/dlpack.h; Debian: libdlpack-dev)")
  else()
    set(GEMMLAB_PYTHON_MODULE ON)
  endif()
else()
  message(STATUS "Python module: skipped (no python3)")
endif()

if(NOT GEMMLAB_PYTHON_MODULE)
  if(GEMMLAB_WHEEL)
    message(FATAL_ERROR "GEMMLAB_WHEEL: the Python module cannot be built (see above)")
  endif()
  return()
endif()

# JAX's XLA FFI headers, where that Python has JAX: gemmlab.jax's handler (src/python/jax_ffi.cpp).
gemmlab_python_dir(GEMMLAB_XLA_FFI_INCLUDE "import jax.ffi; print(jax.ffi.include_dir())")
set(jax_note "without gemmlab.jax (no JAX)")
if(GEMMLAB_XLA_FFI_INCLUDE)
  set(jax_note "with gemmlab.jax (XLA FFI headers in ${GEMMLAB_XLA_FFI_INCLUDE})")
endif()
message(STATUS "Python module: built for ${GEMMLAB_PYTHON} (Python ${Python_VERSION}), DLPack ${GEMMLAB_DLPACK_HEADER}, ${jax_note}")

pybind11_add_module(gemmlab_python src/python/module.cpp)
set_target_properties(gemmlab_python PROPERTIES OUTPUT_NAME _gemmlab
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python/gemmlab)
target_include_directories(gemmlab_python PRIVATE ${GEMMLAB_DLPACK_INCLUDE})
target_link_libraries(gemmlab_python PRIVATE gemmlab CUDA::cudart)
target_link_options(gemmlab_python PRIVATE -Wl,--exclude-libs,ALL)  # as libgemmlab (CMakeLists.txt)
target_compile_definitions(gemmlab_python PRIVATE GEMMLAB_VERSION_STRING="${PROJECT_VERSION}"
  GEMMLAB_DLPACK_HEADER=${GEMMLAB_DLPACK_HEADER})
if(GEMMLAB_XLA_FFI_INCLUDE)
  target_sources(gemmlab_python PRIVATE src/python/jax_ffi.cpp)
  target_include_directories(gemmlab_python SYSTEM PRIVATE ${GEMMLAB_XLA_FFI_INCLUDE})
  target_compile_definitions(gemmlab_python PRIVATE GEMMLAB_JAX_FFI)
endif()

# The package's Python part beside the native one, so that build/python is importable as is.
file(GLOB GEMMLAB_PYTHON_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/gemmlab/*.py)
set(copied)
foreach(file IN LISTS GEMMLAB_PYTHON_FILES)
  get_filename_component(name ${file} NAME)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/python/gemmlab/${name}
    COMMAND ${CMAKE_COMMAND} -E copy ${file} ${CMAKE_BINARY_DIR}/python/gemmlab/${name} DEPENDS ${file})
  list(APPEND copied ${CMAKE_BINARY_DIR}/python/gemmlab/${name})
endforeach()
add_custom_target(gemmlab_python_files ALL DEPENDS ${copied})
add_dependencies(gemmlab_python gemmlab_python_files)

if(GEMMLAB_WHEEL)
  # A wheel: the prefix is site-packages; libgemmlab lives inside the package, beside the module.
  set_target_properties(gemmlab_python PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS gemmlab_python gemmlab LIBRARY DESTINATION gemmlab)
  install(FILES ${GEMMLAB_PYTHON_FILES} DESTINATION gemmlab)
else()
  # <prefix>/lib/pythonX.Y/site-packages/gemmlab; the RPATH finds libgemmlab in <prefix>/lib.
  set_target_properties(gemmlab_python PROPERTIES INSTALL_RPATH "$ORIGIN/../../..")
  set(GEMMLAB_PYTHON_DIR "${CMAKE_INSTALL_LIBDIR}/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/site-packages"
      CACHE STRING "where the Python package is installed, under the prefix")
  install(TARGETS gemmlab_python LIBRARY DESTINATION ${GEMMLAB_PYTHON_DIR}/gemmlab)
  install(FILES ${GEMMLAB_PYTHON_FILES} DESTINATION ${GEMMLAB_PYTHON_DIR}/gemmlab)
endif()
