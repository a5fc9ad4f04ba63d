#include "kernels/family.hpp"

#include <algorithm>
#include <sstream>

#include "gemmlab/error.hpp"

namespace gemmlab {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep)) out.push_back(cur);
  return out;
}

std::string known_names(const KernelFamily& f) {
  std::string s;
  for (auto& p : f.params()) s += (s.empty() ? "" : ", ") + p.name;
  return s.empty() ? "none" : s;
}

std::vector<int> parse_value(const KernelFamily& f, const ParamSpec& spec, const std::string& text) {
  if (!spec.choices.empty()) {
    auto it = std::find(spec.choices.begin(), spec.choices.end(), text);
    if (it == spec.choices.end()) {
      std::string all;
      for (auto& c : spec.choices) all += (all.empty() ? "" : ", ") + c;
      throw UsageError(f.name() + ": parameter " + spec.name + " = '" + text + "' is not one of " + all);
    }
    return {int(it - spec.choices.begin())};
  }
  std::vector<int> v;
  for (auto& part : split(text, 'x')) {
    size_t used = 0;
    int x = 0;
    try {
      x = std::stoi(part, &used);
    } catch (...) {
      used = 0;
    }
    if (part.empty() || used != part.size())
      throw UsageError(f.name() + ": parameter " + spec.name + " = '" + text + "' is not a list of integers like 16x16");
    v.push_back(x);
  }
  if (v.size() != spec.defaults.size())
    throw UsageError(f.name() + ": parameter " + spec.name + " takes " + std::to_string(spec.defaults.size()) +
                     " value(s), got '" + text + "'");
  for (int x : v)
    if (x < spec.min || x > spec.max)
      throw UsageError(f.name() + ": parameter " + spec.name + " = " + text + " is outside " +
                       std::to_string(spec.min) + ".." + std::to_string(spec.max));
  return v;
}

}  // namespace

ParamValues parse_params(const KernelFamily& f, const std::string& text) {
  ParamValues v;
  auto specs = f.params();
  for (auto& s : specs) v[s.name] = s.defaults;
  for (auto& item : split(text, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos) throw UsageError(f.name() + ": parameter '" + item + "' needs the form name=value");
    std::string key = item.substr(0, eq);
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key; });
    if (it == specs.end())
      throw UsageError(f.name() + " has no parameter '" + key + "' (it has: " + known_names(f) + ")");
    v[key] = parse_value(f, *it, item.substr(eq + 1));
  }
  auto broken = f.violations(v);
  if (!broken.empty()) throw UsageError(f.name() + " " + format_params(f, v) + ": " + broken.front());
  return v;
}

std::string format_value(const ParamSpec& spec, const std::vector<int>& v) {
  if (!spec.choices.empty()) return spec.choices.at(size_t(v.at(0)));
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

bool KernelFamily::fp64_accumulators(const ParamValues& v) const {
  auto it = v.find("accum");
  if (it == v.end()) return false;
  for (auto& spec : params())
    if (spec.name == "accum")
      return size_t(it->second[0]) < spec.choices.size() && spec.choices[it->second[0]].starts_with("fp64");
  return false;
}

std::string format_params(const KernelFamily& f, const ParamValues& v) {
  std::string s;
  for (auto& spec : f.params()) s += (s.empty() ? "" : ",") + spec.name + "=" + format_value(spec, v.at(spec.name));
  return s;
}

std::string format_changed_params(const KernelFamily& f, const ParamValues& v) {
  std::string s;
  for (auto& spec : f.params())
    if (v.at(spec.name) != spec.defaults)
      s += (s.empty() ? "" : ",") + spec.name + "=" + format_value(spec, v.at(spec.name));
  return s;
}

std::vector<std::string> product_space(const KernelFamily& f,
                                       const std::vector<std::pair<std::string, std::vector<std::string>>>& axes) {
  std::vector<std::string> points = {""};
  for (auto& [name, values] : axes) {
    std::vector<std::string> next;
    for (auto& p : points)
      for (auto& v : values) next.push_back(p + (p.empty() ? "" : ",") + name + "=" + v);
    points = std::move(next);
  }
  std::vector<std::string> valid;
  for (auto& p : points)
    if (accepts(f, p)) valid.push_back(p);
  return valid;
}

bool accepts(const KernelFamily& f, const std::string& text) {
  try {
    parse_params(f, text);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

std::vector<std::string> Variant::defines() const {
  return {"-DA_K_CONTIG=" + std::to_string(a_k_contig), "-DB_N_CONTIG=" + std::to_string(b_n_contig),
          "-DA_VEC=" + std::to_string(a_vec), "-DB_VEC=" + std::to_string(b_vec), "-DC_VEC=" + std::to_string(c_vec)};
}

std::string to_string(Ablation a) {
  switch (a) {
    case Ablation::none: return "none";
    case Ablation::no_store: return "nostore";
    case Ablation::no_load: return "noload";
    case Ablation::no_smem_store: return "nosmemstore";
  }
  return "none";
}

Ablation parse_ablation(const std::string& name) {
  for (auto a : {Ablation::none, Ablation::no_store, Ablation::no_load, Ablation::no_smem_store})
    if (to_string(a) == name) return a;
  throw UsageError("unknown ablation '" + name + "' (nostore, noload, nosmemstore)");
}

std::vector<std::string> compile_defines(Ablation a) {
  if (a == Ablation::none) return {};
  return {"-DABLATE=" + std::to_string(int(a))};
}

void check_ablation(const KernelFamily& f, const ParamValues& v, Ablation a) {
  if (a == Ablation::none) return;
  auto ok = f.ablations(v);
  if (std::find(ok.begin(), ok.end(), a) == ok.end())
    throw UsageError(f.name() + " " + format_params(f, v) + " has no ablation " + to_string(a));
}

std::vector<std::string> compile_defines(const KernelFamily& f, const ParamValues& v, const Variant& var) {
  auto defines = f.defines(v);
  if (f.uses_variant())
    for (auto& d : var.defines()) defines.push_back(d);
  return defines;
}

std::string shared_memory_violation(long long bytes) {
  if (bytes <= kMaxSharedPerBlock) return {};
  return "needs " + std::to_string((bytes + 1023) / 1024) + " KB of shared memory, over the " +
         std::to_string(kMaxSharedPerBlock / 1024) + " KB a block can have";
}

std::string register_violation(int estimate) {
  if (estimate <= kMaxRegisters) return {};
  return "needs about " + std::to_string(estimate) + " registers per thread, over 255";
}

}  // namespace gemmlab
