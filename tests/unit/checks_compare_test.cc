// Tests of the comparison helpers (checks/compare.h): versions compared part
// by part as numbers, bytes and numbers, and the evidence line rendered from
// the same values the JSON carries.
#include <gtest/gtest.h>

#include "checks/compare.h"
#include "report/render.h"

namespace gd {
namespace {

TEST(CompareVersions, PartsAreNumbersNotStrings) {
  // As strings "550.54.9" > "550.54.14" and "9.2" > "10.0": both wrong.
  EXPECT_EQ(compare_version_text("550.54.14", "550.54.9"), 1);
  EXPECT_EQ(compare_version_text("550.54.9", "550.54.14"), -1);
  EXPECT_EQ(compare_version_text("10.0", "9.2"), 1);
  EXPECT_EQ(compare_version_text("560.35.03", "560.35.3"), 0);
  EXPECT_EQ(compare_version_text("12", "12.0"), 0);
  EXPECT_EQ(compare_version_text("12.0.1", "12.0"), 1);
  EXPECT_FALSE(compare_version_text("550.x", "550.1").has_value());
  EXPECT_FALSE(compare_version_text("", "1").has_value());
  EXPECT_FALSE(compare_version_text("1..2", "1").has_value());
}

TEST(CompareVersions, MetFollowsTheOperator) {
  EXPECT_TRUE(compare_versions("d", "550.54.14", ">=", "550.54.9").met);
  EXPECT_FALSE(compare_versions("d", "550.54.9", ">=", "550.54.14").met);
  EXPECT_TRUE(compare_versions("d", "10.0", ">", "9.2").met);
  EXPECT_TRUE(compare_versions("d", "580.159.04", "==", "580.159.4").met);
  EXPECT_FALSE(compare_versions("d", "580.159.04", "==", "580.95.05").met);
  EXPECT_TRUE(compare_versions("d", "580.159.04", "!=", "580.95.05").met);
  // Nothing proven healthy from an unreadable version.
  EXPECT_FALSE(compare_versions("d", "unknown", ">=", "525.60.13").met);
  EXPECT_FALSE(compare_versions("d", "550.54.14", "=>", "525.60.13").met);
}

TEST(CompareBytes, ExactIntegersAndGiBText) {
  Comparison c = compare_bytes("RLIMIT_AS vs what cuInit took", 16000000000, ">=", 13421772800);
  EXPECT_TRUE(c.met);
  EXPECT_EQ(c.kind, "bytes");
  EXPECT_EQ(c.actual, "16000000000");
  EXPECT_EQ(c.required, "13421772800");
  EXPECT_EQ(comparison_text(c),
            "RLIMIT_AS vs what cuInit took: 14.9 GiB (16000000000 bytes) >= 12.5 GiB "
            "(13421772800 bytes) (requirement met)");
  // One byte short is short: no rounding through doubles.
  EXPECT_FALSE(compare_bytes("x", 18446744073709551614ull, ">=", 18446744073709551615ull).met);
  EXPECT_TRUE(compare_bytes("x", 5, "<", 6).met);
}

TEST(CompareNumbers, PrintedValuesDecide) {
  Comparison c = compare_numbers("GPU temperature (C) vs slowdown threshold", 91, "<", 90);
  EXPECT_FALSE(c.met);
  EXPECT_EQ(c.actual, "91");
  EXPECT_EQ(c.required, "90");
  EXPECT_EQ(comparison_text(c),
            "GPU temperature (C) vs slowdown threshold: 91 < 90 (requirement NOT met)");
  Comparison share = compare_numbers("share", 0.97, "<", 0.9);
  EXPECT_EQ(share.actual, "0.97");
  EXPECT_EQ(share.required, "0.9");
  EXPECT_FALSE(share.met);
  EXPECT_TRUE(compare_numbers("w", 16, ">=", 16).met);
  EXPECT_TRUE(compare_numbers("w", 1.5, "<=", 2).met);
}

TEST(AddComparison, EvidenceLineAndComparisonTogether) {
  Finding f;
  EXPECT_FALSE(
      add_comparison(&f, compare_versions("driver vs minimum", "470.1", ">=", "525.60.13")));
  EXPECT_TRUE(add_comparison(&f, compare_numbers("n", 1, "==", 1)));
  ASSERT_EQ(f.comparisons.size(), 2u);
  ASSERT_EQ(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[0], comparison_text(f.comparisons[0]));
  EXPECT_EQ(f.evidence[0], "driver vs minimum: 470.1 >= 525.60.13 (requirement NOT met)");
  EXPECT_FALSE(all_met(f.comparisons));
  EXPECT_TRUE(all_met({}));
}

TEST(AddNotCompared, NamesTheUnknownValue) {
  Finding f;
  add_not_compared(&f, "driver's CUDA version vs the runtime's", "the runtime's CUDA version");
  EXPECT_TRUE(f.comparisons.empty());
  ASSERT_EQ(f.evidence.size(), 1u);
  EXPECT_EQ(f.evidence[0],
            "not compared: driver's CUDA version vs the runtime's (the runtime's CUDA version "
            "unknown)");
}

TEST(FindingJson, ComparisonsOnlyWhenStated) {
  Finding f;
  f.id = "driver.too-old-for-cuda";
  EXPECT_FALSE(finding_to_json(f).contains("comparisons"));
  add_comparison(&f, compare_versions("driver vs minimum", "550.54.14", ">=", "525.60.13"));
  auto j = finding_to_json(f);
  ASSERT_TRUE(j.contains("comparisons"));
  ASSERT_EQ(j["comparisons"].size(), 1u);
  const auto& c = j["comparisons"][0];
  EXPECT_EQ(c["what"], "driver vs minimum");
  EXPECT_EQ(c["kind"], "version");
  EXPECT_EQ(c["actual"], "550.54.14");
  EXPECT_EQ(c["op"], ">=");
  EXPECT_EQ(c["required"], "525.60.13");
  EXPECT_EQ(c["met"], true);
}

}  // namespace
}  // namespace gd
