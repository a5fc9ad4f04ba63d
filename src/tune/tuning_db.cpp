#include "tune/tuning.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "common/files.hpp"

namespace gemmlab::embedded {
extern const char* const h100_defaults_source;
}

namespace gemmlab {

namespace {

constexpr const char* kFormat = "gemmlab-tuning/1";

// A ragged dimension is marked by the side of the power of two it lies on: 2047 ("2^11-") has as
// many 128-wide tiles as 2048, 2049 ("2^11+") one more, nearly empty: they like different tilings.
std::string dim_class(int64_t x) {
  int e = int(std::lround(std::log2(double(x))));
  if (x % 64 == 0) return "2^" + std::to_string(e);
  return "2^" + std::to_string(e) + (x < (int64_t(1) << e) ? "-" : "+");
}

// Per dimension: (exponent, ragged) parsed back from a class, for distances between classes.
struct ClassKey {
  std::string head;  // "gemm" or "gemv rows" / "gemv cols"
  std::vector<std::pair<int, char>> dims;  // exponent, and '-', '+' or 0 for a multiple of 64
};

ClassKey parse_class(const std::string& c) {
  ClassKey k;
  std::stringstream ss(c);
  std::string tok;
  while (ss >> tok) {
    if (tok.rfind("2^", 0) == 0) {
      char side = tok.back() == '-' || tok.back() == '+' ? tok.back() : 0;
      k.dims.push_back({std::atoi(tok.c_str() + 2), side});
    } else {
      k.head += (k.head.empty() ? "" : " ") + tok;
    }
  }
  return k;
}

double distance(const ClassKey& a, const ClassKey& b) {
  if (a.head != b.head || a.dims.size() != b.dims.size()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.dims.size(); ++i)
    d += std::abs(a.dims[i].first - b.dims[i].first) + (a.dims[i].second != b.dims[i].second ? 0.5 : 0.0);
  return d;
}

TuningEntry entry_from_json(const nlohmann::json& j) {
  TuningEntry e;
  e.gpu = j.value("gpu", std::string());
  e.arch = j.at("arch").get<std::string>();
  e.family = j.at("family").get<std::string>();
  e.params = j.at("params").get<std::string>();
  e.shape_class = j.at("class").get<std::string>();
  e.shape = j.value("shape", std::string());
  e.gflops = j.value("gflops", 0.0);
  e.median_ms = j.value("median_ms", 0.0);
  e.strategy = j.value("strategy", std::string());
  e.evaluated = j.value("evaluated", 0);
  e.search_s = j.value("search_s", 0.0);
  e.date = j.value("date", std::string());
  e.commit = j.value("commit", std::string());
  return e;
}

nlohmann::ordered_json entry_to_json(const TuningEntry& e) {
  return {{"gpu", e.gpu},         {"arch", e.arch},           {"family", e.family},       {"class", e.shape_class},
          {"params", e.params},   {"shape", e.shape},         {"gflops", e.gflops},       {"median_ms", e.median_ms},
          {"strategy", e.strategy}, {"evaluated", e.evaluated}, {"search_s", e.search_s}, {"date", e.date},
          {"commit", e.commit}};
}

}  // namespace

std::string shape_class(const Problem& p) {
  if (p.op == Op::gemv)
    return std::string("gemv ") + (op_a_strides(p).col == 1 ? "rows " : "cols ") + dim_class(p.m) + " " + dim_class(p.k);
  bool col = p.layout == Layout::col_major;
  return "gemm " + dim_class(col ? p.n : p.m) + " " + dim_class(col ? p.m : p.n) + " " + dim_class(p.k);
}

TuningDb TuningDb::parse(const std::string& text, const std::string& name) {
  TuningDb db;
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("format", std::string()) != kFormat) {
      db.problem_ = name + " is not a gemmlab tuning database (format " + kFormat + "); ignored";
      return db;
    }
    for (auto& e : j.at("entries")) db.entries_.push_back(entry_from_json(e));
  } catch (const std::exception& e) {
    db.entries_.clear();
    db.problem_ = name + " is corrupt (" + std::string(e.what()) + "); ignored";
  }
  return db;
}

TuningDb TuningDb::load(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return {};
  auto text = read_file(file);
  if (!text) {
    TuningDb db;
    db.problem_ = "cannot read " + file.string() + "; ignored";
    return db;
  }
  return parse(*text, file.string());
}

bool sums_in_fp64(const TuningEntry& e) {
  auto* f = find_family(e.family);
  return f && accepts(*f, e.params) && f->fp64_accumulators(parse_params(*f, e.params));
}

void TuningDb::put(const TuningEntry& e) {
  for (auto& x : entries_)
    if (x.gpu == e.gpu && x.arch == e.arch && x.family == e.family && x.shape_class == e.shape_class &&
        sums_in_fp64(x) == sums_in_fp64(e)) {
      x = e;
      return;
    }
  entries_.push_back(e);
}

const TuningEntry* TuningDb::best(const std::string& gpu, const std::string& arch, const std::string& family,
                                  const Problem& p, bool exact,
                                  const std::function<bool(const TuningEntry&)>& accept) const {
  auto want = parse_class(shape_class(p));
  const TuningEntry* out = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (auto& e : entries_) {
    if (e.arch != arch || (!e.gpu.empty() && e.gpu != gpu) || (!family.empty() && e.family != family)) continue;
    double d = distance(want, parse_class(e.shape_class));
    if (d < best_d || (d == best_d && out && e.gflops > out->gflops)) {
      if (d == std::numeric_limits<double>::infinity() || (exact && d > 0)) continue;
      // Asked only of an entry that would win (the library's asks plan the configuration).
      if (accept && !accept(e)) continue;
      best_d = d;
      out = &e;
    }
  }
  return out;
}

std::string TuningDb::dump() const {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (auto& e : entries_) entries.push_back(entry_to_json(e));
  return nlohmann::ordered_json{{"format", kFormat}, {"entries", entries}}.dump(1) + "\n";
}

void TuningDb::save(const std::filesystem::path& file) const {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  write_file_atomic(file, dump());
}

Tuned tuned_params(const std::string& family, const Problem& p, const std::string& gpu, const std::string& arch,
                   const TuningDb& db) {
  const KernelFamily* f = find_family(family);
  if (!f) throw UsageError("unknown family '" + family + "'");
  // The family's own arithmetic (FP32 sums): an entry tuned with FP64 sums is tensor_fp32's.
  auto fits = [&](const TuningEntry& e) {
    return accepts(*f, e.params) && f->unsupported(parse_params(*f, e.params), p).empty() && !sums_in_fp64(e);
  };
  if (auto* e = db.best(gpu, arch, family, p, false, fits)) return {e->params, "tuning database"};
  if (auto* e = builtin_table().best(gpu, arch, family, p, false, fits)) return {e->params, "built-in table"};
  return {format_params(*f, parse_params(*f, "")), "defaults"};
}

std::filesystem::path default_tuning_db() {
  if (const char* env = std::getenv("GEMMLAB_TUNING_DB"); env && *env) return env;
  return cache_dir() / "tuning.json";
}

const TuningDb& builtin_table() {
  static const TuningDb db = [] {
    auto t = TuningDb::parse(embedded::h100_defaults_source, "the built-in table");
    if (!t.problem().empty()) throw RuntimeError(t.problem());
    return t;
  }();
  return db;
}

}  // namespace gemmlab
