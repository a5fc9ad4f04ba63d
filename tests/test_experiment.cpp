// Experiment files, sweeps' bookkeeping, the tuning database and the built-in table: no GPU needed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "gemmlab/error.hpp"
#include "experiment/experiment.hpp"
#include "common/files.hpp"
#include "report/report.hpp"
#include "sweep/sweep.hpp"
#include "tune/tuning.hpp"

using namespace gemmlab;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  auto d = fs::temp_directory_path() / ("gemmlab-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void expect_refused(const json& spec, const std::string& needle) {
  try {
    parse_experiment(spec, "t");
    ADD_FAILURE() << "accepted: " << spec.dump();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Expression, ArithmeticAndPrecedence) {
  std::map<std::string, long long> v = {{"bx", 16}, {"by", 8}, {"r", 3}};
  EXPECT_EQ(eval_expression("bx*r", v), 48);
  EXPECT_EQ(eval_expression("1 + 2 * 3", v), 7);
  EXPECT_EQ(eval_expression("(1 + 2) * 3", v), 9);
  EXPECT_EQ(eval_expression("bx / by - 1", v), 1);
  EXPECT_EQ(eval_expression("17 % 5", v), 2);
  EXPECT_EQ(eval_expression("-r + 4", v), 1);
  EXPECT_EQ(eval_expression("bx >= by && bx <= 2 * by", v), 1);
  EXPECT_EQ(eval_expression("bx < by || r == 3", v), 1);
  EXPECT_EQ(eval_expression("bx != 16", v), 0);
  EXPECT_EQ(eval_expression("!(bx > 4)", v), 0);
  EXPECT_EQ(eval_expression("bx*by*r*r <= 1024", v), 0);
  EXPECT_EQ(eval_expression("bx*by*r <= 1024", v), 1);
}

TEST(Expression, ErrorsNameTheExpression) {
  std::map<std::string, long long> v = {{"a", 1}};
  for (auto [text, needle] : {std::pair{"a +", "ends too early"}, {"b * 2", "unknown name 'b'"},
                             {"4 / (a - 1)", "division by zero"}, {"(a + 1", "missing ')'"}, {"a a", "unexpected"}}) {
    try {
      eval_expression(text, v);
      ADD_FAILURE() << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
}

TEST(Expression, TemplatesFillWordsAndExpressions) {
  GridPoint p = {{"bx", 16LL}, {"r", 4LL}, {"place", std::string("lumped")}};
  EXPECT_EQ(fill_template("block={bx}x{bx/2},tile={bx*r}x64,placement={place}", p),
            "block=16x8,tile=64x64,placement=lumped");
  EXPECT_THROW(fill_template("tile={bx", p), UsageError);
}

TEST(Experiment, GridWithRulesKeepsInvalidPointsWithReasons) {
  json spec = {{"sizes", {256}},
               {"kernels",
                {"cublas",
                 {{"family", "regblock2d"},
                  {"grid", {{"bx", {8, 16, 32}}, {"by", {8, 16, 32}}, {"r", {1, 12}}}},
                  {"where", {"bx >= by && bx <= 2 * by"}},
                  {"params", "block={bx}x{by},vpt={r}x{r},tile={by*r}x{bx*r}x16"}}}}};
  auto e = parse_experiment(spec, "grid");
  // 5 block shapes pass the rule (8x8, 16x8, 16x16, 32x16, 32x32), times 2 values of r.
  ASSERT_EQ(e.kernels.size(), 1u + 10u);
  int invalid = 0;
  for (auto& k : e.kernels) {
    if (k.invalid.empty()) continue;
    ++invalid;
    EXPECT_EQ(k.kernel, "regblock2d");
  }
  // 32x32 threads with 12x12 values each needs far more than 65536 registers per block, among others.
  EXPECT_GT(invalid, 0);
  auto big = std::find_if(e.kernels.begin(), e.kernels.end(),
                          [](auto& k) { return k.params.find("block=32x32,vpt=12x12") != std::string::npos; });
  ASSERT_NE(big, e.kernels.end());
  EXPECT_FALSE(big->invalid.empty());
  // Valid points are canonical: defaults completed.
  auto first = e.kernels[1];
  EXPECT_EQ(first.params, "block=8x8,vpt=1x1,tile=8x8x16,placement=interleaved");
}

TEST(Experiment, SizesGeneratorsLayoutsAndQuickField) {
  json spec = {{"sizes", {{{"range", {1023, 1031, 4}}}, {{"pow2_neighbours", {1024, 2048}}}, "64x32x16"}},
               {"layouts", {"row", "col"}},
               {"trans_a", {"n", "t"}},
               {"kernels", {"openblas"}},
               {"quick", {{"sizes", {64}}}}};
  auto e = parse_experiment(spec, "sizes");
  // 1023, 1027, 1031, then 1023, 1024, 1025, 2047, 2048, 2049, then 64x32x16: 10 shapes x 4 cases.
  ASSERT_EQ(e.problems.size(), 40u);
  EXPECT_EQ(e.problems.back().m, 64);
  EXPECT_EQ(e.problems.back().n, 32);
  EXPECT_EQ(e.problems.back().k, 16);
  EXPECT_EQ(e.problems.back().layout, Layout::col_major);
  EXPECT_EQ(e.problems.back().trans_a, Trans::yes);
}

TEST(Experiment, RefusalsNameTheField) {
  json ok = {{"sizes", {64}}, {"kernels", {"naive"}}};
  EXPECT_NO_THROW(parse_experiment(ok, "x"));
  auto with = [&](const std::string& key, json v) {
    json s = ok;
    s[key] = v;
    return s;
  };
  expect_refused(with("colour", 1), "colour: unknown field");
  expect_refused(with("sizes", json::array()), "sizes: no values");
  expect_refused(with("sizes", {"12x"}), "sizes: '12x' is not an integer");
  expect_refused(with("sizes", {{{"range", {10, 5}}}}), "below its first");
  expect_refused(with("sizes", {{{"steps", {1, 2}}}}), "unknown generator 'steps'");
  expect_refused(with("kernels", {"fastest"}), "unknown kernel 'fastest'");
  expect_refused(with("kernels", {{{"family", "gemv-warp"}}}), "is a gemv family; this experiment is gemm");
  expect_refused(with("kernels", {{{"family", "naive"}, {"grid", {{"b", {8}}}}}}), "needs 'params'");
  expect_refused(with("kernels", {{{"family", "naive"}, {"grid", {{"b", {8}}}}, {"params", "block={c}x8"}}}),
                 "unknown name 'c'");
  expect_refused(with("timing", {{"min_samples", "many"}}), "wrong type");
  expect_refused(with("timing", {{"samples", 3}}), "unknown field 'samples'");
  expect_refused(json{{"kernels", {"naive"}}}, "sizes");
  expect_refused(json::array(), "a JSON object");
}

TEST(Experiment, PointsPutCublasFirstAndHonourMaxSize) {
  json spec = {{"sizes", {64, 128}},
               {"kernels", {{{"kernel", "openblas"}, {"max_size", 64}}, "naive", "naive"}}};
  auto e = parse_experiment(spec, "points");
  auto pts = sweep_points(e);
  // Per size: cuBLAS (always measured: the ratio's reference), openblas only at 64, naive once.
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_EQ(pts[0].kernel, -1);
  EXPECT_NE(pts[0].key.find("cublas @ 64x64x64"), std::string::npos) << pts[0].key;
  EXPECT_NE(pts[1].key.find("openblas"), std::string::npos);
  EXPECT_NE(pts[3].key.find("cublas @ 128x128x128"), std::string::npos);
  EXPECT_NE(pts[4].key.find("naive block=16x16"), std::string::npos) << pts[4].key;
}

TEST(Experiment, EveryShippedExperimentLoads) {
  int files = 0;
  for (auto& entry : fs::recursive_directory_iterator(fs::path(GEMMLAB_SOURCE_DIR) / "experiments")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    Experiment e;
    ASSERT_NO_THROW(e = load_experiment(entry.path()));
    EXPECT_FALSE(sweep_points(e).empty());
    ++files;
  }
  EXPECT_GE(files, 10);
  // The example of docs/experiments.md is a valid experiment too.
  auto doc = *read_file(fs::path(GEMMLAB_SOURCE_DIR) / "docs/experiments.md");
  auto start = doc.find("```json\n") + 8;
  auto example = json::parse(doc.substr(start, doc.find("```", start) - start));
  auto e = parse_experiment(example, "doc");
  EXPECT_TRUE(e.averaging.has_value());
  EXPECT_GT(e.kernels.size(), 20u);
  for (bool quick : {false, true})
    for (auto& [name, spec] : report_experiments(quick)) {
      SCOPED_TRACE(name);
      auto e = parse_experiment(spec, name);
      int valid = 0;
      for (auto& k : e.kernels) valid += k.invalid.empty();
      EXPECT_GT(valid, 0);
      // The FP32-accurate and layout sections name their kernels' parameters: every one must parse.
      if (name == "fp32-accurate" || name == "layouts") EXPECT_EQ(valid, int(e.kernels.size()));
      // The layout section runs each size in all eight storage orders.
      if (name == "layouts") EXPECT_EQ(e.problems.size(), 8u);
    }
}

TEST(Sweep, ResultsFromTheJournalCarryRatiosAndStatusCounts) {
  auto dir = scratch("journal");
  json spec = {{"sizes", {64}}, {"kernels", {"naive", {{"family", "regblock2d"}, {"params", "vpt=9x9"}}}}};
  auto e = parse_experiment(spec, "j");
  auto pts = sweep_points(e);
  ASSERT_EQ(pts.size(), 3u);
  auto row = [&](const std::string& kernel, const std::string& status, double ms) {
    return nlohmann::ordered_json{{"kernel", kernel}, {"op", "gemm"}, {"m", 64}, {"n", 64}, {"k", 64}, {"status", status},
                {"median_ms", ms}, {"gflops", 1.0}};
  };
  {
    std::ofstream j(dir / "journal.jsonl");
    j << json{{"start", pts[0].key}}.dump() << "\n";
    j << nlohmann::ordered_json{{"key", pts[0].key}, {"records", {row("cublas", "ok", 0.01)}}}.dump() << "\n";
    j << json{{"start", pts[1].key}}.dump() << "\n";
    j << nlohmann::ordered_json{{"key", pts[1].key}, {"records", {row("naive", "ok", 0.04)}}}.dump() << "\n";
    j << json{{"start", pts[2].key}}.dump() << "\n";
    j << "{\"key\": \"cut sho";  // a worker killed while writing
  }
  auto s = write_sweep_results(e, dir);
  EXPECT_EQ(s.points, 2);
  EXPECT_EQ(s.ok, 2);
  auto out = json::parse(*read_file(dir / "results.json"));
  ASSERT_EQ(out["results"].size(), 2u);
  EXPECT_DOUBLE_EQ(out["results"][1]["x_cublas"].get<double>(), 0.25);
  auto csv = read_file(dir / "results.csv");
  ASSERT_TRUE(csv);
  EXPECT_NE(csv->find("kernel,op,m,n,k,status"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Tuning, ShapeClasses) {
  EXPECT_EQ(shape_class(normalized(Problem::square(4096))), "gemm 2^12 2^12 2^12");
  EXPECT_EQ(shape_class(normalized(Problem::square(4097))), "gemm 2^12+ 2^12+ 2^12+");
  EXPECT_EQ(shape_class(normalized(Problem::square(1000))), "gemm 2^10- 2^10- 2^10-");
  EXPECT_EQ(shape_class(normalized(Problem::square(2047))), "gemm 2^11- 2^11- 2^11-");
  Problem p = Problem::square(1);
  p.m = 4096, p.n = 128, p.k = 1024, p.layout = Layout::col_major;
  // Classes are of the row-major form: a column-major C is its transpose.
  EXPECT_EQ(shape_class(normalized(p)), "gemm 2^7 2^12 2^10");
  EXPECT_EQ(shape_class(normalized(Problem::gemv(1024, 65536, Layout::row_major, Trans::no))), "gemv rows 2^10 2^16");
  EXPECT_EQ(shape_class(normalized(Problem::gemv(1024, 65536, Layout::row_major, Trans::yes))), "gemv cols 2^16 2^10");
}

TEST(Tuning, DatabaseRoundTripNearestClassAndReplacement) {
  auto dir = scratch("tuning");
  TuningDb db;
  TuningEntry e{"GPU X", "sm_90", "warptiled", "tile=64x64x16", "gemm 2^10 2^10 2^10", "1024x1024x1024", 100, 1};
  db.put(e);
  e.params = "tile=128x128x16", e.shape_class = "gemm 2^13 2^13 2^13", e.gflops = 200;
  db.put(e);
  e.params = "tile=128x256x16";  // same GPU, family and class: replaces
  db.put(e);
  db.save(dir / "db.json");
  auto back = TuningDb::load(dir / "db.json");
  ASSERT_TRUE(back.problem().empty()) << back.problem();
  ASSERT_EQ(back.entries().size(), 2u);
  auto* near_small = back.best("GPU X", "sm_90", "", normalized(Problem::square(1500)));
  ASSERT_TRUE(near_small);
  EXPECT_EQ(near_small->params, "tile=64x64x16");
  auto* near_big = back.best("GPU X", "sm_90", "warptiled", normalized(Problem::square(16384)));
  ASSERT_TRUE(near_big);
  EXPECT_EQ(near_big->params, "tile=128x256x16");
  EXPECT_EQ(back.best("GPU Y", "sm_90", "", normalized(Problem::square(1024))), nullptr);
  EXPECT_EQ(back.best("GPU X", "sm_80", "", normalized(Problem::square(1024))), nullptr);
  EXPECT_EQ(back.best("GPU X", "sm_90", "", normalized(Problem::gemv(64, 64, Layout::row_major, Trans::no))), nullptr);
  fs::remove_all(dir);
}

// A family tuned in tensor_fp32's arithmetic (tune --param accum=fp64) keeps its FP32 entry of the
// same class beside; `accept` picks the arithmetic, and a family's own tuned parameters are FP32's.
TEST(Tuning, EntriesOfEachArithmeticLiveSideBySide) {
  TuningDb db;
  const Problem p = normalized(Problem::gemv(8192, 32768, Layout::row_major, Trans::no));
  TuningEntry e{"GPU X", "sm_90", "gemv-block", "threads=1024,unroll=1", shape_class(p), "8192x1x32768", 1570, 0.34};
  db.put(e);
  e.params = "threads=512,unroll=4,accum=fp64", e.gflops = 1500;
  db.put(e);
  e.params = "threads=256,unroll=8,accum=fp64", e.gflops = 1510;  // the same arithmetic: replaces
  db.put(e);
  ASSERT_EQ(db.entries().size(), 2u);
  auto* any = db.best("GPU X", "sm_90", "", p);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->params, "threads=1024,unroll=1");  // the faster of the class
  auto* fp64 = db.best("GPU X", "sm_90", "", p, false, [](const TuningEntry& x) { return sums_in_fp64(x); });
  ASSERT_TRUE(fp64);
  EXPECT_EQ(fp64->params, "threads=256,unroll=8,accum=fp64");
  EXPECT_EQ(db.best("GPU X", "sm_90", "", p, false, [](const TuningEntry&) { return false; }), nullptr);
  EXPECT_EQ(tuned_params("gemv-block", p, "GPU X", "sm_90", db).params, "threads=1024,unroll=1");
  EXPECT_FALSE(sums_in_fp64({"", "sm_90", "nosuch", "accum=fp64"}));
}

TEST(Tuning, CorruptOrForeignDatabasesAreIgnoredWithOneLine) {
  auto dir = scratch("corrupt");
  std::ofstream(dir / "broken.json") << "{\"format\": \"gemmlab-tuning/1\", \"entries\": [ {\"arch\":";
  std::ofstream(dir / "foreign.json") << "{\"format\": \"someone-else\", \"entries\": []}";
  std::ofstream(dir / "wrong.json") << "{\"format\": \"gemmlab-tuning/1\", \"entries\": [{\"arch\": 3}]}";
  for (auto name : {"broken.json", "foreign.json", "wrong.json"}) {
    auto db = TuningDb::load(dir / name);
    EXPECT_TRUE(db.entries().empty());
    EXPECT_NE(db.problem().find(name), std::string::npos) << db.problem();
    EXPECT_EQ(db.problem().find('\n'), std::string::npos);
  }
  EXPECT_TRUE(TuningDb::load(dir / "missing.json").problem().empty());
  // tune refuses to overwrite it, before searching (and before looking for a GPU).
  auto r = run_cli("tune --kernel naive --size 64 --strategy exhaustive --db " + (dir / "foreign.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a gemmlab tuning database"), std::string::npos) << r.out;
  EXPECT_EQ(r.lines(), 1) << r.out;
  fs::remove_all(dir);
}

TEST(Tuning, BuiltinTableIsValidAndChoosesPerClass) {
  auto& t = builtin_table();
  ASSERT_FALSE(t.entries().empty());
  for (auto& e : t.entries()) {
    SCOPED_TRACE(e.family + " " + e.params);
    auto* f = find_family(e.family);
    ASSERT_TRUE(f);
    EXPECT_TRUE(accepts(*f, e.params));
    EXPECT_EQ(e.arch, "sm_90");
  }
  auto at = [&](int64_t n) { return tuned_params("warptiled", normalized(Problem::square(n)), "any", "sm_90", TuningDb()); };
  EXPECT_EQ(at(2049).source, "built-in table");
  EXPECT_NE(at(2049).params.find("splitk=3"), std::string::npos);
  EXPECT_NE(at(4096).params.find("splitk=1"), std::string::npos);
  // Any family (the library's strict lookup): the faster entry of the same shape, hopper-simt at 4096³.
  auto* any = t.best("any", "sm_90", "", normalized(Problem::square(4096)), /*exact=*/true);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->family, "hopper-simt");
  // At 1024³ the model's hopper-simt split 2 (1.06x cuBLAS SGEMM) beat the table's warptiled 64x64
  // (0.79x) in one run (results/h100/simt/issue30-table-b58666e).
  auto* small = t.best("any", "sm_90", "", normalized(Problem::square(1024)), /*exact=*/true);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->family, "hopper-simt");
  // At 2049³ hopper-simt's split tail (measured, issue 30) beats warptiled's split-K.
  auto* odd = t.best("any", "sm_90", "", normalized(Problem::square(2049)), true);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->family, "hopper-simt");
  EXPECT_NE(odd->params.find("splitk=4"), std::string::npos);
  // At 1025³ warptiled 128x64 split 5 ran 90.3 us where the model's 64x64 split 5 ran 99.5
  // (results/h100/simt/copies-e1bfde9/candidates.log).
  auto* past = t.best("any", "sm_90", "", normalized(Problem::square(1025)), true);
  ASSERT_TRUE(past);
  EXPECT_EQ(past->shape, "1025x1025x1025");
  EXPECT_NE(past->params.find("tile=128x64x16"), std::string::npos);
  // Another architecture has no table: the family defaults.
  EXPECT_EQ(tuned_params("warptiled", normalized(Problem::square(4096)), "any", "sm_75", TuningDb()).source, "defaults");
}

// A family that does not take a layout shows "-", not a failure; a real failure is listed in full.
TEST(Plot, NotApplicableIsADashAndFailuresAreListedInFull) {
  auto dir = scratch("plot-status");
  auto src = fs::path(GEMMLAB_SOURCE_DIR);
  auto results = nlohmann::json::parse(*read_file(src / "results/h100/report/gemv/results.json"));
  const std::string failure = "failed verification: element (17, 0) is 3.5, float64 says 2.25 (max_err 0.36 over 1.2e-05)";
  int unsupported = 0;
  for (auto& r : results["results"]) unsupported += r["status"].get<std::string>().rfind("unsupported", 0) == 0;
  ASSERT_GT(unsupported, 0) << "the sample has no unsupported layout: the test would prove nothing";
  results["results"][0]["status"] = failure;
  std::ofstream(dir / "gemv.json") << results.dump();
  auto r = run_cli("plot " + (dir / "gemv.json").string() + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto md = *read_file(dir / "README.md");
  EXPECT_NE(md.find("| - |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| unsupported"), std::string::npos) << md;
  EXPECT_EQ(md.find("not ok"), std::string::npos) << md;
  EXPECT_NE(md.find("**1 run(s) failed:**"), std::string::npos) << md;
  EXPECT_NE(md.find(failure), std::string::npos) << md;
  EXPECT_NE(md.find(std::to_string(unsupported) + " point(s) do not apply"), std::string::npos) << md;
  fs::remove_all(dir);
}

TEST(Plot, RedrawsTheCommittedSampleWithoutAGpu) {
  auto dir = scratch("plot");
  auto src = fs::path(GEMMLAB_SOURCE_DIR);
  auto r = run_cli("plot " + (src / "results/h100/sgemm-families.json").string() + " " +
                   (src / "results/h100/gemv.json").string() + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (auto png : {"sgemm-families-gflops.png", "sgemm-families-x-cublas.png", "gemv-gemv-bandwidth.png"}) {
    SCOPED_TRACE(png);
    ASSERT_TRUE(fs::exists(dir / png));
    auto bytes = read_file(dir / png);
    ASSERT_TRUE(bytes && bytes->size() > 10000);
    EXPECT_EQ(bytes->substr(1, 3), "PNG");
  }
  auto md = read_file(dir / "README.md");
  ASSERT_TRUE(md);
  EXPECT_NE(md->find("![GFLOP/s against N](sgemm-families-gflops.png)"), std::string::npos);
  EXPECT_NE(md->find("NVIDIA H100"), std::string::npos);
  EXPECT_NE(md->find("| warptiled |"), std::string::npos);
  // Not results: one line, exit 2.
  std::ofstream(dir / "junk.json") << "{\"hello\": 1}";
  r = run_cli("plot " + (dir / "junk.json").string() + " --out " + dir.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a gemmlab results file"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// The FP32-accurate section's scatter: each route and size at its error and speed over cuBLAS
// SGEMM's on the same problem; results written before the contract measure existed draw without it.
TEST(Plot, SpeedAgainstErrorPutsEachRouteOverCublas) {
  auto dir = scratch("plot-accuracy");
  auto src = fs::path(GEMMLAB_SOURCE_DIR);
  auto sample = nlohmann::json::parse(*read_file(src / "results/h100/fp32-accurate.json"));
  nlohmann::json rows = nlohmann::json::array();
  for (int n : {1024, 2048})
    for (auto [kernel, err, speed] : {std::tuple{"cublas", 2e-7, 1.0}, {"ozaki", 5e-9, 1.2}, {"wgmma", 1.8e-8, 1.1},
                                      {"gemmlab-tensor-fp32", 0.0, 1.15}})
      rows.push_back({{"kernel", kernel}, {"precision", "fp32"}, {"op", "gemm"}, {"m", n}, {"n", n}, {"k", n},
                      {"alpha", 1.0}, {"beta", 0.0}, {"layout", "row"}, {"trans_a", "n"}, {"trans_b", "n"},
                      {"status", "ok"}, {"median_ms", 1.0}, {"gflops", 1.0}, {"x_cublas", speed}, {"max_err", err},
                      {"max_abs_err", err}, {"verified", true}, {"details", nlohmann::json::object()}});
  sample["results"] = rows;
  sample["metadata"]["experiment"] = {{"name", "fp32-accurate"},
                                      {"plots", {{{"kind", "accuracy"}, {"name", "speed-error"}}}}};
  std::ofstream(dir / "accurate.json") << sample.dump();
  auto r = run_cli("plot " + (dir / "accurate.json").string() + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto png = read_file(dir / "fp32-accurate-speed-error.png");
  ASSERT_TRUE(png && png->size() > 10000);
  EXPECT_NE(read_file(dir / "README.md")->find("](fp32-accurate-speed-error.png)"), std::string::npos);
  fs::remove(dir / "fp32-accurate-speed-error.png");
  for (auto& row : sample["results"]) row.erase("max_abs_err");
  std::ofstream(dir / "accurate.json") << sample.dump();
  r = run_cli("plot " + (dir / "accurate.json").string() + " --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_FALSE(fs::exists(dir / "fp32-accurate-speed-error.png"));
  fs::remove_all(dir);
}

// The layout section's bars: one group per storage order (a plot keyed by size alone would keep one
// bar per kernel for all eight), so the figure is as wide as eight groups need.
TEST(Plot, BarsOfSeveralLayoutsGroupPerLayout) {
  auto dir = scratch("plot-layouts");
  auto src = fs::path(GEMMLAB_SOURCE_DIR);
  auto sample = nlohmann::json::parse(*read_file(src / "results/h100/fp32-accurate.json"));
  auto png_width = [](const std::string& png) {  // the IHDR chunk's width, big-endian
    return (unsigned(uint8_t(png[16])) << 24) | (unsigned(uint8_t(png[17])) << 16) | (unsigned(uint8_t(png[18])) << 8) |
           unsigned(uint8_t(png[19]));
  };
  unsigned width[2] = {0, 0};
  for (int several : {0, 1}) {
    nlohmann::json rows = nlohmann::json::array();
    for (const char* layout : {"row", "col"})
      for (const char* ta : {"n", "t"})
        for (const char* tb : {"n", "t"})
          for (auto [kernel, speed] : {std::pair{"cublas", 1.0}, {"hopper-simt", 0.9}, {"gemmlab", 0.92}}) {
            if (!several && (std::string(layout) != "row" || std::string(ta) != "n" || std::string(tb) != "n")) continue;
            rows.push_back({{"kernel", kernel}, {"precision", "fp32"}, {"op", "gemm"}, {"m", 4096}, {"n", 4096},
                            {"k", 4096}, {"alpha", 1.0}, {"beta", 0.0}, {"layout", layout}, {"trans_a", ta},
                            {"trans_b", tb}, {"status", "ok"}, {"median_ms", 3.0}, {"gflops", 45000.0},
                            {"x_cublas", speed}, {"verified", true}, {"details", nlohmann::json::object()}});
          }
    sample["results"] = rows;
    sample["metadata"]["experiment"] = {{"name", "layouts"},
                                        {"plots", {{{"kind", "bar"}, {"name", "x-cublas"}, {"y", "x_cublas"}}}}};
    std::ofstream(dir / "layouts.json") << sample.dump();
    auto r = run_cli("plot " + (dir / "layouts.json").string() + " --out " + dir.string());
    ASSERT_EQ(r.code, 0) << r.out;
    auto png = read_file(dir / "layouts-x-cublas.png");
    ASSERT_TRUE(png && png->size() > 24);
    width[several] = png_width(*png);
    fs::remove(dir / "layouts-x-cublas.png");
  }
  EXPECT_GT(width[1], width[0] + 300) << width[0] << " px for one layout, " << width[1] << " for eight";
  fs::remove_all(dir);
}

// The report's overhead line: the library's own time is never negative, and a difference within
// the noise is said to be one.
TEST(Report, CallOverheadIsNeverNegative) {
  auto shape = [](double lib, double bare, double spread) {
    const double own = lib - bare;
    return nlohmann::json{{"shape", "256x256x256 row NN"},
                          {"choice", "warptiled tile=64x64x16"},
                          {"launches", 1},
                          {"gemmlab", {{"median_us", lib}, {"q1_us", lib - spread / 2}, {"q3_us", lib + spread / 2}}},
                          {"bare_launches", {{"median_us", bare}, {"q1_us", bare}, {"q3_us", bare}}},
                          {"cublas", {{"median_us", 3.0}}},
                          {"gemmlab_own_us", std::max(0.0, own)},
                          {"noise_us", spread},
                          {"within_noise", std::abs(own) <= spread}};
  };
  auto below = describe_call_overhead({{"shapes", {shape(7.39, 7.54, 0.3)}}});
  EXPECT_EQ(below.find("-0."), std::string::npos) << below;
  EXPECT_NE(below.find("no difference beyond the noise (±0.30 µs)"), std::string::npos) << below;
  auto above = describe_call_overhead({{"shapes", {shape(9.0, 7.5, 0.2)}}});
  EXPECT_NE(above.find("1.50 µs of its own (noise ±0.20 µs)"), std::string::npos) << above;
  EXPECT_NE(above.find("its 1 launch alone 7.50 µs"), std::string::npos) << above;
}
