#include "experiment/experiment.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "gemmlab/error.hpp"
#include "common/files.hpp"

namespace gemmlab {

namespace {

// Recursive descent, lowest precedence first: or → and → comparison → sum → product → unary.
class Parser {
 public:
  Parser(const std::string& t, const std::map<std::string, long long>& v) : text_(t), vars_(v) {}
  long long parse() {
    long long v = logical_or();
    skip();
    if (pos_ != text_.size()) fail("unexpected '" + text_.substr(pos_) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError("expression '" + text_ + "': " + why);
  }
  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(const char* op) {
    skip();
    size_t n = std::char_traits<char>::length(op);
    if (text_.compare(pos_, n, op) != 0) return false;
    // "<" must not take the first half of "<=", nor "=" of "==".
    if (n == 1 && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=' && std::string("<>!=").find(op[0]) != std::string::npos)
      return false;
    pos_ += n;
    return true;
  }
  long long logical_or() {
    long long v = logical_and();
    while (eat("||")) {
      long long r = logical_and();
      v = (v || r) ? 1 : 0;
    }
    return v;
  }
  long long logical_and() {
    long long v = comparison();
    while (eat("&&")) {
      long long r = comparison();
      v = (v && r) ? 1 : 0;
    }
    return v;
  }
  long long comparison() {
    long long v = sum();
    for (;;) {
      if (eat("<=")) v = v <= sum();
      else if (eat(">=")) v = v >= sum();
      else if (eat("==")) v = v == sum();
      else if (eat("!=")) v = v != sum();
      else if (eat("<")) v = v < sum();
      else if (eat(">")) v = v > sum();
      else return v;
    }
  }
  long long sum() {
    long long v = product();
    for (;;) {
      if (eat("+")) v += product();
      else if (eat("-")) v -= product();
      else return v;
    }
  }
  long long product() {
    long long v = unary();
    for (;;) {
      if (eat("*")) {
        v *= unary();
      } else if (eat("/") || eat("%")) {
        bool div = text_[pos_ - 1] == '/';
        long long r = unary();
        if (r == 0) fail("division by zero");
        v = div ? v / r : v % r;
      } else {
        return v;
      }
    }
  }
  long long unary() {
    if (eat("-")) return -unary();
    if (eat("!")) return !unary();
    if (eat("(")) {
      long long v = logical_or();
      if (!eat(")")) fail("missing ')'");
      return v;
    }
    skip();
    size_t start = pos_;
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      return std::stoll(text_.substr(start, pos_ - start));
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    if (start == pos_) fail(pos_ < text_.size() ? "unexpected '" + text_.substr(pos_) + "'" : "ends too early");
    auto name = text_.substr(start, pos_ - start);
    auto it = vars_.find(name);
    if (it == vars_.end()) fail("unknown name '" + name + "'");
    return it->second;
  }

  const std::string& text_;
  const std::map<std::string, long long>& vars_;
  size_t pos_ = 0;
};

std::map<std::string, long long> integers(const GridPoint& point) {
  std::map<std::string, long long> out;
  for (auto& [k, v] : point)
    if (auto* i = std::get_if<long long>(&v)) out[k] = *i;
  return out;
}

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& why) { throw UsageError(where + ": " + why); }

std::vector<std::string> strings(const json& j, const std::string& where) {
  std::vector<std::string> out;
  for (auto& x : j.is_array() ? j : json::array({j})) {
    if (!x.is_string()) bad(where, "expected a string or a list of strings, got " + x.dump());
    out.push_back(x.get<std::string>());
  }
  return out;
}

// [lo, hi] or [lo, hi, step], inclusive.
std::vector<long long> range_of(const json& r, const std::string& where) {
  if (!r.is_array() || r.size() < 2 || r.size() > 3 || !std::all_of(r.begin(), r.end(), [](auto& x) { return x.is_number_integer(); }))
    bad(where, "a range is [first, last] or [first, last, step] of integers");
  long long lo = r[0], hi = r[1], step = r.size() == 3 ? r[2].get<long long>() : 1;
  if (step <= 0) bad(where, "a range's step must be positive");
  if (hi < lo) bad(where, "a range's last value " + std::to_string(hi) + " is below its first " + std::to_string(lo));
  if ((hi - lo) / step > 100000) bad(where, "the range has more than 100000 values");
  std::vector<long long> out;
  for (long long x = lo; x <= hi; x += step) out.push_back(x);
  return out;
}

// Powers of two from lo to hi; with `neighbours` also 2^k - 1 and 2^k + 1.
std::vector<long long> pow2_of(const json& r, const std::string& where, bool neighbours) {
  if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer() || r[0] < 1 || r[1] < r[0])
    bad(where, "expected [first, last] powers of two, first >= 1");
  std::vector<long long> out;
  for (long long x = 1; x <= r[1].get<long long>(); x *= 2) {
    if (x < r[0].get<long long>()) continue;
    if (neighbours && x > 1) out.push_back(x - 1);
    out.push_back(x);
    if (neighbours) out.push_back(x + 1);
  }
  return out;
}

// A list of values, or one object {"range": ...} | {"pow2": ...} | {"pow2_neighbours": ...},
// or a list mixing plain values and such objects.
std::vector<json> values_of(const json& j, const std::string& where) {
  std::vector<json> out;
  auto one = [&](const json& x) {
    if (x.is_object()) {
      if (x.size() != 1) bad(where, "expected one of range, pow2, pow2_neighbours in " + x.dump());
      const std::string kind = x.begin().key();
      const json& arg = x.begin().value();
      std::vector<long long> v;
      if (kind == "range") v = range_of(arg, where);
      else if (kind == "pow2") v = pow2_of(arg, where, false);
      else if (kind == "pow2_neighbours") v = pow2_of(arg, where, true);
      else bad(where, "unknown generator '" + kind + "' (range, pow2, pow2_neighbours)");
      for (auto i : v) out.push_back(i);
    } else if (x.is_number_integer() || x.is_string()) {
      out.push_back(x);
    } else {
      bad(where, "expected integers, strings or generators, got " + x.dump());
    }
  };
  if (j.is_array())
    for (auto& x : j) one(x);
  else
    one(j);
  if (out.empty()) bad(where, "no values");
  return out;
}

std::vector<GridPoint> expand_grid(const json& grid, const std::string& where) {
  if (!grid.is_object() || grid.empty()) bad(where, "a grid is an object of named value lists");
  std::vector<GridPoint> points = {{}};
  for (auto& [name, values] : grid.items()) {
    std::vector<GridPoint> next;
    for (auto& p : points)
      for (auto& v : values_of(values, where + "." + name)) {
        GridPoint q = p;
        if (v.is_string()) q[name] = v.get<std::string>();
        else q[name] = v.get<long long>();
        next.push_back(std::move(q));
      }
    points = std::move(next);
    if (points.size() > 100000) bad(where, "the grid has more than 100000 points");
  }
  return points;
}

const std::set<std::string> kBaselines = {"cublas", "cublas-tf32", "openblas", "gemmlab", "gemmlab-tensor-fp32", "gemmlab-tf32"};

void add_family_point(Experiment& e, const KernelFamily& f, const std::string& params, const std::string& label,
                      int64_t max_size) {
  ExperimentKernel k{f.name(), &f, params, label.empty() ? f.name() : label, {}, max_size};
  if (params != "tuned") {
    try {
      k.params = format_params(f, parse_params(f, params));
    } catch (const UsageError& err) {
      k.invalid = err.what();
    }
  }
  e.kernels.push_back(std::move(k));
}

void parse_kernel(Experiment& e, const json& entry, const std::string& where) {
  if (entry.is_string()) {
    auto name = entry.get<std::string>();
    if (kBaselines.count(name)) {
      e.kernels.push_back({name, nullptr, "", name, {}, 0});
      return;
    }
    if (auto* f = find_family(name)) return add_family_point(e, *f, "", "", 0);
    bad(where, "unknown kernel '" + name + "'");
  }
  if (!entry.is_object()) bad(where, "a kernel is a name or an object");
  static const std::set<std::string> known = {"kernel", "family", "params", "grid", "where", "space", "label", "max_size"};
  for (auto& [k, v] : entry.items())
    if (!known.count(k)) bad(where, "unknown field '" + k + "'");
  int64_t max_size = entry.value("max_size", int64_t(0));
  std::string label = entry.value("label", std::string());
  if (entry.contains("kernel")) {
    auto name = entry["kernel"].get<std::string>();
    if (!kBaselines.count(name)) bad(where, "'kernel' names a baseline (cublas, cublas-tf32, openblas, gemmlab); use 'family'");
    e.kernels.push_back({name, nullptr, "", label.empty() ? name : label, {}, max_size});
    return;
  }
  if (!entry.contains("family")) bad(where, "needs 'family' or 'kernel'");
  auto name = entry["family"].get<std::string>();
  auto* f = find_family(name);
  if (!f) bad(where, "unknown family '" + name + "'");
  if (f->op() != e.op) bad(where, name + " is a " + to_string(f->op()) + " family; this experiment is " + to_string(e.op));
  if (entry.contains("space")) {
    if (entry["space"] != "search") bad(where, "'space' can only be \"search\" (the family's search space)");
    for (auto& p : f->search_space()) add_family_point(e, *f, p, label, max_size);
    return;
  }
  if (!entry.contains("grid")) {
    for (auto& p : entry.contains("params") ? strings(entry["params"], where + ".params") : std::vector<std::string>{""})
      add_family_point(e, *f, p, label, max_size);
    return;
  }
  if (!entry.contains("params") || !entry["params"].is_string())
    bad(where, "a grid needs 'params', a template such as \"block={bx}x{by}\"");
  auto templ = entry["params"].get<std::string>();
  auto rules = entry.contains("where") ? strings(entry["where"], where + ".where") : std::vector<std::string>{};
  std::set<std::string> seen;
  for (auto& point : expand_grid(entry["grid"], where + ".grid")) {
    auto ints = integers(point);
    bool keep = true;
    for (auto& rule : rules) keep = keep && eval_expression(rule, ints) != 0;
    if (!keep) continue;
    auto params = fill_template(templ, point);
    if (!seen.insert(params).second) continue;
    add_family_point(e, *f, params, label.empty() ? "" : fill_template(label, point), max_size);
  }
}

std::vector<Problem> parse_problems(const json& spec, Op op) {
  if (!spec.contains("sizes")) bad("sizes", "missing: the problem sizes");
  auto layouts = strings(spec.value("layouts", json("row")), "layouts");
  auto trans_a = strings(spec.value("trans_a", json("n")), "trans_a");
  auto trans_b = strings(spec.value("trans_b", json("n")), "trans_b");
  float alpha = spec.value("alpha", 1.0f), beta = spec.value("beta", 0.0f);
  std::vector<Problem> out;
  for (auto& size : values_of(spec["sizes"], "sizes")) {
    std::vector<int64_t> shape;
    try {
      shape = parse_shape(size.is_string() ? size.get<std::string>() : std::to_string(size.get<long long>()), op);
    } catch (const UsageError& err) {
      bad("sizes", err.what());
    }
    for (auto& l : layouts)
      for (auto& ta : trans_a)
        for (auto& tb : trans_b) {
          if (op == Op::gemv && tb != "n") bad("trans_b", "gemv has no trans_b");
          Problem p = problem_of_shape(op, shape, parse_layout(l), parse_trans(ta), parse_trans(tb));
          p.alpha = alpha;
          p.beta = beta;
          out.push_back(normalized(p));
        }
  }
  return out;
}

TimingOptions parse_timing(const json& t) {
  TimingOptions o;
  if (t.is_null()) return o;
  if (!t.is_object()) bad("timing", "expected an object");
  for (auto& [k, v] : t.items()) {
    if (k == "mode") o.mode = parse_cache_mode(v.get<std::string>());
    else if (k == "min_samples") o.min_samples = v.get<int>();
    else if (k == "max_samples") o.max_samples = v.get<int>();
    else if (k == "max_time") o.max_time_s = v.get<double>();
    else if (k == "min_time") o.min_time_s = v.get<double>();
    else bad("timing", "unknown field '" + k + "' (mode, min_samples, max_samples, min_time, max_time)");
  }
  if (o.min_samples < 1 || o.max_time_s <= 0) bad("timing", "min_samples and max_time must be positive");
  o.max_samples = std::max(o.max_samples, o.min_samples);
  return o;
}

}  // namespace

long long eval_expression(const std::string& text, const std::map<std::string, long long>& vars) {
  return Parser(text, vars).parse();
}

std::string fill_template(const std::string& templ, const GridPoint& point) {
  std::string out;
  auto ints = integers(point);
  for (size_t i = 0; i < templ.size();) {
    if (templ[i] != '{') {
      out += templ[i++];
      continue;
    }
    auto close = templ.find('}', i);
    if (close == std::string::npos) throw UsageError("template '" + templ + "': '{' without '}'");
    auto expr = templ.substr(i + 1, close - i - 1);
    auto it = point.find(expr);
    if (it != point.end() && std::holds_alternative<std::string>(it->second))
      out += std::get<std::string>(it->second);
    else
      out += std::to_string(eval_expression(expr, ints));
    i = close + 1;
  }
  return out;
}

Experiment parse_experiment(const json& spec, const std::string& name) {
  if (!spec.is_object()) throw UsageError("an experiment is a JSON object");
  static const std::set<std::string> known = {"name", "title", "description", "op", "sizes", "layouts", "trans_a",
                                              "trans_b", "alpha", "beta", "distribution", "seed", "timing", "kernels",
                                              "averaging", "table", "plots", "quick"};
  for (auto& [k, v] : spec.items())
    if (!known.count(k)) bad(k, "unknown field");
  Experiment e;
  try {
    e.spec = spec;
    e.name = spec.value("name", name);
    e.title = spec.value("title", e.name);
    e.description = spec.value("description", std::string());
    e.op = parse_op(spec.value("op", std::string("gemm")));
    e.dist = parse_distribution(spec.value("distribution", std::string("uniform")));
    e.seed = spec.value("seed", uint64_t(1));
    e.timing = parse_timing(spec.value("timing", json()));
    if (spec.contains("averaging")) e.averaging = parse_averaging_shape(spec["averaging"].get<std::string>());
    if (spec.contains("sizes")) e.problems = parse_problems(spec, e.op);
    auto kernels = spec.value("kernels", json::array());
    if (!kernels.is_array()) bad("kernels", "expected a list");
    for (size_t i = 0; i < kernels.size(); ++i) parse_kernel(e, kernels[i], "kernels[" + std::to_string(i) + "]");
  } catch (const json::exception& err) {
    // A field of the wrong type: nlohmann's message names the type it wanted.
    throw UsageError(std::string("wrong type: ") + err.what());
  }
  if (e.problems.empty() && !e.averaging) bad("sizes", "the experiment has no problems (sizes) and no averaging");
  if (!e.problems.empty() && e.kernels.empty()) bad("kernels", "the experiment names no kernels");
  return e;
}

Experiment load_experiment(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) throw UsageError("cannot read experiment " + file.string());
  json spec;
  try {
    spec = json::parse(*text);
  } catch (const json::parse_error& err) {
    throw UsageError(file.string() + " is not valid JSON: " + err.what());
  }
  try {
    return parse_experiment(spec, file.stem().string());
  } catch (const UsageError& err) {
    throw UsageError(file.string() + ": " + err.what());
  }
}

std::vector<SweepPoint> sweep_points(const Experiment& e) {
  std::vector<SweepPoint> out;
  if (e.averaging) out.push_back({-1, -1, "averaging"});
  // cuBLAS SGEMM is the reference of every ratio: each problem measures it first, named or not.
  auto cublas = std::find_if(e.kernels.begin(), e.kernels.end(), [](auto& k) { return k.kernel == "cublas"; });
  std::set<std::string> seen;
  for (int pi = 0; pi < int(e.problems.size()); ++pi) {
    const Problem& p = e.problems[pi];
    auto add = [&](int ki, const std::string& kernel, const std::string& params) {
      auto key = kernel + (params.empty() ? "" : " " + params) + " @ " + describe(p) + " lda=" + std::to_string(p.lda);
      if (seen.insert(key).second) out.push_back({pi, ki, key});
    };
    add(cublas == e.kernels.end() ? -1 : int(cublas - e.kernels.begin()), "cublas", "");
    for (int ki = 0; ki < int(e.kernels.size()); ++ki) {
      auto& k = e.kernels[ki];
      if (k.max_size && std::max({p.m, p.n, p.k}) > k.max_size) continue;
      add(ki, k.kernel, k.invalid.empty() ? k.params : k.params + "#invalid");
    }
  }
  return out;
}

}  // namespace gemmlab
