// driver.after-suspend: CUDA fails with 999 (or 3) after a suspend/resume;
// nvidia_uvm does not survive some resumes and needs a reload
// (nvidia-facts.md §3, code 999).
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_after_suspend(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.after-suspend";
  if (!s.driver.seconds_since_resume) {
    return not_applicable(kId, "No suspend/resume of this machine is recorded.");
  }
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr || r->library_loaded.empty()) {
    return not_applicable(kId, "libcuda was not loaded, so CUDA's start could not be judged.");
  }
  std::string ago = format_seconds(*s.driver.seconds_since_resume);
  if (!cuda_failed(s)) {
    return all_ok(kId, "The machine resumed from suspend " + ago + " ago and CUDA still starts.");
  }
  if (!run_has_rc(r, 999) && !run_has_rc(r, 3)) {
    return all_ok(kId, "CUDA fails, but not with the error a broken resume gives (999 or 3).");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "CUDA has been failing since the machine resumed from suspend " + ago +
                               " ago; the nvidia_uvm module needs a reload.");
  f.evidence.push_back("last resume: " + ago + " ago");
  for (auto& line : cuda_error_lines(*r)) f.evidence.push_back(line);
  f.remedy = {
      "Stop programs using the GPU, then: sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm",
      "If rmmod says the module is in use, reboot.",
      "To keep it from recurring: sudo systemctl enable nvidia-suspend.service "
      "nvidia-resume.service nvidia-hibernate.service, and set options nvidia "
      "NVreg_PreserveVideoMemoryAllocations=1 in /etc/modprobe.d/nvidia-power.conf"};
  return {f};
}

}  // namespace gd
