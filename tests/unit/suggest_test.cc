// "Did you mean": util/suggest.h.
#include "util/suggest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gd {
namespace {

const std::vector<std::string> kCommands = {"check", "snapshot", "logs",    "explain",
                                            "topo",  "env",      "history", "diag"};

TEST(Suggest, NamesTheNearestWithinATypo) {
  EXPECT_EQ(nearest_name("chekc", kCommands), "check");  // two letters swapped
  EXPECT_EQ(nearest_name("histroy", kCommands), "history");
  EXPECT_EQ(nearest_name("log", kCommands), "logs");  // one missing
  EXPECT_EQ(nearest_name("--jsno", {"--json", "--from"}), "--json");
  EXPECT_EQ(nearest_name("xid.97", {"xid.79", "xid.31"}), "xid.79");
}

TEST(Suggest, StaysQuietWhenNothingIsClose) {
  EXPECT_EQ(nearest_name("install", kCommands), "");
  EXPECT_EQ(nearest_name("x", kCommands), "");
  EXPECT_EQ(nearest_name("", kCommands), "");
  EXPECT_EQ(nearest_name("check", {}), "");
  EXPECT_EQ(nearest_name(std::string(100000, 'c'), kCommands), "");  // no quadratic table
}

}  // namespace
}  // namespace gd
