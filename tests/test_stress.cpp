// Without a GPU: the library's workspace ledger (limit, eviction, fallback), the stress's generator
// (every route reachable on an H100 and an A100 description) and the stress command's refusals.
#include <gtest/gtest.h>

#include <set>

#include "cli_helpers.hpp"
#include "gemmlab/error.hpp"
#include "stress/stress.hpp"
#include "launch/launcher.hpp"
#include "library/dispatch.hpp"
#include "library/workspace.hpp"

using namespace gemmlab;

TEST(Workspace, LedgerStaysUnderItsLimitAndEvictsLeastRecentlyUsed) {
  WorkspaceLedger l(100);
  auto all = [](WorkspaceLedger::Key) { return true; };
  ASSERT_TRUE(l.request(1, 40, all));
  EXPECT_TRUE(l.request(1, 40, all)->empty());
  l.set(1, 40);
  l.set(2, 30);
  l.set(3, 20);
  EXPECT_EQ(l.held(), 90u);
  l.touch(1);  // 2 is now the least recently used, then 3
  auto e = l.request(4, 40, all);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, std::vector<WorkspaceLedger::Key>{2});
  e = l.request(4, 55, all);
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, (std::vector<WorkspaceLedger::Key>{2, 3}));
  // A stream's own holding is replaced, not added to.
  EXPECT_TRUE(l.request(1, 50, all)->empty());
  // More than the limit, or more than the evictable streams free: refused (the call falls back).
  EXPECT_FALSE(l.request(4, 101, all));
  EXPECT_FALSE(l.request(4, 40, [](WorkspaceLedger::Key k) { return k == 3; }));
  l.set(2, 0);
  EXPECT_EQ(l.held(), 60u);
  EXPECT_EQ(l.held_by(2), 0u);
  l.set_limit(50);
  EXPECT_FALSE(l.request(5, 10, [](WorkspaceLedger::Key) { return false; }));
}

// With no workspace to be had, the dispatcher still finds a kernel for every shape, and it needs none.
TEST(Workspace, FallbackNeedsNoWorkspace) {
  StressGenerator gen(5, 100, 0);
  for (const GpuModel& gpu : {GpuModel::h100(), GpuModel::a100()})
    for (int i = 0; i < 300; ++i) {
      auto c = gen.next();
      if (c.problem.op == Op::gemv) {
        // Every GEMV family unsplit, as the library's fallback takes it.
        for (auto& f : families())
          if (f->op() == Op::gemv && FamilyLauncher(*f, parse_params(*f, "")).unsupported(c.problem).empty())
            EXPECT_EQ(FamilyLauncher(*f, parse_params(*f, unsplit_gemv(f->name(), ""))).workspace_bytes(c.problem), 0u)
                << f->name() << " " << c.describe();
        continue;
      }
      for (auto mode : {MathMode::strict_fp32, MathMode::tensor_fp32, MathMode::tf32}) {
        auto d = dispatch(gpu, canonical(c.problem), mode, 0);
        EXPECT_EQ(d.workspace_bytes, 0u) << c.describe() << " " << d.family << " " << d.params;
        EXPECT_EQ(d.splits, 1) << c.describe();
      }
    }
  // And the unbounded choice of a huge K splits it (so the fallback is a different plan).
  auto p = normalized(problem_of_shape(Op::gemm, {96, 96, 60000}, Layout::row_major, Trans::no, Trans::no));
  EXPECT_GT(dispatch(GpuModel::h100(), p, MathMode::strict_fp32).splits, 1);
}

TEST(Stress, GeneratorReachesEveryRoute) {
  const std::set<std::string> h100 = {"gemv",     "gemv unaligned", "gemv-route", "hopper-simt split-tail",
                                      "hopper-simt staged", "hopper-simt split-tail staged unaligned", "warptiled",
                                      "warptiled split-k", "wgmma", "wgmma split-tail", "wgmma transposed", "outer"};
  const std::set<std::string> a100 = {"gemv", "gemv-route", "warptiled", "warptiled split-k", "warptiled unaligned",
                                      "tf32-mma", "outer"};
  for (auto [gpu, want] : {std::pair{GpuModel::h100(), h100}, {GpuModel::a100(), a100}}) {
    StressGenerator gen(11, 30, 5);
    std::set<std::string> seen;
    std::set<StressKind> kinds;
    int graphs = 0, repeats = 0, offsets = 0, betas = 0;
    for (int i = 0; i < 3000; ++i) {
      auto c = gen.next();
      seen.insert(stress_route(c, gpu));
      kinds.insert(c.kind);
      graphs += c.in_graph, repeats += !c.first_seen, offsets += c.offset_a != 0, betas += c.problem.beta != 0;
      EXPECT_LE(double(c.problem.m) * c.problem.n, double(1 << 21)) << c.describe();
    }
    for (auto& r : want) EXPECT_TRUE(seen.count(r)) << gpu.name << ": " << r << " never drawn";
    EXPECT_EQ(kinds.size(), 7u);
    EXPECT_GT(graphs, 50);
    EXPECT_GT(repeats, 1500);
    EXPECT_GT(offsets, 300);
    EXPECT_GT(betas, 1000);
  }
}

TEST(Stress, RefusesBadArguments) {
  for (auto args : {"--threads 0", "--threads 4 --streams 5", "--seconds 0 --calls 0", "--calls -3", "--fresh 101",
                    "--mode fast", "--shape 12x", "--json /no/such/folder/x.json", "--workspace-limit -1"}) {
    auto r = run_cli(std::string("stress ") + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(r.lines(), 1) << args << ": " << r.out;
  }
  StressOptions o;
  o.streams = 9;
  EXPECT_THROW(check_stress_options(o), UsageError);
}
