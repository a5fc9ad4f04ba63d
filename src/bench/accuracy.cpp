#include "bench/accuracy.hpp"

#include <cstdio>

#include "device/device.hpp"

namespace gemmlab {

namespace {

// The table's name of a kernel: a family's name with the parameters that differ from its defaults
// (several points of one family run side by side).
std::string label(const KernelSpec& k) {
  if (!k.family) return k.name;
  const std::string changed = format_changed_params(*k.family, k.params);
  return changed.empty() ? k.name : k.name + ":" + changed;
}

}  // namespace

nlohmann::ordered_json run_accuracy(const AccuracyOptions& o, std::ostream& table) {
  auto dev = query_device(0);
  std::vector<KernelSpec> specs = {KernelSpec{"cublas", nullptr, {}}};
  for (auto& k : o.kernels)
    if (k.name != "cublas") specs.push_back(k);
  std::vector<std::unique_ptr<GemmRunner>> runners;
  std::vector<std::string> labels;
  for (auto& k : specs) {
    runners.push_back(make_runner(k));
    labels.push_back(label(k));
  }

  nlohmann::ordered_json out;
  out["metadata"] = run_metadata(dev, cached_ceilings(dev).value_or(Ceilings{}), TimingOptions{}, o.dists.front(),
                                 o.seed, o.command_line);
  out["metadata"]["study"] = "accuracy: ||C - ref||_F / ||ref||_F and max |C - ref| / |ref| against float64";
  auto dists = nlohmann::json::array();
  for (auto d : o.dists) dists.push_back(to_string(d));
  const int64_t m = o.m ? o.m : o.mn, n = o.n ? o.n : o.mn;
  out["metadata"]["inputs"] = {{"distributions", dists}, {"seed", o.seed}, {"m", m}, {"n", n}};
  auto rows = nlohmann::ordered_json::array();
  char line[256];
  std::snprintf(line, sizeof line, "%-9s %6s  %-44s %-5s %12s %12s %12s %9s\n", "inputs", "K", "kernel", "prec",
                "rel_fro", "max_rel", "max_abs", "abs/cublas");
  table << line;
  for (auto d : o.dists)
    for (int64_t k : o.ks) {
      Problem p = normalized(problem_of_shape(Op::gemm, {m, n, k}, Layout::row_major, Trans::no, Trans::no));
      ProblemSession session(p, d, o.seed * 7919 + uint64_t(k), nullptr);
      double cublas_fro = 0, cublas_abs = 0;
      for (size_t i = 0; i < runners.size(); ++i) {
        auto& r = runners[i];
        nlohmann::ordered_json row = {{"dist", to_string(d)}, {"m", p.m}, {"n", p.n}, {"k", p.k},
                                      {"kernel", r->name()}, {"precision", to_string(r->precision())}};
        if (auto why = r->unsupported(p); !why.empty()) {
          row["status"] = "unsupported: " + why;
          rows.push_back(row);
          continue;
        }
        auto v = session.verify(*r);
        if (r.get() == runners.front().get()) cublas_fro = v.rel_norm_err, cublas_abs = v.max_abs_err;
        row["status"] = v.passed ? "ok" : "failed";
        row["rel_fro"] = v.rel_norm_err;
        row["max_rel"] = v.max_rel_err;
        row["fro_x_cublas"] = cublas_fro > 0 ? v.rel_norm_err / cublas_fro : 0.0;
        row["max_abs"] = v.max_abs_err;  // the tensor_fp32 contract's measure: error / (|A||B|)_ij
        row["abs_x_cublas"] = cublas_abs > 0 ? v.max_abs_err / cublas_abs : 0.0;
        row["label"] = labels[i];
        row["details"] = r->details();
        std::snprintf(line, sizeof line, "%-9s %6lld  %-44s %-5s %12.3e %12.3e %12.3e %9.3f%s\n", to_string(d).c_str(),
                      (long long)k, labels[i].substr(0, 44).c_str(), to_string(r->precision()).c_str(),
                      v.rel_norm_err, v.max_rel_err, v.max_abs_err, row["abs_x_cublas"].get<double>(),
                      v.passed ? "" : "  FAILED");
        table << line;
        rows.push_back(row);
      }
    }
  out["results"] = rows;
  return out;
}

}  // namespace gemmlab
