// driver.module-load-failed: the nvidia module is stuck in a non-Live state,
// or it is loaded but did not take every GPU on the bus (its probe failed
// for them: unsupported GPU, RmInitAdapter failure, GPU off the bus), or the
// kernel log says why it could not load (Secure Boot lockdown refused the
// unsigned module, unknown symbols after a kernel update).
#include <algorithm>

#include "catalog/nvrm.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "kernlog/decode.h"

namespace gd {

namespace {

bool is_load_failure(const KernelEvent& e) {
  static const char* const kNvrmTypes[] = {"rm-init-failed", "probe-failed", "no-devices",
                                           "unknown-symbol", "gsp-init-failed"};
  if (e.kind == "module-signature") return e.type == "rejected";
  if (e.kind == "uvm") return e.type == "unknown-symbol";
  return e.kind == "nvrm" && std::any_of(std::begin(kNvrmTypes), std::end(kNvrmTypes),
                                         [&](const char* t) { return e.type == t; });
}

// "RmInitAdapter failed! (0x62:0x40:2168)": the init stage and NV_STATUS
// by name (facts §2.1); the third number is a source line, ignored.
std::string rm_init_detail(const std::string& message) {
  auto codes = rm_init_codes(message);
  if (!codes) return "";
  const char* st = rm_init_stage_name(codes->stage);
  const char* ss = nv_status_name(codes->status);
  if (st == nullptr && ss == nullptr) return "";
  return std::string(" [") + (st ? st : "?") + ", " + (ss ? ss : "?") + "]";
}

std::vector<std::string> log_evidence(const Snapshot& s, bool* rejected) {
  std::vector<std::string> out;
  for (const KernelEvent& e : s.kernel_log.events) {
    if (!is_load_failure(e)) continue;
    *rejected = *rejected || e.kind == "module-signature";
    std::string line = event_evidence(s, e);
    if (e.type == "rm-init-failed") line += rm_init_detail(e.message);
    out.push_back(line);
  }
  return out;
}

Finding load_refused(const Snapshot& s, std::vector<std::string> evidence, bool rejected) {
  Finding f = make_finding("driver.module-load-failed", Severity::kFail,
                           rejected ? "The kernel refused to load the NVIDIA module: Secure Boot "
                                      "lockdown allows only signed modules."
                                    : "The NVIDIA kernel module failed to load or to start.");
  f.evidence = std::move(evidence);
  for (const KernelEvent& e : s.kernel_log.events) {
    if (is_load_failure(e) && !e.gpu.empty() &&
        std::find(f.gpus.begin(), f.gpus.end(), e.gpu) == f.gpus.end()) {
      f.gpus.push_back(e.gpu);
    }
  }
  if (rejected) {
    f.remedy = {"Check: mokutil --sb-state",
                "Sign the module with an enrolled key: sudo mokutil --import "
                "/var/lib/dkms/mok.pub, reboot and enroll the key, then sudo dkms autoinstall",
                "Or install your distribution's signed NVIDIA packages, or turn Secure Boot off"};
  } else {
    f.remedy = {
        "'Unknown symbol': the module was built for another kernel; rebuild it: sudo "
        "dkms autoinstall (or reinstall the driver) and reboot",
        "'RmInitAdapter failed' or GSP errors: power-cycle the node; if it persists, "
        "reseat the GPU or try the driver branch's latest release"};
  }
  return f;
}

bool unobserved(const Snapshot& s, const char* source) {
  return std::find(s.unobserved.begin(), s.unobserved.end(), source) != s.unobserved.end();
}

}  // namespace

std::vector<Finding> check_module_load_failed(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.module-load-failed";
  bool rejected = false;
  std::vector<std::string> from_log = log_evidence(s, &rejected);
  // Only the log is known (explain on pasted dmesg lines).
  if (unobserved(s, "driver")) {
    if (from_log.empty()) {
      return not_applicable(kId, kernel_log_read(s)
                                     ? "The driver was not seen and its log shows no load failure."
                                     : "Neither the driver nor its log was seen.");
    }
    return {load_refused(s, std::move(from_log), rejected)};
  }
  if (!nvidia_driver_loaded(s)) {
    if (!from_log.empty()) return {load_refused(s, std::move(from_log), rejected)};
    return not_applicable(kId, "The nvidia module is not loaded at all (see driver.not-loaded).");
  }
  std::vector<std::string> evidence;
  std::vector<std::string> gpus;

  bool stuck = false;
  for (const auto& m : s.driver.modules) {
    if (m.name.rfind("nvidia", 0) == 0 && !m.state.empty() && m.state != "Live") {
      evidence.push_back(
          (m.source == ModuleInfo::kFromSysModule ? "/sys/module: " : "/proc/modules: ") + m.name +
          " is in state " + m.state + ", not Live");
      stuck = true;
    }
  }

  const ModuleInfo* nvidia = find_module(s, "nvidia");
  // A built-in module has no state; it is in the kernel from boot.
  bool nvidia_live = nvidia != nullptr && (nvidia->state == "Live" || nvidia->builtin);
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
  f.evidence.insert(f.evidence.end(), from_log.begin(), from_log.end());
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
