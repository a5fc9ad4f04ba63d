#include "cli/analysis.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "compile/compile.hpp"
#include "counters/counters.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"
#include "model/model.hpp"
#include "bench/profile.hpp"
#include "results/results.hpp"
#include "launch/launcher.hpp"

namespace gemmlab::cli {

namespace {

using ojson = nlohmann::ordered_json;

// Ceilings for the metadata: the cached ones, never a fresh measurement (it would take seconds).
Ceilings known_ceilings(const DeviceInfo& dev) { return cached_ceilings(dev).value_or(Ceilings{}); }

void write_json(const std::string& path, const ojson& j) {
  if (!path.empty()) write_file_atomic(path, j.dump(1) + "\n");
}

// Verifies the runner on the session; prints and returns false when it fails.
bool verified(GemmRunner& r, ProblemSession& s) {
  auto v = s.verify(r);
  if (!v.passed) std::fprintf(stderr, "gemmlab: %s failed verification: %s\n", r.name().c_str(), v.first_failure.c_str());
  return v.passed;
}

std::string runner_label(const KernelSpec& k) {
  return k.family ? k.name + " " + format_params(*k.family, k.params) : k.name;
}

std::optional<double> metric(const KernelProfile* kp, const std::string& key) {
  if (!kp || !kp->metrics.contains(key) || !kp->metrics[key].is_number()) return std::nullopt;
  return kp->metrics[key].get<double>();
}

}  // namespace

int list_metrics() {
  if (device_count() == 0) throw NoDeviceError();
  for (auto& m : available_metrics()) std::printf("%s\n", m.c_str());
  std::printf("\ngemmlab metrics (key, nvprof name, counters):\n");
  for (auto& d : metric_defs()) {
    std::string counters;
    for (auto& c : d.counters) counters += (counters.empty() ? "" : " ") + c;
    std::printf("  %-28s %-40s %s\n", d.key.c_str(), d.nvprof.c_str(), counters.c_str());
  }
  std::printf("sets:\n");
  for (auto& s : metric_sets()) std::printf("  %-10s %s\n", s.name.c_str(), s.help.c_str());
  return kExitOk;
}

int run_profile(const Target& t, const std::string& metrics, const std::string& baseline, const std::string& json_path) {
  auto t0 = std::chrono::steady_clock::now();
  auto defs = parse_metrics(metrics);
  if (baseline != "cublas" && baseline != "none") throw UsageError("--baseline must be cublas or none");
  if (device_count() == 0) throw NoDeviceError();
  auto dev = query_device(0);
  auto ours = make_runner(t.kernel);
  if (auto why = ours->unsupported(t.problem); !why.empty()) throw UsageError(ours->name() + ": " + why);
  std::unique_ptr<GemmRunner> base;
  if (baseline == "cublas") base = make_cublas_runner(Precision::fp32);
  ProblemSession session(t.problem, t.dist, t.seed, nullptr);
  if (!verified(*ours, session) || (base && !verified(*base, session))) return kExitVerifyFailed;

  ojson out;
  out["metadata"] = run_metadata(dev, known_ceilings(dev), TimingOptions{}, t.dist, t.seed, t.command_line);
  out["problem"] = describe(t.problem);
  out["kernel"] = runner_label(t.kernel);
  std::printf("%s on %s, %s\n", runner_label(t.kernel).c_str(), dev.name.c_str(), describe(t.problem).c_str());
  try {
    auto a = profile_runner(*ours, session, defs);
    std::optional<KernelProfile> b;
    if (base) b = profile_runner(*base, session, defs);
    std::printf("ours: %s (%d kernel%s per call)%s%s\n", a.kernel.c_str(), a.kernels, a.kernels == 1 ? "" : "s",
                b ? "; baseline: cuBLAS " : "", b ? b->kernel.c_str() : "");
    print_comparison(std::cout, defs, a, b ? &*b : nullptr);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d passes per kernel; counters of ours read in %.2f s; the whole command took %.2f s\n", a.passes,
                a.seconds, elapsed);
    if (!a.unavailable.empty()) {
      std::string names;
      for (auto& n : a.unavailable) names += " " + n;
      std::printf("not on this GPU:%s\n", names.c_str());
    }
    out["ours"] = a.to_json();
    if (b) out["baseline"] = b->to_json();
    out["table"] = comparison_json(defs, a, b ? &*b : nullptr);
    out["seconds"] = elapsed;
  } catch (const CountersUnavailable& e) {
    // The static facts still tell something: what the compiler gave the kernel.
    std::printf("%s\nstatic data instead: %s\n", e.what(), ours->details().dump().c_str());
    out["counters_unavailable"] = e.what();
    out["static"] = ours->details();
  }
  write_json(json_path, out);
  return kExitOk;
}

int run_explain(const Target& t, bool measure, const std::string& json_path) {
  if (!t.kernel.family) throw UsageError("explain takes a kernel family (gemmlab kernels lists them), not " + t.kernel.name);
  const KernelFamily& f = *t.kernel.family;
  const auto& v = t.kernel.params;
  if (t.problem.op != f.op()) throw UsageError(f.name() + " is a " + to_string(f.op()) + " family; this is a " + to_string(t.problem.op) + " problem");
  if (auto why = f.unsupported(v, canonical(t.problem)); !why.empty()) throw UsageError(f.name() + ": " + why);
  const bool gpu = device_count() > 0;
  if (measure && !gpu) throw NoDeviceError();
  std::optional<DeviceInfo> dev;
  if (gpu) dev = query_device(0);
  const std::string arch = dev ? arch_name(dev->cc_major, dev->cc_minor, f.arch_specific()) : arch_name(9, 0, f.arch_specific());
  CompileRequest req{f.name(), f.source(), compile_defines(f, v, aligned_variant(canonical(t.problem))), arch};
  auto res = resources_from_log(compile_cubin(req).log, f.entry());
  if (res.registers < 0) res = resources_from_log(compile_cubin(req, false).log, f.entry());  // a built-in binary has no report
  const auto limits = dev ? DeviceLimits::of(*dev) : DeviceLimits::h100();
  const auto pred = predict(f, v, t.problem, limits, res);

  ojson out;
  out["kernel"] = runner_label(t.kernel);
  out["problem"] = describe(t.problem);
  out["device"] = limits.name;
  out["prediction"] = pred.to_json();
  std::printf("%s, %s, on %s (%s)\n", runner_label(t.kernel).c_str(), describe(t.problem).c_str(), limits.name.c_str(),
              arch.c_str());

  std::optional<KernelProfile> kp;
  std::string counters_why;
  std::vector<std::pair<std::string, double>> times;  // run, median ms
  if (measure) {
    out["metadata"] = run_metadata(*dev, known_ceilings(*dev), TimingOptions{}, t.dist, t.seed, t.command_line);
    ProblemSession session(t.problem, t.dist, t.seed, nullptr);
    auto full = make_family_runner(f, v);
    if (!verified(*full, session)) return kExitVerifyFailed;
    try {
      kp = profile_runner(*full, session,
                          parse_metrics("registers,global_load_inst,global_async_inst,global_store_inst,shared_load_inst,"
                                        "shared_store_inst,fp32_flops,dram_read_bytes,dram_write_bytes,achieved_occupancy"));
    } catch (const CountersUnavailable& e) {
      counters_why = e.what();
    }
    TimingOptions topts;
    DeviceTimer timer(*dev, topts);
    times.push_back({"full", session.time(*full, timer, topts).ms.median});
    for (auto a : f.ablations(v)) {
      auto r = make_family_runner(f, v, a);
      times.push_back({to_string(a), session.time(*r, timer, topts).ms.median});
    }
  }

  // Prediction beside measurement.
  struct Row {
    const char* name;
    double predicted;
    std::optional<double> measured;
  };
  auto dram = [&]() -> std::optional<double> {
    auto r = metric(kp ? &*kp : nullptr, "dram_read_bytes"), w = metric(kp ? &*kp : nullptr, "dram_write_bytes");
    if (r && w) return *r + *w;
    return std::nullopt;
  };
  const KernelProfile* k = kp ? &*kp : nullptr;
  const auto& c = pred.counts;
  std::vector<Row> rows = {
      {"global load inst (LDG)", c.global_load_inst, metric(k, "global_load_inst")},
      {"global async inst (LDGSTS)", c.global_async_inst, metric(k, "global_async_inst")},
      {"TMA tile loads", c.tma_load_inst, metric(k, "tma_load_inst")},
      {"global store inst", c.global_store_inst, metric(k, "global_store_inst")},
      {"shared load inst", c.shared_load_inst, metric(k, "shared_load_inst")},
      {"shared store inst", c.shared_store_inst, metric(k, "shared_store_inst")},
      {"FP32 FLOPs", pred.flops, metric(k, "fp32_flops")},
      {"DRAM bytes (compulsory)", pred.dram_bytes, dram()},
      {"registers per thread", double(pred.registers), metric(k, "registers")},
      {"occupancy % (theor./achieved)", 100 * pred.occupancy, metric(k, "achieved_occupancy")},
  };
  std::printf("%-32s %16s %16s %9s\n", "", "predicted", measure ? "measured" : "", measure ? "diff" : "");
  auto table = ojson::array();
  for (auto& r : rows) {
    if (r.predicted < 0 && !r.measured) continue;
    char pv[32], mv[32] = "", dv[32] = "";
    std::snprintf(pv, sizeof pv, r.predicted < 0 ? "n/a" : "%.6g", r.predicted);
    if (r.measured) std::snprintf(mv, sizeof mv, "%.6g", *r.measured);
    std::optional<double> diff;
    if (r.measured && r.predicted >= 0 && *r.measured != 0) {
      diff = 100 * (r.predicted - *r.measured) / *r.measured;
      std::snprintf(dv, sizeof dv, "%+.2f%%", *diff);
    }
    std::printf("%-32s %16s %16s %9s\n", r.name, pv, mv, dv);
    table.push_back({{"quantity", r.name},
                     {"predicted", r.predicted < 0 ? ojson(nullptr) : ojson(r.predicted)},
                     {"measured", r.measured ? ojson(*r.measured) : ojson(nullptr)},
                     {"diff_pct", diff ? ojson(*diff) : ojson(nullptr)}});
  }
  out["table"] = table;
  std::printf("intensity (FLOP/byte): DRAM %.1f, global requests %.1f, shared %.1f; %.0f blocks of %d threads, "
              "%lld B shared each; %d per SM (limited by %s), %.2f waves\n",
              pred.intensity_dram, pred.intensity_global, pred.intensity_shared, pred.blocks, pred.threads,
              pred.shared_per_block, pred.blocks_per_sm, pred.occupancy_limit.c_str(), pred.waves);
  for (auto& a : c.assumptions) std::printf("assumed: %s\n", a.c_str());
  if (!counters_why.empty()) {
    std::printf("%s\n", counters_why.c_str());
    out["counters_unavailable"] = counters_why;
  }
  if (!times.empty()) {
    // An ablated run leaves one stage out: the time it saves is that stage's share, overlap aside.
    std::printf("ablations (these runs do NOT compute the product):\n");
    auto abl = ojson::array();
    for (auto& [name, ms] : times) {
      double share = 100 * (times[0].second - ms) / times[0].second;
      if (name == "full") std::printf("  %-12s %9.4f ms\n", name.c_str(), ms);
      else std::printf("  %-12s %9.4f ms  (the stage left out costs %.1f%% of the full time)\n", name.c_str(), ms, share);
      abl.push_back({{"run", name}, {"median_ms", ms}, {"saved_pct", name == "full" ? ojson(nullptr) : ojson(share)}});
    }
    out["ablations"] = abl;
  }
  if (kp) out["counters"] = kp->to_json();
  write_json(json_path, out);
  return kExitOk;
}

int run_ceilings(bool remeasure) {
  if (device_count() == 0) throw NoDeviceError();
  auto dev = query_device(0);
  auto c = ceilings(dev, remeasure);
  std::printf("%s: FFMA %.1f TFLOP/s (peak %.1f), DRAM copy %.0f GB/s (peak %.0f), L2 read %.0f GB/s, "
              "shared-memory read %.0f GB/s [%s]\n",
              dev.name.c_str(), c.ffma_tflops, dev.peak_fp32_tflops(), c.copy_gbps, dev.peak_dram_gbps(), c.l2_gbps,
              c.smem_gbps, c.measured_at.c_str());
  return kExitOk;
}

}  // namespace gemmlab::cli
