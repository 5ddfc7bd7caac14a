// util/substring_index.h: the first listed needle a line contains.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "util/substring_index.h"

namespace gd {
namespace {

TEST(SubstringIndex, TheFirstListedNeedleWinsWhereverItIs) {
  SubstringIndex idx({"system not yet initialized", "out of memory here", "shared prefix one",
                      "shared prefix two", "abc"});
  EXPECT_EQ(idx.first_in("error: out of memory here and system not yet initialized"), 0);
  EXPECT_EQ(idx.first_in("out of memory here"), 1);
  EXPECT_EQ(idx.first_in("x shared prefix two"), 3);
  EXPECT_EQ(idx.first_in("shared prefix one, shared prefix two"), 2);
  EXPECT_EQ(idx.first_in("shared prefix"), -1);  // cut short at the end
  EXPECT_EQ(idx.first_in("abc"), -1);            // under 4 bytes: never indexed
  EXPECT_EQ(idx.first_in(""), -1);
  EXPECT_EQ(SubstringIndex({}).first_in("anything"), -1);
}

// Against the plain answer (find each needle in order) on random text made
// of the needles' own pieces.
TEST(SubstringIndex, AgreesWithFindingEachNeedleInTurn) {
  const std::vector<std::string> needles = {"abcd", "bcda", "abcdabcd", "dddd", "cabd", "abca"};
  SubstringIndex idx(needles);
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string hay;
    size_t len = rng() % 24;
    for (size_t i = 0; i < len; ++i) hay += "abcd"[rng() % 4];
    int want = -1;
    for (size_t i = 0; i < needles.size() && want < 0; ++i) {
      if (hay.find(needles[i]) != std::string::npos) want = static_cast<int>(i);
    }
    ASSERT_EQ(idx.first_in(hay), want) << hay;
  }
}

}  // namespace
}  // namespace gd
