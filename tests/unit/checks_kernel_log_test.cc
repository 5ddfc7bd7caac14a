// The checks that read the kernel log: the log goes through the real
// scanner into the snapshot, then the check runs.
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "kernlog/scanner.h"
#include "report/events.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;  // 2 h window

// ws_4x4090 with a kernel log read from /dev/kmsg: `lines` in dmesg form,
// "now" 10 s after the last.
Snapshot with_log(const std::vector<std::string>& lines, Snapshot s = ws_4x4090()) {
  KernelLogScanner scanner(2026);
  double last = 0;
  for (const auto& l : lines) {
    scanner.add_line(l);
    if (l.size() > 1 && l[0] == '[') last = std::max(last, std::stod(l.substr(1)));
  }
  s.kernel_log = scanner.finish({.now_boot_s = last + 10, .now_unix_s = {}});
  s.kernel_log.source = "/dev/kmsg";
  return s;
}

const std::string kXid79 =
    "NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

TEST(KernelLogChecks, NotReadIsNotApplicableAndUnreadableIsInfoWithFix) {
  Snapshot s = ws_4x4090();
  for (CheckFn fn : {check_xid, check_fallen_off_bus, check_reset_required, check_pcie_errors}) {
    for (const Finding& f : fn(s, kConfig)) {
      if (f.id == "gpu.fallen-off-bus" || f.id == "gpu.reset-required") {
        continue;  // NVML alone can still speak
      }
      EXPECT_EQ(f.severity, Severity::kNotApplicable) << describe(f);
    }
  }
  s.kernel_log.attempted = true;
  s.kernel_log.unreadable =
      "/dev/kmsg: Operation not permitted (kernel.dmesg_restrict = 1 and no CAP_SYSLOG)";
  s.kernel_log.dmesg_restrict = 1;
  Finding f = only(check_kernel_log(s, kConfig), "kernel-log.unreadable");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_TRUE(evidence_has(f, "dmesg_restrict = 1"));
  EXPECT_TRUE(remedy_has(f, "CAP_SYSLOG"));
  EXPECT_TRUE(remedy_has(f, "sysctl kernel.dmesg_restrict=0"));
  EXPECT_EQ(check_xid(s, kConfig)[0].severity, Severity::kNotApplicable);
}

TEST(KernelLogChecks, CleanLogIsOk) {
  Snapshot s = with_log({"[    4.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14",
                         "[   12.0] usb 1-1: new high-speed USB device"});
  for (CheckFn fn : {check_kernel_log, check_xid, check_fallen_off_bus, check_reset_required,
                     check_pcie_errors}) {
    for (const Finding& f : fn(s, kConfig)) EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  }
}

TEST(KernelLogChecks, Xid79FailsNamesTheGpuAndFallsOffTheBus) {
  Snapshot s = with_log({"[  100.0] " + kXid79, "[  200.0] " + kXid79});
  Finding x = only(check_xid(s, kConfig), "xid.79");
  EXPECT_EQ(x.severity, Severity::kFail);
  EXPECT_EQ(x.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_TRUE(evidence_has(x, "GPU 2 (0000:41:00.0"));  // nvidia-smi index from PCI order
  EXPECT_TRUE(evidence_has(x, "2 times"));
  Finding b = only(check_fallen_off_bus(s, kConfig), "gpu.fallen-off-bus");
  EXPECT_EQ(b.severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(b, "reboot"));
}

TEST(KernelLogChecks, OldEventsOutsideTheWindowAreHistoryNotFailures) {
  Snapshot s = with_log({"[  100.0] " + kXid79, "[20000.0] usb 1-1: noise"});
  Finding x = only(check_xid(s, kConfig), "xid.79");
  EXPECT_EQ(x.severity, Severity::kInfo);
  EXPECT_NE(x.summary.find("outside the 2.0 h window"), std::string::npos) << x.summary;
  EXPECT_EQ(only(check_fallen_off_bus(s, kConfig), "gpu.fallen-off-bus").severity, Severity::kInfo);
  // A wider window makes it count again.
  Config wide;
  wide.kernel_log_window_s = 86400;
  EXPECT_EQ(only(check_xid(s, wide), "xid.79").severity, Severity::kFail);
  // NVML saying the GPU is lost now beats the log's age.
  s.nvml.gpus[2].handle_rc = 15;
  EXPECT_EQ(only(check_fallen_off_bus(s, kConfig), "gpu.fallen-off-bus").severity, Severity::kFail);
}

TEST(KernelLogChecks, ApplicationXidWarnsInformationalXidIsInfo) {
  Snapshot s = with_log({
      "[  10.0] NVRM: Xid (PCI:0000:01:00): 13, pid=41, name=python3, Graphics Exception",
      "[  11.0] NVRM: Xid (PCI:0000:01:00): 63, pid='<unknown>', name=<unknown>, Row Remapper",
      "[  12.0] NVRM: Xid (PCI:0000:01:00): 3, made-up code",
  });
  auto fs = check_xid(s, kConfig);
  EXPECT_EQ(only(fs, "xid.13").severity, Severity::kWarn);
  EXPECT_EQ(only(fs, "xid.63").severity, Severity::kInfo);
  Finding unknown = only(fs, "xid.3");
  EXPECT_EQ(unknown.severity, Severity::kWarn);
  EXPECT_NE(unknown.summary.find("does not know"), std::string::npos);
  EXPECT_EQ(only(check_reset_required(s, kConfig), "gpu.reset-required").severity, Severity::kOk);
}

TEST(KernelLogChecks, ResetRequiredFromXidAndRecoveryAction) {
  Snapshot s = with_log({
      "[  10.0] NVRM: Xid (PCI:0000:21:00): 48, pid='<unknown>', name=<unknown>, DBE",
      "[  20.0] NVRM: Xid (PCI:0000:61:00): 154, GPU recovery action changed from 0x0 (None) to "
      "0x1 (GPU Reset Required)",
  });
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus, (std::vector<std::string>{"0000:21:00.0", "0000:61:00.0"}));
  EXPECT_TRUE(remedy_has(f, "nvidia-smi -r -i 0000:21:00.0,0000:61:00.0"));
  // A later Xid 154 back to None: that GPU was reset.
  Snapshot done = with_log({
      "[  10.0] NVRM: Xid (PCI:0000:21:00): 48, pid='<unknown>', name=<unknown>, DBE",
      "[  30.0] NVRM: Xid (PCI:0000:21:00): 154, GPU recovery action changed from 0x1 (GPU Reset "
      "Required) to 0x0 (None)",
  });
  EXPECT_EQ(only(check_reset_required(done, kConfig), "gpu.reset-required").severity,
            Severity::kOk);
}

TEST(KernelLogChecks, PcieErrorsOnlyOnGpuLinksBySeverity) {
  std::vector<std::string> lines;
  for (int i = 0; i < 12; ++i) {
    lines.push_back("[  " + std::to_string(10 + i) +
                    ".0] pcieport 0000:00:01.1: AER: Corrected error received: 0000:01:00.0");
  }
  lines.push_back("[  50.0] pcieport 0000:00:1c.0: AER: Corrected error received: 0000:05:00.0");
  Snapshot s = with_log(lines);
  Finding f = only(check_pcie_errors(s, kConfig), "pcie.errors");
  EXPECT_EQ(f.severity, Severity::kWarn);                       // 12 corrected >= 10
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:01:00.0"});  // 05:00.0 is no GPU
  lines.push_back(
      "[  60.0] pcieport 0000:40:01.1: AER: Uncorrected (Fatal) error received: 0000:41:00.0");
  Finding fatal = only(check_pcie_errors(with_log(lines), kConfig), "pcie.errors");
  EXPECT_EQ(fatal.severity, Severity::kFail);
  EXPECT_NE(fatal.summary.find("1 fatal"), std::string::npos) << fatal.summary;
}

TEST(KernelLogChecks, ModuleLoadFailedFromTheLog) {
  Snapshot s = ws_4x4090();
  unload_driver(s);
  s = with_log({"[    5.0] Lockdown: modprobe: unsigned module loading is restricted; see man "
                "kernel_lockdown.7"},
               s);
  Finding f = only(check_module_load_failed(s, kConfig), "driver.module-load-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("Secure Boot"), std::string::npos);
  EXPECT_TRUE(remedy_has(f, "mokutil"));
  // RmInitAdapter is decoded when the driver is loaded but a GPU failed.
  Snapshot r = with_log({"[  9.0] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x65:1792)"});
  pci_at(r, "0000:41:00.0")->driver = "";
  Finding g = only(check_module_load_failed(r, kConfig), "driver.module-load-failed");
  EXPECT_EQ(g.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(g, "NV_ERR_TIMEOUT")) << describe(g);
  // Only the log is known (explain): the log alone decides.
  Snapshot text = with_log(
      {"[  9.0] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x65:1792)"}, Snapshot{});
  text.unobserved = {"driver", "pci"};
  EXPECT_EQ(only(check_module_load_failed(text, kConfig), "driver.module-load-failed").severity,
            Severity::kFail);
}

TEST(KernelLogChecks, EventsPastTheFoldLimitAreReported) {
  std::vector<std::string> lines;
  char b[160];
  for (size_t i = 0; i < kMaxKernelEvents + 5; ++i) {  // forged PCI addresses, one event each
    std::snprintf(b, sizeof b, "[ 1.0] NVRM: Xid (PCI:%04zx:%02zx:00): 79, GPU has fallen", i / 256,
                  i % 256);
    lines.emplace_back(b);
  }
  Snapshot s = with_log(lines);
  ASSERT_EQ(s.kernel_log.unfolded, 5u);
  Finding f = only(check_kernel_log(s, kConfig), "kernel-log.unreadable");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_TRUE(evidence_has(f, "more than 8192 distinct NVIDIA events")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "5 occurrence(s) of further events")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "gpudoctor logs"));
  EXPECT_NE(render_events_text(s).find("note: The log names more than 8192"), std::string::npos);
  EXPECT_NE(render_events_json(s).find("\"unfolded\": 5"), std::string::npos);

  s.kernel_log.unreadable = "/dev/kmsg: Operation not permitted";  // both at once
  f = only(check_kernel_log(s, kConfig), "kernel-log.unreadable");
  EXPECT_TRUE(evidence_has(f, "Operation not permitted")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "5 occurrence(s)")) << describe(f);
}

TEST(KernelLogChecks, FormatAge) {
  EXPECT_EQ(format_age(5), "5 s");
  EXPECT_EQ(format_age(600), "10 min");
  EXPECT_EQ(format_age(7200), "2.0 h");
  EXPECT_EQ(format_age(3 * 86400), "3.0 d");
}

}  // namespace
}  // namespace gd
