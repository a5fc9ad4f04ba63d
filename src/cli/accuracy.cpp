// gemmlab accuracy: error against float64 over K and input distributions, every
// kernel in one run.
#include "bench/accuracy.hpp"

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "common/files.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab::cli {

namespace {

// A --k value: a positive integer, else one line naming it.
long long k_option(const std::string& k) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(k, &used);
  } catch (const std::logic_error&) {
  }
  if (used != k.size() || v < 1) throw UsageError("--k: '" + k + "' is not a positive integer");
  return v;
}

}  // namespace

Command add_accuracy(CLI::App& app) {
  struct Args {
    std::vector<std::string> kernels, params, ks, dists;
    int64_t mn = 256, m = 0, n = 0;
    std::string json;
  };
  auto args = std::make_shared<Args>();
  auto& a = *args;
  auto* cmd = app.add_subcommand("accuracy",
                                 "error against float64 over K and input distributions, every kernel in the same run");
  cmd->add_option("--kernel", a.kernels,
                  "kernels, comma-separated (default: cublas, cublas-tf32 and the library call)");
  cmd->add_option("--param", a.params, "parameter points of the families")->delimiter('\0');
  cmd->add_option("--k", a.ks, "K values, comma-separated (default: 64,256,1024,4096,16384)");
  cmd->add_option("--dist", a.dists, "input distributions (default: uniform,normal,positive,wide)");
  cmd->add_option("--mn", a.mn, "M = N (every element checked up to 2^31 multiply-adds, else 32 x 32 sampled ones)")
      ->default_val(256)
      ->check(CLI::Range(1, 4096));
  // A vector product (M or N = 1) reaches the GEMV routes; its every element is checked.
  cmd->add_option("--m", a.m, "M, in place of --mn's (e.g. 1: a row vector times a matrix)")->check(CLI::Range(1, 65536));
  cmd->add_option("--n", a.n, "N, in place of --mn's (e.g. 1: a matrix times a vector)")->check(CLI::Range(1, 65536));
  cmd->add_option("--json", a.json, "write the rows as JSON");
  return {cmd, [args](const Context& ctx) -> int {
            auto& a = *args;
            AccuracyOptions ao;
            ao.kernels =
                resolve_kernels(a.kernels.empty() ? std::vector<std::string>{"cublas", "cublas-tf32", "gemmlab"}
                                                  : split_list(a.kernels),
                                a.params);
            if (!a.ks.empty()) {
              ao.ks.clear();
              for (auto& k : split_list(a.ks)) ao.ks.push_back(k_option(k));
            }
            if (!a.dists.empty()) {
              ao.dists.clear();
              for (auto& d : split_list(a.dists)) ao.dists.push_back(parse_distribution(d));
            }
            ao.mn = a.mn, ao.m = a.m, ao.n = a.n;
            ao.command_line = ctx.command_line;
            check_output_path(a.json);
            if (device_count() == 0) throw NoDeviceError();
            auto j = run_accuracy(ao, std::cout);
            if (!a.json.empty()) write_file_atomic(a.json, j.dump(1) + "\n");
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
