#include "gemmlab/family.hpp"

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
  if (!broken.empty()) throw UsageError(f.name() + " " + format_params(v) + ": " + broken.front());
  return v;
}

std::string format_params(const ParamValues& v) {
  std::string s;
  for (auto& [name, vals] : v) {
    s += (s.empty() ? "" : ",") + name + "=";
    for (size_t i = 0; i < vals.size(); ++i) s += (i ? "x" : "") + std::to_string(vals[i]);
  }
  return s;
}

}  // namespace gemmlab
