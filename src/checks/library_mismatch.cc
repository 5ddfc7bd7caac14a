// driver.library-mismatch: the user-space driver libraries (NVML, libcuda)
// are from another driver version than the loaded kernel module — the
// classic state after a driver upgrade without a reboot.
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr int kNvmlLibRmVersionMismatch = 18;
constexpr int kCudaSystemDriverMismatch = 803;

bool is_compat_path(const std::string& path) { return contains(path, "/compat/"); }

}  // namespace

std::vector<Finding> check_library_mismatch(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.library-mismatch";
  if (!nvidia_driver_loaded(s)) {
    return not_applicable(kId, "The NVIDIA kernel driver is not loaded (see driver.not-loaded).");
  }
  const std::string& kernel = s.driver.version;
  std::vector<std::string> evidence;

  if (s.nvml.init_rc == kNvmlLibRmVersionMismatch) {
    evidence.push_back(s.nvml.init_symbol.empty() ? std::string("nvmlInit") : s.nvml.init_symbol);
    evidence.back() += " returned " + nvml_error(s.nvml.init_rc);
  }
  if (s.nvml.driver_version.ok() && !kernel.empty() && s.nvml.driver_version.value != kernel) {
    evidence.push_back("NVML reports driver " + s.nvml.driver_version.value +
                       ", the kernel module is " + kernel);
  }
  if (auto v = library_file_version(s.nvml.library_loaded); v && !kernel.empty() && *v != kernel) {
    evidence.push_back("NVML library " + s.nvml.library_loaded + " is version " + *v);
  }

  const CudaRun* r = user_cuda_run(s);
  bool compat = r != nullptr && is_compat_path(r->library_loaded);
  if (r != nullptr && !compat) {
    if (run_has_rc(r, kCudaSystemDriverMismatch)) {
      for (auto& line : cuda_error_lines(*r)) evidence.push_back(line);
    }
    if (auto v = library_file_version(r->library_loaded); v && !kernel.empty() && *v != kernel) {
      evidence.push_back("libcuda " + r->library_loaded + " is version " + *v);
    }
  }

  if (evidence.empty()) {
    if (s.nvml.library_loaded.empty() && (r == nullptr || r->library_loaded.empty())) {
      return not_applicable(kId, "Neither NVML nor libcuda could be loaded to compare versions.");
    }
    std::string summary = "The user-space driver libraries match the kernel module";
    if (!kernel.empty()) summary += " (" + kernel + ")";
    return all_ok(kId, summary + ".");
  }
  Finding f = make_finding(
      kId, Severity::kFail,
      "The NVIDIA user-space libraries and the loaded kernel module are different driver "
      "versions (typically a driver update without a reboot).");
  f.evidence.push_back(
      "kernel module: " + (kernel.empty() ? std::string("version unknown") : kernel) +
      (s.driver.version_line.empty() ? "" : " (" + s.driver.version_line + ")"));
  for (auto& e : evidence) f.evidence.push_back(e);
  f.remedy = {
      "sudo reboot   # loads the kernel module that matches the installed libraries",
      "Without a reboot: stop what uses the GPUs (nvidia-persistenced, nv-fabricmanager, "
      "display manager), then sudo rmmod nvidia_drm nvidia_modeset nvidia_uvm nvidia && sudo "
      "modprobe nvidia && sudo modprobe nvidia_uvm",
      "In a container: its driver libraries must come from the host (see "
      "container.driver-mismatch)."};
  return {f};
}

}  // namespace gd
