// driver.module-missing-for-kernel: no nvidia.ko exists for the running
// kernel, so the driver cannot load: its DKMS build failed, or the kernel was
// updated without the driver's modules for it (Ubuntu's
// linux-modules-nvidia-*-<release>). Judged from modules.dep of the running
// kernel and of the others under /lib/modules, or from modprobe's and DKMS's
// own words in a pasted log ("Module nvidia not found in directory
// /lib/modules/...", "Bad return status for module build on kernel").
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "driver.module-missing-for-kernel";

std::vector<std::string> fixes(const DriverInfo& d) {
  std::vector<std::string> out = {
      "sudo dkms autoinstall   # builds the driver for the running kernel; its errors are in "
      "/var/lib/dkms/nvidia/*/build/make.log",
      "or install the driver's modules for this kernel (Ubuntu: sudo apt install "
      "linux-modules-nvidia-<branch>-$(uname -r)), then sudo modprobe nvidia"};
  if (!d.kernels_with_nvidia.empty()) {
    out.push_back("or boot a kernel it was built for: " + join(d.kernels_with_nvidia, ", "));
  }
  return out;
}

}  // namespace

std::vector<Finding> check_module_built(const Snapshot& s, const Config&) {
  std::vector<std::string> from_log;
  for (const KernelEvent& e : s.kernel_log.events) {
    if (e.kind == "nvrm" && (e.type == "module-missing" || e.type == "dkms-build-failed")) {
      from_log.push_back(event_evidence(s, e));
    }
  }
  const DriverInfo& d = s.driver;
  if (d.nvidia_module_built == 0 && !nvidia_driver_loaded(s) && !pci_gpus(s).empty()) {
    Finding f = make_finding(kId, Severity::kFail,
                             fmt::format("No NVIDIA kernel module is built for the running kernel "
                                         "{}, so the driver cannot load.",
                                         d.kernel_release));
    f.evidence.push_back("/lib/modules/" + d.kernel_release + "/modules.dep lists no nvidia.ko");
    f.evidence.push_back(d.kernels_with_nvidia.empty()
                             ? std::string("no other kernel under /lib/modules has one either")
                             : "built for: " + join(d.kernels_with_nvidia, ", "));
    f.evidence.insert(f.evidence.end(), from_log.begin(), from_log.end());
    f.remedy = fixes(d);
    return {f};
  }
  if (!from_log.empty() && !nvidia_driver_loaded(s)) {
    Finding f = make_finding(kId, Severity::kFail,
                             "No NVIDIA kernel module exists for the running kernel: modprobe "
                             "finds none, or DKMS failed to build it.");
    f.evidence = std::move(from_log);
    f.remedy = fixes(d);
    return {f};
  }
  if (nvidia_driver_loaded(s)) return all_ok(kId, "The nvidia module is loaded.");
  if (d.nvidia_module_built == 1) {
    return all_ok(kId, "nvidia.ko is built for the running kernel " + d.kernel_release +
                           " (not loaded: see driver.not-loaded).");
  }
  return not_applicable(kId, d.kernel_release.empty()
                                 ? "The running kernel's modules were not read."
                                 : "No modules.dep for the running kernel " + d.kernel_release +
                                       " (a container sees none).");
}

}  // namespace gd
