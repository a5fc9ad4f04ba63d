#include <gtest/gtest.h>

#include <cmath>

#include "problem/data.hpp"
#include "gemmlab/error.hpp"

using namespace gemmlab;

TEST(Random, NeverZeroAndInRange) {
  for (auto d : {Distribution::uniform, Distribution::normal, Distribution::positive, Distribution::wide}) {
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      float x = random_value(d, 42, uint64_t(i));
      ASSERT_TRUE(std::isfinite(x));
      ASSERT_NE(x, 0.0f) << to_string(d) << " at " << i;
      if (d == Distribution::uniform) ASSERT_TRUE(x > -1 && x < 1);
      if (d == Distribution::positive) ASSERT_TRUE(x > 0 && x <= 1);
      if (d == Distribution::wide) ASSERT_TRUE(std::fabs(x) >= 0x1p-20f && std::fabs(x) < 0x1p21f);
      sum += x;
    }
    if (d == Distribution::uniform || d == Distribution::normal) EXPECT_LT(std::fabs(sum / n), 0.01) << to_string(d);
    if (d == Distribution::positive) EXPECT_NEAR(sum / n, 0.5, 0.01);
  }
}

TEST(Random, SeedsAndIndicesGiveDifferentStreams) {
  int same = 0;
  for (int i = 0; i < 1000; ++i) same += random_value(Distribution::uniform, 1, i) == random_value(Distribution::uniform, 2, i);
  EXPECT_LT(same, 3);
  EXPECT_EQ(random_value(Distribution::uniform, 7, 99), random_value(Distribution::uniform, 7, 99));
}

TEST(Random, ParsesNames) {
  EXPECT_EQ(parse_distribution("wide"), Distribution::wide);
  EXPECT_THROW(parse_distribution("gauss"), UsageError);
}
