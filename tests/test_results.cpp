#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/files.hpp"
#include "results/results.hpp"

using namespace gemmlab;

namespace {
Record sample_record() {
  Record r;
  r.kernel = "naive";
  r.precision = "fp32";
  r.problem = normalized(Problem::square(64));
  r.timing.ms = summarize({1.0, 2.0, 3.0});
  r.gflops = 123.5;
  r.verified = true;
  r.verdict.passed = true;
  r.verdict.method = "fp64-full";
  r.verdict.first_failure = "C(1,2) = 3, \"expected\" 4";
  return r;
}
}  // namespace

TEST(Results, JsonCarriesMetadataAndRecords) {
  nlohmann::json meta = {{"gpu", {{"name", "Test GPU"}}}, {"gemmlab_commit", "abc"}};
  auto j = results_json(meta, {sample_record()});
  EXPECT_EQ(j["metadata"]["gpu"]["name"], "Test GPU");
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["kernel"], "naive");
  EXPECT_EQ(j["results"][0]["m"], 64);
  EXPECT_DOUBLE_EQ(j["results"][0]["median_ms"].get<double>(), 2.0);
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(Results, CsvIsTidyWithMetadataCommentsAndQuoting) {
  nlohmann::json meta = {{"gpu", {{"name", "Test GPU"}, {"sms", 132}}}, {"date", "2026-11-22"}};
  auto csv = results_csv(meta, {sample_record(), sample_record()});
  std::istringstream is(csv);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(is, line)) lines.push_back(line);
  EXPECT_EQ(lines[0], "# date = 2026-11-22");
  EXPECT_EQ(lines[1], "# gpu.name = Test GPU");
  EXPECT_EQ(lines[2], "# gpu.sms = 132");
  EXPECT_EQ(lines[3].rfind("kernel,precision,op,m,n,k,", 0), 0u) << lines[3];
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[4].find("\"C(1,2) = 3, \"\"expected\"\" 4\""), std::string::npos) << lines[4];
  // Every data row has as many fields as the header, counting quoted commas once.
  auto fields = [](const std::string& s) {
    int n = 1;
    bool quoted = false;
    for (char c : s) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  EXPECT_EQ(fields(lines[4]), fields(lines[3]));
}

TEST(Results, TableRowShowsVerdict) {
  std::ostringstream os;
  print_table_header(os);
  auto r = sample_record();
  print_table_row(os, r);
  r.verdict.passed = false;
  print_table_row(os, r);
  r.status = "unsupported: too wide";
  print_table_row(os, r);
  auto s = os.str();
  EXPECT_NE(s.find("median_ms"), std::string::npos);
  EXPECT_NE(s.find(" yes"), std::string::npos);
  EXPECT_NE(s.find("FAILED: C(1,2)"), std::string::npos);
  EXPECT_NE(s.find("unsupported: too wide"), std::string::npos);
}

TEST(Files, AtomicWriteReplacesWholeFile) {
  auto dir = std::filesystem::temp_directory_path() / "gemmlab-test-files";
  std::filesystem::remove_all(dir);
  auto f = dir / "out.json";
  write_file_atomic(f, "first");
  write_file_atomic(f, "second");
  EXPECT_EQ(read_file(f).value(), "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temporary left
  EXPECT_FALSE(read_file(dir / "missing").has_value());
  EXPECT_EQ(stable_hash("abc"), stable_hash("abc"));
  EXPECT_NE(stable_hash("abc"), stable_hash("abd"));
  EXPECT_EQ(stable_hash(""), "cbf29ce484222325");
}
