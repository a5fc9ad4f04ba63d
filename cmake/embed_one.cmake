file(READ ${IN} body)
file(WRITE ${OUT}
"// generated from ${IN} by cmake/embed_one.cmake
namespace gemmlab::embedded { extern const char* const ${NAME}_source; const char* const ${NAME}_source = R\"gemmlab_src(${body})gemmlab_src\"; }
")
