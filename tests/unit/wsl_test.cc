// WSL (docs/nvidia-facts.md §13): the driver probe over the WSL trees of
// tests/roots, check `wsl`, and the Linux-driver checks answering n/a there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checks/checks.h"
#include "checks/runner.h"
#include "probe/file_probes.h"
#include "probe/rootfs.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

Snapshot probed(const std::string& tree) {
  Snapshot s;
  probe_driver_at(RootFs(std::string(GD_SOURCE_DIR) + "/tests/roots/" + tree), &s);
  return s;
}

TEST(WslProbe, ReadsTheGuestsKernelDeviceAndLibraries) {
  Snapshot s = probed("wsl2");
  const WslInfo& w = s.driver.wsl;
  EXPECT_TRUE(w.detected);
  EXPECT_FALSE(w.wsl1);
  EXPECT_TRUE(w.dxg);
  EXPECT_EQ(w.lib_dir_configured, 1);
  EXPECT_NE(std::find(w.libs.begin(), w.libs.end(), "libcuda.so.1"), w.libs.end());
  EXPECT_EQ(s.driver.kernel_release, "5.15.153.1-microsoft-standard-WSL2");

  s = probed("wsl1");
  EXPECT_TRUE(s.driver.wsl.detected);
  EXPECT_TRUE(s.driver.wsl.wsl1);
  EXPECT_FALSE(s.driver.wsl.dxg);

  s = probed("wsl2-no-libs");
  EXPECT_TRUE(s.driver.wsl.libs.empty());
  EXPECT_EQ(s.driver.wsl.lib_dir_configured, 0);

  // A native machine is no WSL.
  EXPECT_FALSE(probed("ws-4x4090-new-kernel").driver.wsl.detected);
  EXPECT_FALSE(probed("ws-4x4090").driver.wsl.detected);
}

Snapshot wsl2_machine() {
  Snapshot s = ws_4x4090();
  unload_driver(s);
  s.pci.clear();
  s.driver.kernel_release = "5.15.153.1-microsoft-standard-WSL2";
  s.driver.wsl = WslInfo{true, false, true, {"libcuda.so.1", "libnvidia-ml.so.1"}, 1};
  user_run(s).library_requested = "libcuda.so.1";
  user_run(s).library_loaded = "/usr/lib/wsl/lib/libcuda.so.1";
  return s;
}

TEST(WslCheck, HealthyWsl2) {
  for (const auto& f : check_wsl(wsl2_machine(), kConfig)) {
    EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  }
  for (const auto& f : check_wsl(ws_4x4090(), kConfig)) {
    EXPECT_EQ(f.severity, Severity::kNotApplicable) << describe(f);
  }
}

TEST(WslCheck, Wsl1AndNoDxgHaveNoGpu) {
  Snapshot s = wsl2_machine();
  s.driver.wsl.wsl1 = true;
  s.driver.wsl.dxg = false;
  s.driver.kernel_release = "4.4.0-19041-Microsoft";
  Finding f = only(check_wsl(s, kConfig), "wsl.no-gpu-support");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("WSL 1"), std::string::npos) << f.summary;
  s.driver.wsl.wsl1 = false;
  f = only(check_wsl(s, kConfig), "wsl.no-gpu-support");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "/dev/dxg: absent")) << describe(f);
}

TEST(WslCheck, LibrariesMissingOrOffTheLoadersPath) {
  Snapshot s = wsl2_machine();
  s.driver.wsl.libs = {"libdxcore.so"};
  EXPECT_EQ(only(check_wsl(s, kConfig), "wsl.libs-missing").severity, Severity::kFail);
  s = wsl2_machine();
  s.driver.wsl.lib_dir_configured = 0;
  user_run(s).library_loaded.clear();
  user_run(s).dlopen_error = "libcuda.so.1: cannot open shared object file: No such file";
  Finding f = only(check_wsl(s, kConfig), "wsl.libs-missing");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(remedy_has(f, "ld.wsl.conf")) << describe(f);
}

TEST(WslCheck, ALinuxDriverInsideShadowsTheWindowsOne) {
  Snapshot s = wsl2_machine();
  user_run(s).library_loaded = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  user_run(s).init_rc = 100;
  Finding f = only(check_wsl(s, kConfig), "wsl.libs-shadowed");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  // A library the user named on the command line says nothing of the loader.
  user_run(s).library_requested = "/opt/lib/libcuda.so.1";
  EXPECT_EQ(only(check_wsl(s, kConfig), "wsl.libs-shadowed").severity, Severity::kNotApplicable);
}

TEST(WslCheck, LinuxDriverChecksAnswerNotApplicable) {
  Snapshot s = wsl2_machine();
  Report r = run_checks(s, kConfig, registry_entries({"driver-loaded", "devnodes", "uvm", "wsl"}));
  for (const auto& f : r.findings) {
    if (f.id.starts_with("wsl.")) {
      EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
    } else {
      EXPECT_EQ(f.severity, Severity::kNotApplicable) << describe(f);
      EXPECT_NE(f.summary.find("WSL"), std::string::npos) << describe(f);
    }
  }
  // Without WSL the same snapshot fails them: no module, no nodes.
  s.driver.wsl = WslInfo{};
  r = run_checks(s, kConfig, registry_entries({"driver-loaded"}));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].severity, Severity::kFail);
}

}  // namespace
}  // namespace gd
