// gemmlab profile: hardware counters of one configuration beside cuBLAS's (seed
// 000's Table I).
#include "bench/profile.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "common/files.hpp"
#include "counters/counters.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "results/results.hpp"

namespace gemmlab::cli {

namespace {

using ojson = nlohmann::ordered_json;

// The counters this GPU offers, then gemmlab's metrics and sets.
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

// Counters of the kernel and of cuBLAS (baseline "cublas", or "none").
int run_profile(const Target& t, const std::string& metrics, const std::string& baseline,
                const std::string& json_path) {
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

}  // namespace

Command add_profile(CLI::App& app) {
  struct Args {
    TargetArgs target;
    std::string metrics = "seed000", baseline = "cublas", json;
    bool list_metrics = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("profile", "hardware counters of one configuration beside cuBLAS's (seed 000's Table I)");
  cmd->add_flag("--list-metrics", args->list_metrics, "list the counters this GPU offers and gemmlab's metric sets");
  add_target(cmd, args->target);
  cmd->add_option("--metrics", args->metrics, "metric sets, gemmlab metrics or Nsight Compute names")
      ->default_val("seed000");
  cmd->add_option("--baseline", args->baseline, "cublas or none")->default_val("cublas");
  cmd->add_option("--json", args->json, "write the comparison as JSON");
  return {cmd, [args](const Context& ctx) -> int {
            if (args->list_metrics) return list_metrics();
            check_output_path(args->json);
            return run_profile(target_of(args->target, ctx.command_line), args->metrics, args->baseline, args->json);
          }};
}

}  // namespace gemmlab::cli
