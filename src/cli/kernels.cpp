// gemmlab kernels: the kernel families, their parameters, defaults and search
// spaces.
#include <cstdio>

#include "cli/command.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"

namespace gemmlab::cli {

Command add_kernels(CLI::App& app) {
  auto* cmd = app.add_subcommand("kernels", "list the kernel families, their parameters and defaults");
  return {cmd, [](const Context&) {
            for (auto* f : families()) {
              std::printf("%s (sm_%d+): %s\n", f->name().c_str(), f->min_arch(), f->description().c_str());
              for (auto& p : f->params()) {
                std::string range;
                if (p.choices.empty()) {
                  range = std::to_string(p.min) + ".." + std::to_string(p.max);
                } else {
                  for (auto& c : p.choices) range += (range.empty() ? "" : "|") + c;
                }
                std::printf("  %-10s default %-12s range %-28s %s\n", p.name.c_str(),
                            format_value(p, p.defaults).c_str(), range.c_str(), p.help.c_str());
              }
              std::printf("  search space: %zu configurations\n", f->search_space().size());
            }
            std::printf(
                "baselines: cublas (cuBLAS SGEMM, FP32), cublas-tf32 (TF32 tensor cores, lower precision), openblas "
                "(host, all cores), gemmlab (the library call, which picks its configuration)\n");
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
