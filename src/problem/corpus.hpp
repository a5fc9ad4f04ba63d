#pragma once
// A shape corpus: the products real programs call, each named by where it comes from, for the
// library's benchmark (gemmlab bench --corpus) and its tests. The text format, one shape a line:
//
//   group: Transformer linear layers (PyTorch: Y = X·Wᵀ, row-major)
//   qkv-768-T8   8x2304x768   trans=NT
//   dot-1M       1x1x1048576  layout=col pad=1 alpha=0.5 beta=1
//
// name, MxNxK, then optional layout=row|col (default row), trans=NN|NT|TN|TT (op(A), op(B)),
// pad=P (added to every tight leading dimension), alpha=, beta=. '#' starts a comment; a
// `group:` line names the source of the shapes after it.
#include <filesystem>
#include <string>
#include <vector>

#include "gemmlab/problem.hpp"

namespace gemmlab {

struct CorpusShape {
  std::string name, group;
  Problem problem;  // normalized
};

// Throws UsageError naming the file and line of the first bad entry, or a repeated name.
std::vector<CorpusShape> parse_corpus(const std::string& text, const std::string& file);
// "builtin" is experiments/corpus.txt as built into gemmlab; anything else a file.
std::vector<CorpusShape> load_corpus(const std::string& file_or_builtin);
// The shapes whose name or group contains `filter` (all when empty).
std::vector<CorpusShape> select_corpus(const std::vector<CorpusShape>& all, const std::string& filter);

}  // namespace gemmlab
