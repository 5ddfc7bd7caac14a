// pcie.errors: PCIe AER errors on a GPU's link in the kernel log. A fatal
// uncorrected error usually precedes Xid 79; a storm of corrected errors
// (RxErr, BadTLP, Replay) means a poor link: riser, slot, retimer, cable.
#include <algorithm>

#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_pcie_errors(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "pcie.errors";
  if (!kernel_log_read(s)) {
    return not_applicable(kId, "The kernel log could not be read (see kernel-log.unreadable).");
  }
  // Only a GPU's link matters here; without a PCI listing (explain), every
  // AER line pasted is taken as about a GPU.
  std::vector<const PciDevice*> gpus = pci_gpus(s);
  auto is_gpu = [&](const std::string& bdf) {
    if (s.pci.empty()) return true;
    return std::any_of(gpus.begin(), gpus.end(), [&](const PciDevice* d) { return d->bdf == bdf; });
  };
  Severity worst = Severity::kOk;
  Finding f = make_finding(kId, Severity::kOk, "");
  int corrected = 0, nonfatal = 0, fatal = 0;
  for (const KernelEvent* e : events_of(s, "aer")) {
    if (!in_window(*e, c) || !is_gpu(e->gpu)) continue;
    Severity sev = Severity::kInfo;
    if (e->type == "uncorrected-fatal") {
      sev = Severity::kFail;
      fatal += e->count;
    } else if (e->type == "uncorrected-nonfatal") {
      sev = Severity::kWarn;
      nonfatal += e->count;
    } else {
      corrected += e->count;
      if (e->count >= c.pcie_corrected_warn_count) sev = Severity::kWarn;
    }
    worst = worse(worst, sev);
    f.evidence.push_back(event_evidence(s, *e));
    if (!e->gpu.empty() && std::find(f.gpus.begin(), f.gpus.end(), e->gpu) == f.gpus.end()) {
      f.gpus.push_back(e->gpu);
    }
  }
  if (f.evidence.empty()) {
    return all_ok(kId, "No PCIe AER error on a GPU's link in the last " +
                           format_age(c.kernel_log_window_s) + ".");
  }
  f.severity = worst;
  f.summary = "PCIe AER errors on " + std::to_string(f.gpus.size()) + " GPU link(s) in the last " +
              format_age(c.kernel_log_window_s) + ": " + std::to_string(fatal) + " fatal, " +
              std::to_string(nonfatal) + " non-fatal, " + std::to_string(corrected) + " corrected.";
  f.remedy = {"Check the link: sudo lspci -vv -s <address> | grep -e LnkSta -e UESta -e CESta",
              "Corrected errors in bulk or any uncorrected error: reseat the GPU or riser, check "
              "the slot and retimers; update the system BIOS/firmware.",
              "A fatal error usually takes the GPU off the bus (Xid 79): drain and reboot."};
  return {f};
}

}  // namespace gd
