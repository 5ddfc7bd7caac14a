// driver.module-load-failed: the nvidia module is stuck in a non-Live state,
// or it is loaded but did not take every GPU on the bus (its probe failed
// for them: unsupported GPU, RmInitAdapter failure, GPU off the bus).
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_module_load_failed(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.module-load-failed";
  if (!nvidia_driver_loaded(s)) {
    return not_applicable(kId, "The nvidia module is not loaded at all (see driver.not-loaded).");
  }
  std::vector<std::string> evidence;
  std::vector<std::string> gpus;

  bool stuck = false;
  for (const auto& m : s.driver.modules) {
    if (m.name.rfind("nvidia", 0) == 0 && !m.state.empty() && m.state != "Live") {
      evidence.push_back("/proc/modules: " + m.name + " is in state " + m.state + ", not Live");
      stuck = true;
    }
  }

  const ModuleInfo* nvidia = find_module(s, "nvidia");
  bool nvidia_live = nvidia != nullptr && nvidia->state == "Live";
  int unbound = 0;
  int missing_in_proc = 0;
  auto all = pci_gpus(s);
  for (const PciDevice* d : all) {
    if (nvidia_live && d->driver.empty()) {
      evidence.push_back("GPU " + gpu_label(s, *d) +
                         ": no driver bound although the nvidia module is loaded");
      gpus.push_back(d->bdf);
      ++unbound;
      continue;
    }
    // A container's /proc/driver/nvidia/gpus lists only the GPUs it was
    // given, while sysfs shows the host's: skip the comparison there.
    bool listed = !d->proc_model.empty() || !d->proc_uuid.empty() || d->proc_minor.has_value();
    if (d->driver == "nvidia" && s.driver.proc_driver_nvidia && !listed &&
        !s.container.in_container) {
      evidence.push_back("GPU " + gpu_label(s, *d) +
                         ": bound to nvidia but absent from /proc/driver/nvidia/gpus");
      gpus.push_back(d->bdf);
      ++missing_in_proc;
    }
  }

  if (evidence.empty()) {
    std::string summary = "The nvidia module is Live";
    if (!all.empty())
      summary += " and took all " + std::to_string(all.size()) + " GPU(s) on the bus";
    return all_ok(kId, summary + ".");
  }

  std::string summary;
  if (stuck) {
    summary = "The NVIDIA kernel module did not finish loading.";
  } else {
    int bad = unbound + missing_in_proc;
    summary = "The NVIDIA driver is loaded but failed to initialize " + std::to_string(bad) +
              " of the " + std::to_string(all.size()) + " GPU(s) on the PCI bus.";
  }
  Finding f = make_finding(kId, Severity::kFail, summary);
  f.gpus = gpus;
  f.evidence = evidence;
  if (!s.driver.version.empty()) f.evidence.push_back("driver version " + s.driver.version);
  f.remedy = {
      "Read the driver's reason: sudo dmesg | grep -i -e nvrm -e nvidia",
      "'RmInitAdapter failed' or 'fallen off the bus': reseat/power-cycle the GPU, check its "
      "power cables; 'not supported by the NVIDIA driver': see driver.gpu-unsupported.",
      "Then reload the driver: sudo rmmod nvidia_drm nvidia_modeset nvidia_uvm nvidia && sudo "
      "modprobe nvidia && sudo modprobe nvidia_uvm (or reboot)."};
  return {f};
}

}  // namespace gd
