// driver.gpu-unsupported: a GPU whose architecture the loaded driver branch
// (or kernel module flavour) does not support. Judged from PCI device ids,
// because the driver does not register such a GPU with NVML at all, and from
// the driver's own word in the kernel log ("NVRM: The NVIDIA GPU ... is not
// supported by ...", facts §2), which also covers models our table lacks and
// explain's pasted logs, where neither the driver nor the bus was seen.
#include <algorithm>
#include <cctype>
#include <map>

#include "catalog/driver_compat.h"
#include "catalog/gpu_models.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "util/ascii.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "driver.gpu-unsupported";

// The log lines in which the driver refuses a GPU; one evidence line each.
std::vector<std::string> refusals_in_log(const Snapshot& s, std::vector<std::string>* gpus) {
  std::vector<std::string> out;
  for (const KernelEvent& e : s.kernel_log.events) {
    if (e.kind != "nvrm" || (e.type != "gpu-unsupported" && e.type != "open-module-unsupported")) {
      continue;
    }
    out.push_back(event_evidence(s, e));
    if (!e.gpu.empty() && std::find(gpus->begin(), gpus->end(), e.gpu) == gpus->end()) {
      gpus->push_back(e.gpu);
    }
  }
  return out;
}

Finding refused_by_driver(std::vector<std::string> evidence, std::vector<std::string> gpus) {
  Finding f = make_finding(kId, Severity::kFail,
                           "The NVIDIA driver says it does not support the GPU: its kernel log "
                           "refuses it.");
  f.gpus = std::move(gpus);
  f.evidence = std::move(evidence);
  f.remedy = {
      "Install a driver branch that supports the GPU: the legacy branch the log names "
      "for an older GPU, a newer branch for a newer one, or the proprietary module where "
      "the open one does not support it; then reboot."};
  return f;
}

}  // namespace

std::vector<Finding> check_gpu_unsupported(const Snapshot& s, const Config&) {
  std::vector<std::string> log_gpus;
  std::vector<std::string> from_log = refusals_in_log(s, &log_gpus);
  // What the tables cannot judge, the driver's own word in the log still decides.
  auto log_or = [&](std::string why) {
    if (!from_log.empty()) {
      return std::vector<Finding>{refused_by_driver(std::move(from_log), std::move(log_gpus))};
    }
    return not_applicable(kId, std::move(why));
  };
  if (!nvidia_driver_loaded(s)) return log_or("The driver version is unknown (driver not loaded).");
  std::string from;
  std::string version_text = module_version(s, &from);
  auto version = parse_driver_version(version_text);
  if (from.starts_with("NVML")) version_text += ", from NVML";
  if (!version) {
    return log_or(
        "The driver version is unknown: /proc/driver/nvidia/version was not "
        "read and NVML gave none.");
  }
  auto gpus = pci_gpus(s);
  if (gpus.empty()) return log_or("No NVIDIA GPU on the PCI bus.");

  std::string flavour = s.driver.open_kernel_module ? "open" : "proprietary";
  std::vector<std::string> evidence;
  std::vector<std::string> bad;
  std::vector<std::string> fixes;
  std::map<std::string, int> arch_count;
  int unknown = 0;
  for (const PciDevice* d : gpus) {
    GpuArch arch = gpu_arch(s, *d);
    if (arch == GpuArch::kUnknown) {
      ++unknown;
      continue;
    }
    const GpuModel* m = find_gpu_model(d->device_id);
    ArchVerdict v = driver_supports(arch, m != nullptr && m->requires_open_module, *version,
                                    s.driver.open_kernel_module);
    if (v.supported) {
      ++arch_count[arch_name(arch)];
      continue;
    }
    bad.push_back(d->bdf);
    evidence.push_back("GPU " + gpu_label(s, *d) + ", " + arch_name(arch) + ": " + v.reason);
    bool seen = false;
    for (const auto& x : fixes) seen = seen || x == v.fix;
    if (!seen) fixes.push_back(v.fix);
  }

  std::string driver_text = "driver " + version_text + " (" + flavour + " kernel module)";
  if (bad.empty() && !from_log.empty()) {  // a model the tables pass, the driver refuses
    return {refused_by_driver(std::move(from_log), std::move(log_gpus))};
  }
  if (bad.empty()) {
    if (arch_count.empty()) {
      return not_applicable(kId, "No GPU of a known architecture to judge (" +
                                     std::to_string(unknown) + " unknown model(s)).");
    }
    std::vector<std::string> parts;
    for (const auto& [arch, n] : arch_count) parts.push_back(std::to_string(n) + " x " + arch);
    std::string summary = "The " + driver_text + " supports every GPU: " + join(parts, ", ");
    if (unknown > 0) summary += " (" + std::to_string(unknown) + " of unknown model not judged)";
    return all_ok(kId, summary + ".");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "The loaded " + driver_text + " does not support " +
                               std::to_string(bad.size()) + " of the GPU(s) on this machine.");
  f.gpus = bad;
  f.evidence = evidence;
  f.evidence.push_back("loaded: " +
                       (s.driver.version_line.empty() ? driver_text : s.driver.version_line));
  f.evidence.insert(f.evidence.end(), from_log.begin(), from_log.end());
  for (auto& fix : fixes) {
    fix[0] = ascii_upper(fix[0]);
    f.remedy.push_back(fix + ", then reboot.");
  }
  return {f};
}

}  // namespace gd
