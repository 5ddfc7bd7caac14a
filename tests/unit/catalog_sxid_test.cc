// The SXid catalog (catalog/sxid.h): its rows against the header's blocks,
// and the numbering driver 550.40.07 changed.
#include <gtest/gtest.h>

#include "catalog/sxid.h"

namespace gd {
namespace {

TEST(SxidCatalog, EveryListedCodeIsInABlockAndClassed) {
  int listed = 0;
  for (int code = 10000; code < 31000; ++code) {
    const SxidInfo* s = find_sxid(code);
    if (s == nullptr) continue;
    ++listed;
    EXPECT_EQ(s->code, code);
    EXPECT_NE(sxid_block(code, ""), "") << code;
    EXPECT_NE(s->guide, SxidClass::kUnlisted) << code;
    EXPECT_NE(std::string(s->meaning), "") << code;
    EXPECT_NE(std::string(s->advice), "") << code;
  }
  EXPECT_GT(listed, 90);  // Tables 21-24 of the guide
  EXPECT_EQ(find_sxid(9999), nullptr);
  EXPECT_EQ(find_sxid(26006), nullptr);  // SOE: the guide leaves it to the header
}

TEST(SxidCatalog, TheGuidesClasses) {
  EXPECT_EQ(find_sxid(12028)->guide, SxidClass::kNonFatal);
  EXPECT_EQ(find_sxid(20034)->guide, SxidClass::kFatal);
  EXPECT_EQ(find_sxid(12020)->guide, SxidClass::kAlwaysFatal);
  EXPECT_EQ(find_sxid(10004)->guide, SxidClass::kNotable);
  EXPECT_STREQ(sxid_class_name(SxidClass::kAlwaysFatal), "always fatal");
}

TEST(SxidCatalog, BlocksAndTheRenumbering) {
  EXPECT_EQ(sxid_block(24007, ""), "NPORT source track");  // not SOE
  EXPECT_EQ(sxid_block(26006, "SOE HALTED"), "SOE firmware");
  // Before 550.40.07: 28xxx multicast, 29xxx reduction (the guide's example).
  EXPECT_EQ(sxid_block(28006, "MC TS crumbstore MCTO"), "NPORT multicast tstate");
  EXPECT_EQ(sxid_block(29006, "MC TS crumbstore MCTO"), "NPORT multicast tstate");
  EXPECT_EQ(sxid_block(28001, "OSFP Thermal Warn Activated"),
            "OSFP thermal (NPORT multicast tstate before driver 550.40.07)");
  EXPECT_EQ(sxid_block(29003, ""),
            "NPORT multicast tstate (reduction tstate before driver 550.40.07)");
  EXPECT_EQ(sxid_block(30006, ""), "NPORT reduction tstate");
  EXPECT_EQ(sxid_block(31000, ""), "");
}

}  // namespace
}  // namespace gd
