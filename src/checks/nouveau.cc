// driver.nouveau: the open-source nouveau driver is loaded or holds a GPU,
// which keeps the NVIDIA driver from binding it.
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_nouveau(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.nouveau";
  const ModuleInfo* mod = find_module(s, "nouveau");
  std::vector<const PciDevice*> held;
  for (const auto& d : s.pci) {
    if (d.driver == "nouveau") held.push_back(&d);
  }
  auto gpus = pci_gpus(s);
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
  f.remedy = {
      "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
      "/etc/modprobe.d/blacklist-nouveau.conf",
      "sudo update-initramfs -u   # Debian/Ubuntu; on RHEL/Fedora: sudo dracut --force",
      "sudo reboot", "After the reboot: lsmod | grep nouveau (nothing) and nvidia-smi (the GPUs)."};
  return {f};
}

}  // namespace gd
