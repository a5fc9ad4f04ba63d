// gemmlab explain: the analytic model of one configuration, beside its counters
// and ablations.
#include <cstdio>
#include <iostream>
#include <memory>

#include "bench/profile.hpp"
#include "cli/command.hpp"
#include "cli/options.hpp"
#include "common/files.hpp"
#include "compile/compile.hpp"
#include "counters/counters.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "launch/launcher.hpp"
#include "model/model.hpp"
#include "results/results.hpp"

namespace gemmlab::cli {

namespace {

using ojson = nlohmann::ordered_json;

std::optional<double> metric(const KernelProfile* kp, const std::string& key) {
  if (!kp || !kp->metrics.contains(key) || !kp->metrics[key].is_number()) return std::nullopt;
  return kp->metrics[key].get<double>();
}

// The prediction (no GPU needed); with `measure`, the kernel's counters, time
// and ablations beside it.
int run_explain(const Target& t, bool measure, const std::string& json_path) {
  if (!t.kernel.family)
    throw UsageError("explain takes a kernel family (gemmlab kernels lists them), not " + t.kernel.name);
  const KernelFamily& f = *t.kernel.family;
  const auto& v = t.kernel.params;
  if (t.problem.op != f.op())
    throw UsageError(f.name() + " is a " + to_string(f.op()) + " family; this is a " + to_string(t.problem.op) +
                     " problem");
  if (auto why = f.unsupported(v, family_problem(f, v, t.problem)); !why.empty()) throw UsageError(f.name() + ": " + why);
  const bool gpu = device_count() > 0;
  if (measure && !gpu) throw NoDeviceError();
  std::optional<DeviceInfo> dev;
  if (gpu) dev = query_device(0);
  const std::string arch =
      dev ? arch_name(dev->cc_major, dev->cc_minor, f.arch_specific()) : arch_name(9, 0, f.arch_specific());
  CompileRequest req{f.name(), f.source(), compile_defines(f, v, aligned_variant(f, v, t.problem)), arch};
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
      kp = profile_runner(
          *full, session,
          parse_metrics("registers,global_load_inst,global_async_inst,global_store_inst,shared_load_inst,shared_store_"
                        "inst,fp32_flops,dram_read_bytes,dram_write_bytes,achieved_occupancy"));
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
  std::printf(
      "intensity (FLOP/byte): DRAM %.1f, global requests %.1f, shared %.1f; %.0f blocks of %d threads, %lld B shared "
      "each; %d per SM (limited by %s), %.2f waves\n",
      pred.intensity_dram, pred.intensity_global, pred.intensity_shared, pred.blocks, pred.threads,
      pred.shared_per_block, pred.blocks_per_sm, pred.occupancy_limit.c_str(), pred.waves);
  for (auto& a : c.assumptions) std::printf("assumed: %s\n", a.c_str());
  if (!counters_why.empty()) {
    std::printf("%s\n", counters_why.c_str());
    out["counters_unavailable"] = counters_why;
  }
  if (!times.empty()) {
    // An ablated run leaves one stage out: the time it saves is that stage's
    // share, overlap aside.
    std::printf("ablations (these runs do NOT compute the product):\n");
    auto abl = ojson::array();
    for (auto& [name, ms] : times) {
      double share = 100 * (times[0].second - ms) / times[0].second;
      if (name == "full")
        std::printf("  %-12s %9.4f ms\n", name.c_str(), ms);
      else
        std::printf("  %-12s %9.4f ms  (the stage left out costs %.1f%% of the full time)\n", name.c_str(), ms, share);
      abl.push_back({{"run", name}, {"median_ms", ms}, {"saved_pct", name == "full" ? ojson(nullptr) : ojson(share)}});
    }
    out["ablations"] = abl;
  }
  if (kp) out["counters"] = kp->to_json();
  write_json(json_path, out);
  return kExitOk;
}

}  // namespace

Command add_explain(CLI::App& app) {
  struct Args {
    TargetArgs target;
    bool measure = false;
    std::string json;
  };
  auto args = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("explain", "the analytic model of one configuration, beside its counters and ablations");
  add_target(cmd, args->target);
  cmd->add_flag("--measure", args->measure, "also run it on GPU 0: counters, time, and the time of each ablation");
  cmd->add_option("--json", args->json, "write prediction and measurement as JSON");
  return {cmd, [args](const Context& ctx) -> int {
            check_output_path(args->json);
            return run_explain(target_of(args->target, ctx.command_line), args->measure, args->json);
          }};
}

}  // namespace gemmlab::cli
