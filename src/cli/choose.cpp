// gemmlab choose: the configuration the library takes for a problem on this GPU, and why.
#include <cstdio>

#include "cli/command.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "gemmlab/gemmlab.hpp"
#include "launch/launcher.hpp"
#include "library/dispatch.hpp"
#include "tune/tuning.hpp"

namespace gemmlab::cli {

Command add_choose(CLI::App& app) {
  struct Args {
    std::string size, layout = "row", trans_a = "n", trans_b = "n", mode = "strict_fp32";
    bool candidates = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("choose", "the library's configuration for one problem on GPU 0, where it came from "
                                           "and why");
  cmd->add_option("--size", args->size, "S or MxNxK")->required();
  cmd->add_option("--layout", args->layout, "row or col")->default_val("row");
  cmd->add_option("--trans-a", args->trans_a, "n or t")->default_val("n");
  cmd->add_option("--trans-b", args->trans_b, "n or t")->default_val("n");
  cmd->add_option("--mode", args->mode, "strict_fp32, tensor_fp32 or tf32")->default_val("strict_fp32");
  cmd->add_flag("--candidates", args->candidates,
                "also list every configuration the model weighed, fastest predicted first: family, parameters "
                "(with the split), predicted us, one per line after '#'");
  return {cmd, [args](const Context&) {
            auto shape = parse_shape(args->size, Op::gemm);
            if (shape.size() == 1) shape = {shape[0], shape[0], shape[0]};
            auto p = normalized(problem_of_shape(Op::gemm, shape, parse_layout(args->layout), parse_trans(args->trans_a),
                                                 parse_trans(args->trans_b)));
            const auto mode = parse_math_mode(args->mode);
            if (device_count() == 0) throw NoDeviceError();
            auto c = choose(p, mode);
            std::printf("%s %s: %s %s (%s); workspace %zu bytes; %s\n", describe(p).c_str(), to_string(mode).c_str(),
                        c.family.c_str(), c.params.c_str(), c.source.c_str(), c.workspace_bytes, c.why.c_str());
            if (args->candidates)
              for (auto& d : dispatch_candidates(GpuModel::of(query_device(0)), canonical(p), mode))
                std::printf("# %s %s %.2f\n", d.family.c_str(), d.params.c_str(), d.predicted_us);
            // The one input of a choice that depends on the process's environment ($GEMMLAB_TUNING_DB,
            // $GEMMLAB_CACHE_DIR, $XDG_CACHE_HOME, $HOME): two programs that read different databases
            // may choose differently.
            const auto db_path = default_tuning_db();
            const auto db = TuningDb::load(db_path);
            std::printf("tuning database: %s (%zu entries%s)\n", db_path.c_str(), db.entries().size(),
                        db.problem().empty() ? "" : (", " + db.problem()).c_str());
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
