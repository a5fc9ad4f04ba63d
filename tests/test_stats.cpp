#include <gtest/gtest.h>

#include "timing/stats.hpp"
#include "timing/timing.hpp"

using namespace gemmlab;

TEST(Stats, QuantilesAndSummary) {
  std::vector<double> xs = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(quantile(xs, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(xs, 0.25), 2);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
  auto s = summarize(xs);
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.spread, 2.0 / 3.0);
  EXPECT_EQ(summarize({}).count, 0);
}

TEST(Stats, StoppingRule) {
  TimingOptions o;
  o.min_samples = 5, o.max_samples = 8, o.min_time_s = 0.01, o.max_time_s = 1, o.target_spread = 0.02;
  std::vector<double> steady(5, 10.0);  // 5 × 10 ms, no spread
  EXPECT_TRUE(enough_samples(steady, 0.05, o));
  EXPECT_FALSE(enough_samples({10, 10, 10, 10}, 0.04, o));  // below the minimum count
  std::vector<double> tiny(5, 0.001);                         // 5 µs in all: below the minimum time
  EXPECT_FALSE(enough_samples(tiny, 0.001, o));
  std::vector<double> noisy = {10, 20, 10, 20, 10};
  EXPECT_FALSE(enough_samples(noisy, 0.07, o));               // too much spread: go on
  EXPECT_TRUE(enough_samples({10, 20, 10, 20, 10, 20, 10, 20}, 0.15, o));  // up to max_samples
  EXPECT_TRUE(enough_samples({500, 600, 700}, 1.8, o));       // long samples: max_time after 3
  EXPECT_FALSE(enough_samples({500, 600}, 1.2, o));
}

TEST(Stats, CacheModeNames) {
  EXPECT_EQ(parse_cache_mode("warm"), CacheMode::warm);
  EXPECT_EQ(to_string(CacheMode::cold), "cold");
  EXPECT_ANY_THROW(parse_cache_mode("hot"));
}
