# gemmlab_embed(OUTVAR file...): each kernel source becomes a C++ string
# `gemmlab::embedded::<stem>_source`, rebuilt when the file changes.
function(gemmlab_embed outvar)
  set(generated)
  foreach(src IN LISTS ARGN)
    get_filename_component(stem ${src} NAME_WE)
    set(out ${CMAKE_BINARY_DIR}/generated/${stem}_source.cpp)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_SOURCE_DIR}/${src} -DOUT=${out} -DNAME=${stem}
              -P ${CMAKE_SOURCE_DIR}/cmake/embed_one.cmake
      DEPENDS ${CMAKE_SOURCE_DIR}/${src} ${CMAKE_SOURCE_DIR}/cmake/embed_one.cmake
      COMMENT "Embedding ${src}")
    list(APPEND generated ${out})
  endforeach()
  set(${outvar} ${generated} PARENT_SCOPE)
endfunction()
