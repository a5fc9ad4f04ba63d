#include "problem/corpus.hpp"

#include <cctype>
#include <set>
#include <sstream>

#include "gemmlab/error.hpp"
#include "common/files.hpp"

namespace gemmlab::embedded {
extern const char* const corpus_source;
}

namespace gemmlab {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

float parse_float(const std::string& key, const std::string& v) {
  size_t used = 0;
  float x = 0;
  try {
    x = std::stof(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size()) throw UsageError(key + "='" + v + "' is not a number");
  return x;
}

}  // namespace

std::vector<CorpusShape> parse_corpus(const std::string& text, const std::string& file) {
  std::vector<CorpusShape> out;
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line, group;
  for (int no = 1; std::getline(in, line); ++no) {
    try {
      line = trim(line.substr(0, line.find('#')));
      if (line.empty()) continue;
      if (line.rfind("group:", 0) == 0) {
        group = trim(line.substr(6));
        continue;
      }
      std::istringstream words(line);
      std::string name, shape, w;
      words >> name >> shape;
      if (shape.empty()) throw UsageError("expected 'name MxNxK [options]'");
      auto dims = parse_shape(shape, Op::gemm);
      if (dims.size() == 1) dims = {dims[0], dims[0], dims[0]};
      Problem p = problem_of_shape(Op::gemm, dims, Layout::row_major, Trans::no, Trans::no);
      int64_t pad = 0;
      while (words >> w) {
        auto eq = w.find('=');
        if (eq == std::string::npos) throw UsageError("'" + w + "' is not key=value");
        auto key = w.substr(0, eq), v = w.substr(eq + 1);
        if (key == "layout") {
          p.layout = parse_layout(v);
        } else if (key == "trans") {
          if (v.size() != 2) throw UsageError("trans='" + v + "' is not one of NN, NT, TN, TT");
          p.trans_a = parse_trans(std::string(1, char(std::tolower(v[0]))));
          p.trans_b = parse_trans(std::string(1, char(std::tolower(v[1]))));
        } else if (key == "pad") {
          pad = int64_t(parse_float(key, v));
          if (pad < 0 || std::to_string(pad) != v) throw UsageError("pad='" + v + "' is not a whole number >= 0");
        } else if (key == "alpha") {
          p.alpha = parse_float(key, v);
        } else if (key == "beta") {
          p.beta = parse_float(key, v);
        } else {
          throw UsageError("unknown option '" + key + "' (layout, trans, pad, alpha, beta)");
        }
      }
      if (pad) {
        Problem tight = normalized(p);
        p.lda = stored_a(tight).min_ld() + pad;
        p.ldb = stored_b(tight).min_ld() + pad;
        p.ldc = stored_c(tight).min_ld() + pad;
      }
      if (!names.insert(name).second) throw UsageError("the name '" + name + "' is used twice");
      out.push_back({name, group, normalized(p)});
    } catch (const UsageError& e) {
      throw UsageError(file + ":" + std::to_string(no) + ": " + e.what());
    }
  }
  if (out.empty()) throw UsageError(file + ": no shapes");
  return out;
}

std::vector<CorpusShape> load_corpus(const std::string& file_or_builtin) {
  if (file_or_builtin == "builtin") return parse_corpus(embedded::corpus_source, "experiments/corpus.txt");
  auto text = read_file(file_or_builtin);
  if (!text) throw UsageError("cannot read the corpus file " + file_or_builtin);
  return parse_corpus(*text, file_or_builtin);
}

std::vector<CorpusShape> select_corpus(const std::vector<CorpusShape>& all, const std::string& filter) {
  std::vector<CorpusShape> out;
  for (auto& s : all)
    if (filter.empty() || s.name.find(filter) != std::string::npos || s.group.find(filter) != std::string::npos)
      out.push_back(s);
  return out;
}

}  // namespace gemmlab
