// Link 3 of the fabric chain (docs/fabric.md): an NVSwitch system needs
// nv-fabricmanager installed, enabled, running, and of exactly the
// driver's version, as a package and as the binary that runs; without it
// cuInit returns CUDA_ERROR_SYSTEM_NOT_READY (802) and Hopper+ GPUs stay
// outside the fabric (nvidia-facts.md §8). It refuses a driver of another
// version in its own words (NVIDIA/gpu-operator#544):
//   fabric manager NVIDIA GPU driver interface version 530.30.02 don't match
//   with driver version 530.41.03. Please update with matching NVIDIA driver package.
//
// fabric-manager.not-installed, .version-mismatch, .not-running (fail) and
// .not-enabled (warn: it will not come back after a reboot).
#include <optional>
#include <string_view>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/fabric.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr int kSystemNotReady = 802;
constexpr const char* kNotInstalled = "fabric-manager.not-installed";
constexpr const char* kVersion = "fabric-manager.version-mismatch";
constexpr const char* kNotRunning = "fabric-manager.not-running";
constexpr const char* kNotEnabled = "fabric-manager.not-enabled";
constexpr const char* kDeleted = " (deleted)";

struct FmState {
  const ServiceInfo* svc = nullptr;
  bool running = false;
  bool installed = false;
  std::string driver;   // the running driver's version
  std::string branch;   // "550"
  std::string package;  // "nvidia-fabricmanager-550"; unsuffixed from 580 on
  std::vector<std::string> switches;
  std::vector<std::string> gpus;          // GPUs not in the fabric
  std::vector<std::string> fabric_lines;  // their states, and CUDA's 802
};

FmState fm_state(const Snapshot& s, const FabricFacts& ff) {
  FmState st;
  st.svc = find_service(s, "nv-fabricmanager");
  st.running = program_running(s, "nv-fabricmanager");
  st.installed = st.running || s.fabric.fm_binary || !s.fabric.fm_unit.empty() ||
                 (st.svc != nullptr && !st.svc->version.empty());
  std::string from;
  st.driver = module_version(s, &from);
  st.branch = st.driver.empty() ? "<branch>" : st.driver.substr(0, st.driver.find('.'));
  // NVIDIA's packages drop the branch suffix from 580 on (NVIDIA/gpu-driver-container#735).
  auto major = parse_u64(st.branch);
  st.package =
      major && *major >= 580 ? "nvidia-fabricmanager" : "nvidia-fabricmanager-" + st.branch;
  for (const PciDevice* d : ff.switches)
    st.switches.push_back(d->bdf + " (" + pci_id_text(*d) + ")");
  for (const NvmlGpu* g : gpus_outside_fabric(ff)) {
    std::string name = fabric_gpu_name(*g);
    if (g->fabric_state.value != kFabricCompleted) {
      st.fabric_lines.push_back(name + ": fabric state " +
                                fabric_state_name(g->fabric_state.value));
    } else {
      st.fabric_lines.push_back(
          name + ": fabric registration failed: " + nvml_error(g->fabric_status.value));
    }
    st.gpus.push_back(name);
  }
  const CudaRun* r = user_cuda_run(s);
  if (run_has_rc(r, kSystemNotReady)) {
    for (auto& line : cuda_error_lines(*r)) st.fabric_lines.push_back(line);
  }
  return st;
}

void add_context(const FmState& st, const FabricFacts& ff, Finding* f) {
  f->gpus = st.gpus;
  if (!st.switches.empty()) {
    f->evidence.push_back("NVSwitches on the PCI bus: " + join(st.switches, ", "));
  } else if (ff.kind != FabricKind::kNone) {
    f->evidence.push_back(ff.why);
  }
}

std::string install_line(const FmState& st, const FabricFacts& ff) {
  if (ff.kind == FabricKind::kNvLink5) {
    return "sudo apt-get install nvlink5-" + st.branch +
           "   # the fabric manager, NVLSM and libnvsdm for driver " + st.driver;
  }
  // apt takes a version glob (as NVIDIA/gpu-driver-container installs it).
  return "sudo apt-get install '" + st.package + "=" +
         (st.driver.empty() ? "<driver>" : st.driver) +
         "*'   # exactly the driver's version; then apt-mark hold " + st.package;
}

Finding not_installed(const FmState& st, const FabricFacts& ff) {
  Finding f = make_finding(kNotInstalled, Severity::kFail,
                           "This NVSwitch system has no NVIDIA fabric manager installed, so the "
                           "NVLink fabric is never set up and CUDA cannot start.");
  add_context(st, ff, &f);
  f.evidence.push_back(
      "no /usr/bin/nv-fabricmanager, no nvidia-fabricmanager unit, no installed package");
  for (const auto& l : st.fabric_lines) f.evidence.push_back(l);
  f.remedy = {install_line(st, ff), "sudo systemctl enable --now nvidia-fabricmanager"};
  return f;
}

// Version mismatches: the package against the driver, the running binary
// against the installed one, and the fabric manager's own refusal.
Finding version_finding(const Snapshot& s, const FmState& st, const FabricFacts& ff) {
  std::vector<std::string> evidence;
  std::optional<Comparison> package;
  if (st.svc != nullptr && !st.svc->version.empty() && !st.driver.empty()) {
    package = compare_versions("package " + st.package + " vs the running driver", st.svc->version,
                               "==", st.driver);
  }
  const std::string& exe = s.fabric.fm_exe;
  if (std::string_view(exe).ends_with(kDeleted)) {
    evidence.push_back("the running nv-fabricmanager is " + exe +
                       ": the binary on disk was replaced after it started");
  }
  // Its refusal is about the last start; a fabric manager running now
  // with the driver's version has started since.
  bool bad = (package && !package->met) || !evidence.empty();
  if (!st.running || bad) {
    for (const KernelEvent* e : events_for_finding(s, kVersion)) {
      evidence.push_back(event_evidence(s, *e));
    }
  }
  if (evidence.empty() && !bad) {
    Finding ok =
        all_ok(kVersion, package ? "The fabric manager package is " + st.svc->version +
                                       ", the driver's version."
                                 : "No fabric manager version differs from the driver's.")[0];
    if (package) add_comparison(&ok, *package);
    return ok;
  }
  Finding f = make_finding(kVersion, Severity::kFail,
                           "The NVIDIA fabric manager's version differs from the driver's, so it "
                           "refuses to set up the NVSwitch fabric and CUDA cannot start.");
  add_context(st, ff, &f);
  if (package) add_comparison(&f, *package);
  f.evidence.insert(f.evidence.end(), evidence.begin(), evidence.end());
  for (const auto& l : st.fabric_lines) f.evidence.push_back(l);
  f.remedy = {install_line(st, ff),
              "sudo systemctl restart nvidia-fabricmanager   # the binary that runs must be the "
              "new one",
              "If the driver was upgraded without a reboot: reboot, so the kernel module and the "
              "fabric manager are the same version."};
  return f;
}

Finding not_running(const Snapshot& s, const FmState& st, const FabricFacts& ff) {
  std::vector<std::string> evidence;
  // A container does not see the host's processes: only the fabric state
  // and CUDA's answer can tell there.
  if (!st.running && !s.container.in_container) evidence.push_back("nv-fabricmanager: not running");
  if (evidence.empty() && st.fabric_lines.empty()) {
    std::string summary = "The fabric manager is running";
    if (st.svc != nullptr && !st.svc->version.empty()) summary += " (" + st.svc->version + ")";
    summary += " and every Hopper+ GPU completed fabric registration.";
    return all_ok(kNotRunning, summary)[0];
  }
  if (st.running && evidence.empty()) {
    // It runs, yet GPUs are outside the fabric: link 6 says why
    // (fabric.not-registered); this link is fine.
    return all_ok(kNotRunning, "The fabric manager is running.")[0];
  }
  Finding f = make_finding(kNotRunning, Severity::kFail,
                           "This NVSwitch system's fabric is not set up (the NVIDIA fabric manager "
                           "is not running or failed), so CUDA cannot start.");
  add_context(st, ff, &f);
  for (auto& e : evidence) f.evidence.push_back(e);
  for (const auto& l : st.fabric_lines) f.evidence.push_back(l);
  // Why it stopped, in its own words, where the journal or its log kept
  // them: a topology it does not know, a start script that gave up.
  for (const KernelEvent* e : events_for_finding(s, kNotRunning)) {
    f.evidence.push_back(event_evidence(s, *e));
  }
  f.remedy = {"sudo systemctl enable --now nvidia-fabricmanager",
              "Its package must be exactly the driver's version, " +
                  (st.driver.empty() ? std::string("<driver version>") : st.driver) +
                  ": apt-cache policy " + st.package +
                  "   # the installed version must start with " +
                  (st.driver.empty() ? std::string("<driver version>") : st.driver),
              "If it does not stay up: journalctl -u nvidia-fabricmanager and "
              "/var/log/fabricmanager.log"};
  if (s.container.in_container) {
    f.remedy.insert(f.remedy.begin(), "The fabric manager runs on the host: run these there.");
  }
  return f;
}

Finding not_enabled(const Snapshot& s) {
  if (s.fabric.fm_unit_enabled != 0) {
    return s.fabric.fm_unit_enabled == 1
               ? all_ok(kNotEnabled, "nvidia-fabricmanager starts at boot.")[0]
               : not_applicable(kNotEnabled, "No nvidia-fabricmanager unit file seen.")[0];
  }
  Finding f = make_finding(kNotEnabled, Severity::kWarn,
                           "nvidia-fabricmanager is not enabled, so after the next reboot the "
                           "NVSwitch fabric stays down and CUDA answers 802.");
  f.evidence.push_back(s.fabric.fm_unit + ": no link to it in /etc/systemd/system/*.wants");
  f.remedy = {"sudo systemctl enable nvidia-fabricmanager"};
  return f;
}

}  // namespace

std::vector<Finding> check_fabric_manager(const Snapshot& s, const Config&) {
  FabricFacts ff = fabric_facts(s);
  bool rc802 = run_has_rc(user_cuda_run(s), kSystemNotReady);
  bool needed = ff.kind == FabricKind::kNvSwitch || ff.kind == FabricKind::kNvLink5;
  if (!needed && !rc802) {
    std::string why =
        ff.kind == FabricKind::kMultiNode
            ? "Multi-node NVLink: the switch trays run the fabric manager, not this host."
            : "No NVSwitch on this machine; the fabric manager is only needed on "
              "NVSwitch systems.";
    std::vector<Finding> out;
    for (const char* id : {kNotInstalled, kVersion, kNotRunning, kNotEnabled}) {
      out.push_back(not_applicable(id, why)[0]);
    }
    return out;
  }
  FmState st = fm_state(s, ff);
  if (!needed) {
    // CUDA's 802 with no NVSwitch in sight: the fabric manager is the
    // usual suspect, though nothing here says it is needed.
    std::string why = "No NVSwitch on this machine.";
    return {not_applicable(kNotInstalled, why)[0], not_applicable(kVersion, why)[0],
            not_running(s, st, ff), not_applicable(kNotEnabled, why)[0]};
  }
  // In a container the host's files are out of sight: only what CUDA and
  // NVML say can be judged there.
  if (!st.installed && !s.container.in_container) {
    return {not_installed(st, ff), not_applicable(kVersion, "Not installed.")[0],
            not_applicable(kNotRunning, "Not installed.")[0], not_enabled(s)};
  }
  return {all_ok(kNotInstalled, "The fabric manager is installed.")[0], version_finding(s, st, ff),
          not_running(s, st, ff), not_enabled(s)};
}

}  // namespace gd
