#include "cli/options.hpp"

#include <cstdio>
#include <sstream>

#include "common/files.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "timing/ceilings.hpp"

namespace gemmlab::cli {

std::vector<int64_t> size_option(const std::string& text, Op op) {
  try {
    return parse_shape(text, op);
  } catch (const UsageError& e) {
    throw UsageError(std::string("--size: ") + e.what());
  }
}

namespace {
CLI::Validator sign_check(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "'" + text + "' is not a number";
        if (v > 0 || (zero_allowed && v == 0)) return {};
        return (zero_allowed ? "must be 0 or more, got " : "must be positive, got ") + text;
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}
}  // namespace

const CLI::Validator& positive() {
  static const CLI::Validator v = sign_check(false);
  return v;
}
const CLI::Validator& non_negative() {
  static const CLI::Validator v = sign_check(true);
  return v;
}

std::vector<std::string> split_list(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (auto& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) out.push_back(item);
  }
  return out;
}

void add_target(CLI::App* c, TargetArgs& t) {
  c->add_option("--kernel", t.kernel, "a kernel family (or cublas for profile)");
  c->add_option("--param", t.params, "the family's parameter point, e.g. block=16x16,vpt=8x8")->delimiter('\0');
  c->add_option("--size", t.size, "S or MxNxK (gemv: S or RxC)");
  c->add_option("--op", t.op, "gemm or gemv")->default_val("gemm");
  c->add_option("--layout", t.layout, "row or col")->default_val("row");
  c->add_option("--trans-a,--trans", t.trans_a, "n or t")->default_val("n");
  c->add_option("--trans-b", t.trans_b, "n or t")->default_val("n");
  c->add_option("--dist", t.dist, "input distribution")->default_val("uniform");
  c->add_option("--seed", t.seed, "random seed")->default_val(1);
  c->add_option("--alpha", t.alpha, "alpha")->default_val(1.0f);
  c->add_option("--beta", t.beta, "beta")->default_val(0.0f);
}

Target target_of(const TargetArgs& a, const std::string& command_line) {
  if (a.kernel.empty() || a.size.empty()) throw UsageError("give --kernel and --size");
  Target t;
  Op op = parse_op(a.op);
  auto specs = resolve_kernels({a.kernel}, a.params);
  if (specs.size() != 1) throw UsageError("give one parameter point");
  t.kernel = specs.front();
  auto shape = size_option(a.size, op);
  Problem p = problem_of_shape(op, shape, parse_layout(a.layout), parse_trans(a.trans_a), parse_trans(a.trans_b));
  p.alpha = a.alpha;
  p.beta = a.beta;
  t.problem = normalized(p);
  t.dist = parse_distribution(a.dist);
  t.seed = a.seed;
  t.command_line = command_line;
  return t;
}

Ceilings known_ceilings(const DeviceInfo& dev) { return cached_ceilings(dev).value_or(Ceilings{}); }

void write_json(const std::string& path, const nlohmann::ordered_json& j) {
  if (!path.empty()) write_file_atomic(path, j.dump(1) + "\n");
}

bool verified(GemmRunner& r, ProblemSession& s) {
  auto v = s.verify(r);
  if (!v.passed)
    std::fprintf(stderr, "gemmlab: %s failed verification: %s\n", r.name().c_str(), v.first_failure.c_str());
  return v.passed;
}

std::string runner_label(const KernelSpec& k) {
  return k.family ? k.name + " " + format_params(*k.family, k.params) : k.name;
}

}  // namespace gemmlab::cli
