// Tests of the driver-regression check and its catalog (catalog/driver_regressions.cc).
#include <gtest/gtest.h>

#include "catalog/driver_regressions.h"
#include "checks/checks.h"
#include "snapshot_builders.h"
#include "util/ascii.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

DriverVersion v(const char* text) { return *parse_driver_version(text); }

TEST(DriverRegressions, ExactBuildsBranchRangesAndFixedBounds) {
  EXPECT_EQ(regressions_for(v("535.54.03")).size(), 1u);
  EXPECT_TRUE(regressions_for(v("535.54.04")).empty());
  EXPECT_TRUE(regressions_for(v("535.104.05")).empty());
  EXPECT_EQ(regressions_for(v("535.98")).size(), 1u);
  EXPECT_EQ(regressions_for(v("525.60.13")).size(), 1u);  // before 525.105.17
  EXPECT_TRUE(regressions_for(v("525.105.17")).empty());  // the fix itself
  EXPECT_EQ(regressions_for(v("560.35.03")).size(), 1u);  // the whole branch
  EXPECT_TRUE(regressions_for(v("570.86.15")).empty());
  EXPECT_EQ(regressions_for(v("570.133.20")).size(), 1u);
  EXPECT_TRUE(regressions_for(v("570.144")).empty());  // not among the four builds NVIDIA lists
  EXPECT_EQ(regressions_for(v("331.38")).size(), 2u);  // the build and its branch
  EXPECT_TRUE(regressions_for(v("550.54.14")).empty());
}

TEST(DriverRegressions, EveryRowIsSourcedAndParses) {
  for (const auto& r : driver_regressions()) {
    EXPECT_NE(std::string(r.source).find("https://"), std::string::npos) << r.what;
    EXPECT_FALSE(r.symptoms.empty()) << r.what;
    EXPECT_FALSE(std::string(r.seen_in).empty()) << r.what;
    for (const char* b : r.builds) EXPECT_TRUE(parse_driver_version(b)) << b;
    if (r.builds.empty()) {
      EXPECT_TRUE(parse_driver_version(r.from)) << r.what;
    }
    for (const char* w : r.symptoms) {
      EXPECT_EQ(std::string(w), ascii_lower(w)) << w;  // matched against lowered text
      EXPECT_GE(std::string(w).size(), 4u) << w;       // SubstringIndex's shortest needle
      EXPECT_TRUE(shows_any_regression(w)) << w;
    }
  }
}

TEST(DriverRegressionCheck, WarnsOnAnAffectedBuildWithNothingElseAtHand) {
  Snapshot s = ws_4x4090();
  s.driver.version = "535.98";
  Finding f = only(check_driver_regression(s, kConfig), "driver.known-regression");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_NE(f.summary.find("Driver 535.98 has a known regression"), std::string::npos);
  EXPECT_TRUE(evidence_has(f, "fixed in 535.104.05"));
  EXPECT_TRUE(evidence_has(f, "source: https://github.com/XuehaiPan/nvitop/issues/88"));
  EXPECT_TRUE(remedy_has(f, "install driver 535.104.05 or newer"));
}

TEST(DriverRegressionCheck, ScopeDecidesBetweenWarnAndNote) {
  Snapshot one = ws_4x4090();
  one.driver.version = "560.35.03";
  one.pci.resize(1);  // one GPU: NCCL's peer-to-peer hang cannot happen
  one.nvml.gpus.resize(1);
  EXPECT_EQ(only(check_driver_regression(one, kConfig), "driver.known-regression").severity,
            Severity::kInfo);
  Snapshot four = ws_4x4090();
  four.driver.version = "560.35.03";
  EXPECT_EQ(only(check_driver_regression(four, kConfig), "driver.known-regression").severity,
            Severity::kWarn);
  Snapshot mig = ws_4x4090();
  mig.driver.version = "570.133.20";
  for (auto& g : mig.nvml.gpus) g.mig_mode_current = nv_ok(0);
  Finding off = only(check_driver_regression(mig, kConfig), "driver.known-regression");
  EXPECT_EQ(off.severity, Severity::kInfo);
  EXPECT_TRUE(evidence_has(off, "outside it: MIG-enabled GPUs")) << describe(off);
  mig.nvml.gpus[0].mig_mode_current = nv_ok(1);
  EXPECT_EQ(only(check_driver_regression(mig, kConfig), "driver.known-regression").severity,
            Severity::kWarn);
}

TEST(DriverRegressionCheck, ErrorsAtHandMustLookLikeIt) {
  Snapshot s = ws_4x4090();
  s.driver.version = "525.60.13";
  s.reported.push_back({"cuda-runtime", 2, "out of memory", "RuntimeError: CUDA out of memory", 1});
  Finding ok = only(check_driver_regression(s, kConfig), "driver.known-regression");
  EXPECT_EQ(ok.severity, Severity::kOk);
  EXPECT_TRUE(evidence_has(ok, "the errors at hand do not look like it"));
  s.reported.push_back({"nvrm", 119, "",
                        "NVRM: Xid (PCI:0000:61:00): 119, pid=1346198, "
                        "name=nvidia-smi, Timeout waiting for RPC from GSP!",
                        2});
  Finding warn = only(check_driver_regression(s, kConfig), "driver.known-regression");
  EXPECT_EQ(warn.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(warn, "line 2: NVRM: Xid")) << describe(warn);
}

TEST(DriverRegressionCheck, OkAndNotApplicable) {
  EXPECT_EQ(only(check_driver_regression(ws_4x4090(), kConfig), "driver.known-regression").severity,
            Severity::kOk);
  Snapshot unknown = no_nvidia_machine();
  EXPECT_EQ(only(check_driver_regression(unknown, kConfig), "driver.known-regression").severity,
            Severity::kNotApplicable);
}

}  // namespace
}  // namespace gd
