// nvml.init-failed / nvml.init-hang: the NVML probe child hung, crashed,
// could not load libnvidia-ml, or nvmlInit returned an error.
#include <cstdio>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr const char* kFailed = "nvml.init-failed";
constexpr const char* kHang = "nvml.init-hang";

// What an nvmlInit error usually means, and where the narrower finding is.
std::string init_hint(int rc) {
  switch (rc) {
    case 9:
      return "The kernel driver is not loaded (see driver.not-loaded).";
    case 18:
      return "Libraries and kernel module differ (see driver.library-mismatch).";
    case 4:
      return "No permission on /dev/nvidia* (see devnodes.permission).";
    case 2:
      return "Check the device nodes and the device cgroup (devnodes.*, cgroup.*).";
    case 12:
      return "A library NVML needs is missing: reinstall the driver's user-space part.";
    case 15:
      return "A GPU is lost: sudo dmesg | grep -i -e xid -e 'fallen off'.";
    default:
      return "sudo dmesg | grep -i -e nvrm -e nvidia shows the driver's side.";
  }
}

Finding failed(const Snapshot& s, const std::string& summary, Severity sev) {
  Finding f = make_finding(kFailed, sev, summary);
  f.evidence.push_back("library: " + (s.nvml.library_loaded.empty() ? s.nvml.library_requested
                                                                    : s.nvml.library_loaded));
  return f;
}

}  // namespace

std::vector<Finding> check_nvml_init(const Snapshot& s, const Config&) {
  const NvmlInfo& n = s.nvml;
  if (!n.attempted) {
    std::string why = "The NVML probe was not run.";
    return {make_finding(kFailed, Severity::kNotApplicable, why),
            make_finding(kHang, Severity::kNotApplicable, why)};
  }
  bool driver = nvidia_driver_loaded(s);
  if (child_timed_out(n.child_error)) {
    Finding hang = make_finding(kHang, Severity::kFail,
                                "nvmlInit did not return within " + deadline_text(s) +
                                    " s: the driver is stuck, usually on a GPU that stopped "
                                    "answering.");
    hang.evidence.push_back("deadline_s: " + deadline_text(s));
    hang.evidence.push_back("NVML child: " + n.child_error);
    hang.evidence.push_back("library: " +
                            (n.library_loaded.empty() ? n.library_requested : n.library_loaded));
    hang.remedy = {"sudo dmesg | grep -i -e xid -e 'fallen off' -e nvrm   # the GPU at fault",
                   "nvidia-smi will hang the same way; a GPU reset (sudo nvidia-smi -r -i <N>) "
                   "or a reboot clears it."};
    return {make_finding(kFailed, Severity::kNotApplicable,
                         "NVML did not finish (see nvml.init-hang)."),
            hang};
  }
  Finding ok_hang = make_finding(kHang, Severity::kOk, "NVML answered within the deadline.");
  if (!n.child_error.empty()) {
    Finding f =
        failed(s, "The NVML probe did not complete: " + n.child_error + ".", Severity::kFail);
    f.evidence.push_back("NVML child: " + n.child_error);
    f.remedy = {"Run nvidia-smi: if it crashes too, reinstall the driver's user-space part.",
                "sudo dmesg | grep -i -e nvrm -e nvidia"};
    return {f, ok_hang};
  }
  if (n.library_loaded.empty() && s.driver.wsl.detected) {
    // Under WSL the Windows driver brings NVML (facts §13); check `wsl` says why it is not there.
    Finding f = failed(s,
                       "The NVML library cannot be loaded; under WSL it is the Windows driver's, "
                       "in /usr/lib/wsl/lib (see the wsl.* findings).",
                       Severity::kWarn);
    if (!n.dlopen_error.empty()) f.evidence.push_back("dlopen: " + n.dlopen_error);
    f.remedy = {
        "ls /usr/lib/wsl/lib   # libnvidia-ml.so.1 comes with the NVIDIA driver on Windows"};
    return {f, ok_hang};
  }
  if (n.library_loaded.empty()) {
    Finding f = failed(s,
                       driver ? "The NVML library (libnvidia-ml.so.1) cannot be loaded although "
                                "the driver is loaded."
                              : "The NVML library cannot be loaded; expected without the NVIDIA "
                                "driver (see driver.not-loaded).",
                       driver ? Severity::kFail : Severity::kWarn);
    if (!n.dlopen_error.empty()) f.evidence.push_back("dlopen: " + n.dlopen_error);
    f.remedy = {"ldconfig -p | grep libnvidia-ml   # is the driver's NVML installed?",
                "Install the driver's user-space libraries (e.g. the nvidia-utils-<branch> / "
                "libnvidia-compute-<branch> packages of the loaded driver)."};
    if (s.container.in_container) {
      f.remedy.push_back("In a container: NVIDIA_DRIVER_CAPABILITIES must include utility.");
    }
    return {f, ok_hang};
  }
  if (n.init_rc != 0) {
    bool root_elsewhere = !driver;
    Finding f = failed(s,
                       "NVML does not start: " +
                           (n.init_symbol.empty() ? std::string("nvmlInit") : n.init_symbol) +
                           " returned " + nvml_error(n.init_rc) + ".",
                       root_elsewhere ? Severity::kWarn : Severity::kFail);
    f.evidence.push_back((n.init_symbol.empty() ? std::string("nvmlInit") : n.init_symbol) + ": " +
                         nvml_error(n.init_rc));
    if (!s.driver.version.empty()) f.evidence.push_back("kernel module: " + s.driver.version);
    f.remedy.push_back(init_hint(n.init_rc));
    return {f, ok_hang};
  }
  std::string summary =
      (n.init_symbol.empty() ? std::string("nvmlInit") : n.init_symbol) + " succeeded";
  if (n.device_count.ok())
    summary += "; NVML sees " + std::to_string(n.device_count.value) + " GPU(s)";
  if (n.driver_version.ok()) summary += " (driver " + n.driver_version.value + ")";
  return {make_finding(kFailed, Severity::kOk, summary + "."), ok_hang};
}

}  // namespace gd
