// gemmlab stress: randomized library calls from many host threads, every result checked.
#include <cstdio>
#include <iostream>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "device/device.hpp"
#include "gemmlab/gemmlab.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"
#include "results/results.hpp"
#include "stress/stress.hpp"

namespace gemmlab::cli {

namespace {

struct StressArgs {
  StressOptions o;
  std::vector<std::string> modes, shapes;
  std::string json;
  double workspace_limit_mib = -1;  // below zero: the library's default
};

}  // namespace

Command add_stress(CLI::App& app) {
  auto* cmd = app.add_subcommand("stress", "randomized library calls from many host threads over shared and own "
                                           "streams, each result checked against cuBLAS on the same data");
  auto args = std::make_shared<StressArgs>();
  auto& o = args->o;
  cmd->add_option("--threads", o.threads, "host threads")->default_val(8);
  cmd->add_option("--streams", o.streams, "streams: the first is shared by threads - streams + 1 threads, each other "
                                          "has one thread")->default_val(4);
  cmd->add_option("--seconds", o.seconds, "run this long (0: no time limit)")->default_val(60);
  cmd->add_option("--calls", o.calls, "stop after this many calls (0: no limit)")->default_val(0);
  cmd->add_option("--seed", o.seed, "random seed of the cases and data")->default_val(1);
  cmd->add_option("--fresh", o.fresh_percent, "percent of calls with a shape not seen before")->default_val(30);
  cmd->add_option("--graphs", o.graph_percent, "percent of calls made inside a CUDA graph capture")->default_val(5);
  cmd->add_option("--mode", args->modes, "modes, comma-separated: strict_fp32, tensor_fp32, tf32 (default: all)")
      ->delimiter(',');
  cmd->add_option("--shape", args->shapes, "only these GEMM shapes, MxNxK, row-major NN (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--max-mnk", o.max_mnk, "the largest M·N·K drawn")->default_val(4e9);
  cmd->add_flag("--host-inputs", o.host_inputs, "make inputs on the host and copy them from pageable memory");
  cmd->add_flag("--stream-per-call", o.stream_per_call,
                "each call on a stream made for it and destroyed after it (the threads share none)");
  cmd->add_option("--workspace-limit", args->workspace_limit_mib,
                  "the library's workspace limit in MiB for the run (0: every call on its plan without workspace; "
                  "default: the library's, an eighth of device memory)")
      ->check(non_negative());
  cmd->add_option("--json", args->json, "write the results (metadata, counts, every mismatch) as JSON");
  return {cmd, [args](const Context& ctx) -> int {
            auto& o = args->o;
            o.command_line = ctx.command_line;
            for (auto& m : args->modes) o.modes.push_back(parse_math_mode(m));
            for (auto& s : args->shapes) {
              auto d = parse_shape(s, Op::gemm);
              if (d.size() == 1) d = {d[0], d[0], d[0]};
              o.shapes.push_back(normalized(problem_of_shape(Op::gemm, d, Layout::row_major, Trans::no, Trans::no)));
            }
            check_stress_options(o);
            if (!args->json.empty()) check_output_path(args->json);
            if (args->workspace_limit_mib >= 0) {
              if (device_count() == 0) throw NoDeviceError();
              set_workspace_limit(size_t(args->workspace_limit_mib * 1048576.0));
            }
            auto r = run_stress(o, &std::cout);
            for (auto& m : r.mismatches)
              std::printf("MISMATCH thread %d stream %d call %lld: %s; plan %s; rel %.3g, max %.3g, non-finite %lld; %s\n",
                          m.thread, m.stream, (long long)m.index, m.call.describe().c_str(), m.plan.c_str(), m.rel_err,
                          m.max_diff, (long long)m.non_finite, m.verdict.c_str());
            for (auto& e : r.errors) std::printf("EXCEPTION %s\n", e.c_str());
            std::printf("stress: %lld calls in %.1f s (%.0f/s), %lld verified, %zu mismatches, %lld exceptions; "
                        "library workspace peak %.1f MiB (limit %.0f MiB)\n",
                        (long long)r.calls, r.seconds, r.seconds > 0 ? r.calls / r.seconds : 0.0,
                        (long long)r.verified, r.mismatches.size(), (long long)r.exceptions,
                        r.workspace_peak_bytes / 1048576.0, workspace_limit() / 1048576.0);
            std::string routes;
            for (auto& [route, n] : r.by_route.items()) routes += (routes.empty() ? "" : ", ") + route + " " + n.dump();
            std::printf("routes: %s\n", routes.c_str());
            if (!args->json.empty()) write_file_atomic(args->json, stress_json(o, r).dump(1) + "\n");
            if (!r.mismatches.empty()) return kExitVerifyFailed;
            return r.exceptions ? kExitRuntime : kExitOk;
          }};
}

}  // namespace gemmlab::cli
