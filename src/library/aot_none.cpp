// The ahead-of-time index of a build without one (the tool that makes it): nothing is built in.
#include "compile/compile.hpp"

namespace gemmlab {
std::string_view aot_binary(const std::string&) { return {}; }
}  // namespace gemmlab
