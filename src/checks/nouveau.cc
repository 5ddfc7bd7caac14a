// driver.nouveau: the open-source nouveau driver (or nova_core, its
// successor) is loaded or holds a GPU, which keeps the NVIDIA driver from
// binding it. Seen on the bus and in the module list, or in the kernel log:
// nouveau's own lines, or the NVIDIA driver finding a GPU already bound to
// one of them (explain reads only the log).
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "util/ascii.h"

namespace gd {
namespace {

std::vector<std::string> blacklist_steps() {
  return {
      "printf 'blacklist nouveau\\noptions nouveau modeset=0\\nblacklist nova_core\\nblacklist "
      "nova_drm\\n' | "
      "sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
      "sudo update-initramfs -u   # Debian/Ubuntu; on RHEL/Fedora: sudo dracut --force",
      "sudo reboot",
      "After the reboot: lsmod | grep -e nouveau -e nova (nothing) and nvidia-smi (the GPUs)."};
}

bool open_source_driver_in_log(const KernelEvent& e) {
  if (e.kind == "nouveau") return true;
  if (e.kind != "nvrm" || e.type != "bound-elsewhere") return false;
  std::string m = ascii_lower(e.message);
  return m.find("nouveau") != std::string::npos || m.find("nova") != std::string::npos;
}

}  // namespace

std::vector<Finding> check_nouveau(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.nouveau";
  const ModuleInfo* mod = find_module(s, "nouveau");
  std::vector<const PciDevice*> held;
  for (const auto& d : s.pci) {
    if (d.driver == "nouveau") held.push_back(&d);
  }
  std::vector<std::string> from_log;
  for (const KernelEvent& e : s.kernel_log.events) {
    if (open_source_driver_in_log(e)) from_log.push_back(event_evidence(s, e));
  }
  auto gpus = pci_gpus(s);
  if (mod == nullptr && held.empty() && !from_log.empty()) {
    Finding f = make_finding(kId, Severity::kFail,
                             "The log shows nouveau or nova_core loaded or holding the GPU, so the "
                             "NVIDIA driver cannot use it.");
    f.evidence = std::move(from_log);
    f.remedy = blacklist_steps();
    return {f};
  }
  if (mod == nullptr && held.empty()) {
    if (gpus.empty()) return not_applicable(kId, "No NVIDIA GPU on the PCI bus.");
    return all_ok(kId, "nouveau is not loaded and holds none of the " +
                           std::to_string(gpus.size()) + " NVIDIA GPU(s).");
  }
  std::string summary =
      held.empty()
          ? "The open-source nouveau driver is loaded; it conflicts with the NVIDIA driver."
          : "The open-source nouveau driver holds " + std::to_string(held.size()) +
                " NVIDIA device(s), so the NVIDIA driver cannot use them.";
  Finding f = make_finding(kId, Severity::kFail, summary);
  if (mod != nullptr) f.evidence.push_back(module_evidence(*mod));
  for (const PciDevice* d : held) {
    if (d->kind == PciKind::kGpu) f.gpus.push_back(d->bdf);
    f.evidence.push_back(gpu_label(s, *d) + " bound to driver nouveau");
  }
  f.evidence.insert(f.evidence.end(), from_log.begin(), from_log.end());
  f.remedy = blacklist_steps();
  return {f};
}

}  // namespace gd
