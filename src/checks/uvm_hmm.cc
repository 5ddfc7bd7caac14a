// uvm.hmm: nvidia_uvm's HMM (heterogeneous memory management) support makes
// cuInit fail (999, sometimes 3) on some kernel/driver pairs while
// nvidia-smi works; uvm_disable_hmm=1 cures it. Reported e.g. in
// NVIDIA/open-gpu-kernel-modules issues #689, #797, #901, #947 (2024-2025).
// Without the kernel log this stays a suspicion: warn, never fail.
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {
constexpr int kCudaUnknown = 999;
constexpr int kNotInitialized = 3;
}  // namespace

std::vector<Finding> check_uvm_hmm(const Snapshot& s, const Config&) {
  constexpr const char* kId = "uvm.hmm";
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr || r->library_loaded.empty()) {
    return not_applicable(kId, "libcuda was not loaded, so CUDA's start could not be judged.");
  }
  if (!cuda_failed(s)) return not_applicable(kId, "CUDA starts, so HMM is not breaking it.");
  const ModuleInfo* mod = find_module(s, "nvidia_uvm");
  const DevNode* node = find_devnode(s, "/dev/nvidia-uvm");
  // Registered in /proc/devices counts as loaded too (see uvm.cc).
  bool loaded = mod != nullptr || s.driver.char_majors.count("nvidia-uvm") > 0;
  if (!loaded || node == nullptr || !node->exists) {
    return not_applicable(kId, "nvidia_uvm or /dev/nvidia-uvm is missing (see uvm.missing).");
  }
  bool rc999 = run_has_rc(r, kCudaUnknown);
  bool rc3 = run_has_rc(r, kNotInitialized);
  if (!rc999 && !rc3) {
    return all_ok(kId, "CUDA fails with an error HMM trouble does not cause (" +
                           std::to_string(cuda_user_error(s)) + ").");
  }
  const std::string& hmm = s.driver.uvm_disable_hmm;
  if (hmm == "Y" || hmm == "1") {
    return all_ok(
        kId, "HMM is already disabled (uvm_disable_hmm=" + hmm + "), so it is not why CUDA fails.");
  }
  if (hmm != "N" && hmm != "0") {
    return not_applicable(kId,
                          "nvidia_uvm's uvm_disable_hmm parameter is unknown on this "
                          "machine, so HMM cannot be judged.");
  }
  Finding f = make_finding(
      kId, Severity::kWarn,
      "CUDA fails while nvidia_uvm runs with HMM enabled; on some kernel/driver pairs HMM "
      "breaks CUDA start (a suspicion: the kernel log would confirm it).");
  for (auto& line : cuda_error_lines(*r)) f.evidence.push_back(line);
  f.evidence.push_back("/sys/module/nvidia_uvm/parameters/uvm_disable_hmm: " + hmm);
  f.evidence.push_back("driver " + s.driver.version + " (" +
                       (s.driver.open_kernel_module ? "open kernel module, where most reports "
                                                      "come from"
                                                    : "proprietary kernel module") +
                       ")");
  f.remedy = {
      "echo 'options nvidia_uvm uvm_disable_hmm=1' | sudo tee /etc/modprobe.d/nvidia-uvm-hmm.conf",
      "sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm   # or reboot",
      "Then retry; sudo dmesg | grep -i uvm shows HMM errors if this is the cause."};
  return {f};
}

}  // namespace gd
