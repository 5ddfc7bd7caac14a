// driver.library-mismatch: the user-space driver libraries (NVML, libcuda)
// are from another driver version than the loaded kernel module — the
// classic state after a driver upgrade without a reboot.
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/compare.h"
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
  // Every version compared with the module's is stated (numerically:
  // 560.35.03 is 560.35.3); the verdict is whether one of them, or an error
  // code that only a mismatch gives, says the versions differ.
  Finding f = make_finding(
      kId, Severity::kFail,
      "The NVIDIA user-space libraries and the loaded kernel module are different driver "
      "versions (typically a driver update without a reboot).");
  std::vector<std::string> evidence;
  std::vector<Comparison> compared;

  if (s.nvml.init_rc == kNvmlLibRmVersionMismatch) {
    std::string call = s.nvml.init_symbol.empty() ? std::string("nvmlInit") : s.nvml.init_symbol;
    evidence.push_back(call + " returned " + nvml_error(s.nvml.init_rc));
    compared.push_back(compare_numbers(
        call + "'s return vs NVML_ERROR_LIB_RM_VERSION_MISMATCH (18), given only on a mismatch",
        s.nvml.init_rc, "!=", kNvmlLibRmVersionMismatch));
  }
  if (s.nvml.driver_version.ok() && !kernel.empty()) {
    compared.push_back(compare_versions(
        "driver version NVML reports (nvmlSystemGetDriverVersion) vs the kernel module's",
        s.nvml.driver_version.value, "==", kernel));
  }
  if (auto v = library_file_version(s.nvml.library_loaded); v && !kernel.empty()) {
    compared.push_back(compare_versions(
        "NVML library " + s.nvml.library_loaded + " version vs the kernel module's", *v,
        "==", kernel));
  }

  const CudaRun* r = user_cuda_run(s);
  bool compat = r != nullptr && is_compat_path(r->library_loaded);
  if (r != nullptr && !compat) {
    if (run_has_rc(r, kCudaSystemDriverMismatch)) {
      for (auto& line : cuda_error_lines(*r)) evidence.push_back(line);
      compared.push_back(compare_numbers(
          "CUDA's error vs CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803), given only on a mismatch",
          kCudaSystemDriverMismatch, "!=", kCudaSystemDriverMismatch));
    }
    if (auto v = library_file_version(r->library_loaded); v && !kernel.empty()) {
      compared.push_back(compare_versions(
          "libcuda " + r->library_loaded + " version vs the kernel module's", *v, "==", kernel));
    }
  }

  if (all_met(compared)) {
    if (s.nvml.library_loaded.empty() && (r == nullptr || r->library_loaded.empty())) {
      return not_applicable(kId, "Neither NVML nor libcuda could be loaded to compare versions.");
    }
    std::string summary = "The user-space driver libraries match the kernel module";
    if (!kernel.empty()) summary += " (" + kernel + ")";
    Finding ok = make_finding(kId, Severity::kOk, summary + ".");
    for (auto& c : compared) add_comparison(&ok, std::move(c));
    if (compared.empty()) {
      add_not_compared(&ok, "the driver libraries' versions vs the kernel module's",
                       kernel.empty() ? "the kernel module's version"
                                      : "every library's version (no versioned file name, no "
                                        "NVML driver version)");
    }
    return {ok};
  }
  f.evidence.push_back(
      "kernel module: " + (kernel.empty() ? std::string("version unknown") : kernel) +
      (s.driver.version_line.empty() ? "" : " (" + s.driver.version_line + ")"));
  for (auto& e : evidence) f.evidence.push_back(e);
  for (auto& c : compared) add_comparison(&f, std::move(c));
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
