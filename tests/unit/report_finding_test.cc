// Severity names both ways (the history and the exporter read back what
// severity_name wrote) and which severities say something.
#include <gtest/gtest.h>

#include "checks/finding.h"

namespace gd {
namespace {

TEST(Severity, NamesReadBackToTheSameSeverity) {
  for (Severity s : {Severity::kOk, Severity::kInfo, Severity::kWarn, Severity::kFail,
                     Severity::kNotApplicable}) {
    EXPECT_EQ(severity_from_name(severity_name(s)), s) << severity_name(s);
  }
  EXPECT_EQ(severity_from_name("critical"), Severity::kNotApplicable);
  EXPECT_EQ(severity_from_name(""), Severity::kNotApplicable);
  EXPECT_EQ(severity_from_name("FAIL"), Severity::kNotApplicable);
}

TEST(Severity, InfoWarnAndFailSaySomething) {
  EXPECT_FALSE(says_something(Severity::kOk));
  EXPECT_FALSE(says_something(Severity::kNotApplicable));
  EXPECT_TRUE(says_something(Severity::kInfo));
  EXPECT_TRUE(says_something(Severity::kWarn));
  EXPECT_TRUE(says_something(Severity::kFail));
}

}  // namespace
}  // namespace gd
