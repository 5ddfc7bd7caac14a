// fabric.ib-modules-missing and fabric.nvlsm-not-running, link 2 of the
// fabric chain (docs/fabric.md). On an NVLink5 baseboard (HGX/DGX B200,
// B300) the NVSwitches sit behind a ConnectX-7 management bridge: the
// fabric manager and NVLSM, the NVLink subnet manager, reach them through
// its InfiniBand port. mlx5_ib makes that port an InfiniBand device (else
// the start script finds none and falls back to "Detected Pre-NVL5
// system"), ib_umad gives NVLSM its umad nodes (else: Kernel module
// "ib_umad" has not been loaded, fabric manager cannot be started), and
// the fabric manager's unit starts NVLSM (Fabric Manager User Guide, HGX
// B200/B300 sections; spectrocloud/CanvOS#700; siderolabs/docs#581).
#include <algorithm>

#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/fabric.h"
#include "util/text.h"

namespace gd {

namespace {

bool module_loaded(const Snapshot& s, const std::string& name) {
  return find_module(s, name) != nullptr;
}

std::string bridge_list(const FabricFacts& ff) {
  std::vector<std::string> out;
  for (const NvlinkBridge* b : ff.bridges) {
    std::string port_text;
    for (const IbPort& p : b->ports) {
      port_text += " port " + std::to_string(p.port) + " " + p.state +
                   (p.sm_disabled ? " (SM disabled)" : "");
    }
    out.push_back(b->bdf + (b->ib_device.empty() ? " (no InfiniBand device)"
                                                 : " = " + b->ib_device + port_text));
  }
  return join(out, "; ");
}

std::vector<Finding> modules_finding(const Snapshot& s, const FabricFacts& ff) {
  constexpr const char* kId = "fabric.ib-modules-missing";
  // What the modules make is the proof they are in, whatever /proc/modules
  // says or could not say: an InfiniBand device on the bridge (mlx5_ib), the
  // MAD interface's ABI file (ib_umad).
  bool ib_device = std::any_of(ff.bridges.begin(), ff.bridges.end(),
                               [](const NvlinkBridge* b) { return !b->ib_device.empty(); });
  std::vector<std::string> missing;
  if (!ib_device && !module_loaded(s, "mlx5_ib")) missing.push_back("mlx5_ib");
  if (!s.fabric.umad && !module_loaded(s, "ib_umad")) missing.push_back("ib_umad");
  std::vector<const KernelEvent*> said = events_for_finding(s, kId);
  if (missing.empty() && said.empty()) {
    return all_ok(kId, "mlx5_ib and ib_umad are loaded for the NVLink management bridge.");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "This NVLink5 system's management bridge is not usable: " +
                               (missing.empty() ? std::string("ib_umad was missing")
                                                : join(missing, " and ") + " not loaded") +
                               ", so NVLSM and the fabric manager cannot configure the NVSwitches "
                               "and CUDA cannot start.");
  f.evidence.push_back(ff.why);
  f.evidence.push_back("management bridge: " + bridge_list(ff));
  for (const auto& m : missing) {
    f.evidence.push_back(m + ": not in /proc/modules" +
                         (m == "ib_umad" ? " (no /sys/class/infiniband_mad/abi_version)" : ""));
  }
  for (const KernelEvent* e : said) f.evidence.push_back(event_evidence(s, *e));
  // Harmless on a PCIe machine, these say here that the start script and
  // the fabric manager did not see the bridge.
  for (const char* type : {"pre-nvl5", "no-nvswitch"}) {
    for (const KernelEvent* e : fabric_manager_events(s, type)) {
      f.evidence.push_back(event_evidence(s, *e));
    }
  }
  std::string mods = missing.empty() ? "mlx5_ib ib_umad" : join(missing, " ");
  f.remedy = {"sudo modprobe -a " + mods,
              "printf '%s\\n' " + mods +
                  " | sudo tee /etc/modules-load.d/nvlink5.conf   # load them at every boot",
              "sudo systemctl restart nvidia-fabricmanager   # its start script starts NVLSM"};
  if (std::find(missing.begin(), missing.end(), "mlx5_ib") != missing.end()) {
    f.remedy.insert(f.remedy.begin() + 1,
                    "If modprobe finds no mlx5_ib: install the kernel's extra modules "
                    "(Ubuntu: linux-modules-extra-$(uname -r)) or the DOCA/OFED driver.");
  }
  return {f};
}

std::vector<Finding> nvlsm_finding(const Snapshot& s, const FabricFacts& ff) {
  constexpr const char* kId = "fabric.nvlsm-not-running";
  bool nvlsm = program_running(s, "nvlsm");
  bool fm = program_running(s, "nv-fabricmanager");
  if (nvlsm) return all_ok(kId, "NVLSM, the NVLink subnet manager, is running.");
  // Not running and the fabric manager not running either: the fabric
  // manager's unit starts NVLSM, so starting it is the one fix
  // (fabric-manager.not-running) unless NVLSM is not even installed.
  if (!fm && s.fabric.nvlsm_binary) {
    return all_ok(
        kId, "NVLSM is installed; the fabric manager's unit starts it with the fabric manager.");
  }
  Finding f = make_finding(
      kId, Severity::kFail,
      s.fabric.nvlsm_binary
          ? "NVLSM, the NVLink subnet manager this NVLink5 system needs, is not running beside "
            "the fabric manager, so the NVSwitches are not configured."
          : "NVLSM, the NVLink subnet manager this NVLink5 system needs, is not installed, so "
            "the fabric manager cannot configure the NVSwitches.");
  f.evidence.push_back(ff.why);
  f.evidence.push_back(std::string("nvlsm: no such process; /opt/nvidia/nvlsm/sbin/nvlsm ") +
                       (s.fabric.nvlsm_binary ? "present" : "missing"));
  if (fm) f.evidence.push_back("nv-fabricmanager: running");
  for (const KernelEvent* e : events_for_finding(s, kId)) {
    f.evidence.push_back(event_evidence(s, *e));
  }
  std::string from;
  std::string driver = module_version(s, &from);
  std::string branch = driver.empty() ? "<branch>" : driver.substr(0, driver.find('.'));
  if (!s.fabric.nvlsm_binary) {
    f.remedy.push_back("sudo apt-get install nvlink5-" + branch +
                       "   # NVLSM, libnvsdm and the fabric manager for this driver branch");
  }
  f.remedy.push_back("sudo systemctl restart nvidia-fabricmanager   # it starts NVLSM first");
  f.remedy.push_back(
      "journalctl -u nvidia-fabricmanager -b   # the start script says which port it chose "
      "and why NVLSM stopped");
  return {f};
}

}  // namespace

std::vector<Finding> check_nvlink_network(const Snapshot& s, const Config&) {
  FabricFacts ff = fabric_facts(s);
  if (ff.kind != FabricKind::kNvLink5) {
    std::string why = "Not an NVLink5 baseboard: no NVLink management bridge (VPD SW_MNG) found.";
    auto out = not_applicable("fabric.ib-modules-missing", why);
    auto more = not_applicable("fabric.nvlsm-not-running", why);
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  auto out = modules_finding(s, ff);
  // Without the modules NVLSM cannot run; that one finding is the cause.
  if (out.front().severity == Severity::kFail) return out;
  auto more = nvlsm_finding(s, ff);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

}  // namespace gd
