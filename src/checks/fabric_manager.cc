// fabric-manager.not-running: an NVSwitch system needs nv-fabricmanager,
// running and of exactly the driver's version; without it cuInit returns
// CUDA_ERROR_SYSTEM_NOT_READY (802) and Hopper+ GPUs stay outside the
// fabric (nvidia-facts.md §8).
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr int kSystemNotReady = 802;
constexpr int kFabricCompleted = 3;
constexpr int kNvmlArchHopper = 9;

const char* fabric_state_name(int state) {
  switch (state) {
    case 0:
      return "NOT_SUPPORTED";
    case 1:
      return "NOT_STARTED";
    case 2:
      return "IN_PROGRESS";
    case 3:
      return "COMPLETED";
    default:
      return "UNKNOWN";
  }
}

bool has_nvswitch_node(const Snapshot& s) {
  for (const auto& n : s.devnodes) {
    if (n.exists && n.path.rfind("/dev/nvidia-nvswitch", 0) == 0) return true;
  }
  return false;
}

bool fm_process_running(const Snapshot& s) {
  for (const auto& p : s.processes) {
    // /proc/PID/comm keeps 15 characters: "nv-fabricmanage".
    if (p.comm.rfind("nv-fabricmanage", 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<Finding> check_fabric_manager(const Snapshot& s, const Config&) {
  constexpr const char* kId = "fabric-manager.not-running";
  const CudaRun* r = user_cuda_run(s);
  bool rc802 = run_has_rc(r, kSystemNotReady);
  std::vector<std::string> switches;
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kNvSwitch) switches.push_back(d.bdf + " (" + pci_id_text(d) + ")");
  }
  bool nvswitch = !switches.empty() || has_nvswitch_node(s);
  if (!nvswitch && !rc802) {
    return not_applicable(kId,
                          "No NVSwitch on this machine; the fabric manager is only needed "
                          "on NVSwitch systems.");
  }

  std::vector<std::string> evidence;
  std::vector<std::string> gpus;
  const ServiceInfo* svc = find_service(s, "nv-fabricmanager");
  bool running = (svc != nullptr && svc->running) || fm_process_running(s);
  // A container does not see the host's processes: only the fabric state
  // and CUDA's answer can tell there.
  if (!running && !s.container.in_container) {
    evidence.push_back("nv-fabricmanager: not running");
  }
  bool version_bad = false;
  if (svc != nullptr && !svc->version.empty() && !s.driver.version.empty() &&
      svc->version.rfind(s.driver.version, 0) != 0) {
    version_bad = true;
    evidence.push_back("nv-fabricmanager version " + svc->version + " != driver " +
                       s.driver.version);
  }
  for (const auto& g : s.nvml.gpus) {
    if (!g.fabric_state.ok() || !g.architecture.ok() || g.architecture.value < kNvmlArchHopper) {
      continue;
    }
    std::string bdf = g.pci_bus_id.ok() ? g.pci_bus_id.value : "GPU " + std::to_string(g.index);
    if (g.fabric_state.value != kFabricCompleted) {
      evidence.push_back(bdf + ": fabric state " + fabric_state_name(g.fabric_state.value));
      gpus.push_back(bdf);
    } else if (g.fabric_status.ok() && g.fabric_status.value != 0) {
      evidence.push_back(bdf +
                         ": fabric registration failed: " + nvml_error(g.fabric_status.value));
      gpus.push_back(bdf);
    }
  }
  if (rc802 && r != nullptr) {
    for (auto& line : cuda_error_lines(*r)) evidence.push_back(line);
  }

  if (evidence.empty()) {
    std::string summary = "The fabric manager is running";
    if (svc != nullptr && !svc->version.empty()) summary += " (" + svc->version + ")";
    summary += " and every Hopper+ GPU completed fabric registration.";
    return all_ok(kId, summary);
  }
  std::string summary =
      version_bad && running
          ? "The NVIDIA fabric manager's version differs from the driver's, so the NVSwitch "
            "fabric is not set up and CUDA cannot start."
          : "This NVSwitch system's fabric is not set up (the NVIDIA fabric manager is not "
            "running or failed), so CUDA cannot start.";
  Finding f = make_finding(kId, Severity::kFail, summary);
  f.gpus = gpus;
  if (!switches.empty()) f.evidence.push_back("NVSwitches on the PCI bus: " + join(switches, ", "));
  for (auto& e : evidence) f.evidence.push_back(e);
  // Why it stopped, in its own words, where the journal kept them (the
  // kernel-log probe reads nv-fabricmanager's entries beside the kernel's):
  // a version mismatch, a topology it does not know.
  for (const KernelEvent* e : events_for_finding(s, kId)) {
    f.evidence.push_back(event_evidence(s, *e));
  }
  std::string driver =
      s.driver.version.empty() ? std::string("<driver version>") : s.driver.version;
  std::string branch = driver.substr(0, driver.find('.'));
  f.remedy = {"sudo systemctl enable --now nvidia-fabricmanager",
              "Its package must be exactly the driver's version, " + driver +
                  ": apt-cache policy nvidia-fabricmanager-" + branch +
                  "   # the installed version must start with " + driver,
              "If it does not stay up: journalctl -u nvidia-fabricmanager and "
              "/var/log/fabricmanager.log"};
  if (s.container.in_container) {
    f.remedy.insert(f.remedy.begin(), "The fabric manager runs on the host: run these there.");
  }
  return {f};
}

}  // namespace gd
