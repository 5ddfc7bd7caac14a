// driver.not-loaded: no /proc/driver/nvidia, no nvidia kernel module (in
// /proc/modules or /sys/module) and no nvidia character device in /proc/devices.
//
// Also the answer on a machine with no NVIDIA GPU at all: there the one line
// says that plainly, so a newcomer does not go hunting for a driver problem.
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr const char* kId = "driver.not-loaded";

// "/proc/modules: no nvidia module", with why the list may be incomplete.
// /proc/driver/nvidia is what decides: the module always creates it.
std::string no_module_text(const Snapshot& s) {
  std::string doubt = module_list_doubt(s);
  if (doubt.empty()) return "/proc/modules: no nvidia module";
  return "/proc/modules: no nvidia module seen (" + doubt + ")";
}

void add_library_evidence(const Snapshot& s, Finding* f) {
  if (!s.nvml.dlopen_error.empty()) f->evidence.push_back("NVML: " + s.nvml.dlopen_error);
  if (const CudaRun* r = user_cuda_run(s); r != nullptr && !r->dlopen_error.empty()) {
    f->evidence.push_back("CUDA: " + r->dlopen_error);
  }
}

void add_probe_evidence(const Snapshot& s, Finding* f) {
  for (const auto& p : s.probes) {
    if ((p.name == "driver" || p.name == "pci") &&
        (p.status == ProbeStatus::kFailed || p.status == ProbeStatus::kTimedOut)) {
      f->evidence.push_back("probe " + p.name + " did not complete: " + p.detail);
    }
  }
}

Finding no_gpu_finding(const Snapshot& s) {
  Finding f = make_finding(kId, Severity::kFail,
                           "No NVIDIA driver is loaded and there is no NVIDIA GPU on the PCI bus, "
                           "so CUDA cannot run on this machine.");
  f.evidence = {"/proc/driver/nvidia: absent", no_module_text(s),
                "PCI bus: no NVIDIA (vendor 0x10de) GPU"};
  add_library_evidence(s, &f);
  add_probe_evidence(s, &f);
  if (s.container.in_container) {
    f.evidence.push_back("running inside a container (" + s.container.evidence + ")");
  }
  f.remedy = {
      "Run this on a machine (or VM, or container) that has an NVIDIA GPU.",
      "If this machine should have one: check that the host sees it (lspci -nn | grep -i "
      "nvidia) and that it is passed through to this VM or container.",
      "Then install the NVIDIA driver (e.g. sudo apt install nvidia-driver-580) and reboot."};
  return f;
}

Finding gpus_without_driver(const Snapshot& s, const std::vector<const PciDevice*>& gpus) {
  Finding f =
      make_finding(kId, Severity::kFail,
                   "The NVIDIA kernel driver is not loaded, so the " + std::to_string(gpus.size()) +
                       " NVIDIA GPU(s) on the PCI bus cannot be used.");
  f.evidence = {"/proc/driver/nvidia: absent", no_module_text(s)};
  bool nouveau = find_module(s, "nouveau") != nullptr;
  for (const PciDevice* d : gpus) {
    f.gpus.push_back(d->bdf);
    f.evidence.push_back("GPU " + gpu_label(s, *d) + ", bound driver: " +
                         (d->driver.empty() ? std::string("none") : d->driver));
    if (d->driver == "nouveau") nouveau = true;
  }
  add_library_evidence(s, &f);
  add_probe_evidence(s, &f);
  f.remedy = {"sudo modprobe nvidia",
              "If that fails, read why: sudo dmesg | grep -i -e nvrm -e nvidia"};
  if (nouveau) {
    f.remedy.push_back("nouveau holds the GPUs: blacklist it first (see driver.nouveau).");
  }
  f.remedy.push_back(
      "'Key was rejected by service' or 'Lockdown' in that log means Secure Boot refuses the "
      "unsigned module: enroll the module's key (sudo mokutil --import <key.der>, as the driver "
      "installer offers) or disable Secure Boot.");
  f.remedy.push_back(
      "'Module nvidia not found' means no driver is installed for this kernel: install it "
      "(e.g. sudo apt install nvidia-driver-580, or nvidia-driver-580-open) and reboot.");
  return f;
}

}  // namespace

std::vector<Finding> check_driver_loaded(const Snapshot& s, const Config&) {
  const ModuleInfo* nvidia = find_module(s, "nvidia");
  if (nvidia_driver_loaded(s)) {
    std::string what = s.driver.version.empty() ? std::string("The NVIDIA kernel driver")
                                                : "NVIDIA kernel driver " + s.driver.version;
    auto out = all_ok(kId, what + " is loaded.");
    Finding& f = out.front();
    if (!s.driver.version_line.empty()) f.evidence.push_back(s.driver.version_line);
    if (nvidia != nullptr) f.evidence.push_back(module_evidence(*nvidia));
    if (!s.driver.proc_driver_nvidia && nvidia == nullptr) {
      std::string dev = nvidia_char_device(s);
      f.evidence.push_back("/proc/devices: " + dev + " major " +
                           std::to_string(s.driver.char_majors.at(dev)));
    }
    return out;
  }
  auto gpus = pci_gpus(s);
  if (gpus.empty()) return {no_gpu_finding(s)};
  return {gpus_without_driver(s, gpus)};
}

}  // namespace gd
