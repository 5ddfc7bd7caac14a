// uvm.missing: CUDA needs the nvidia_uvm module and /dev/nvidia-uvm; without
// them cuInit fails, usually with CUDA_ERROR_UNKNOWN (999).
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_uvm(const Snapshot& s, const Config&) {
  constexpr const char* kId = "uvm.missing";
  if (!nvidia_driver_loaded(s)) {
    return not_applicable(kId, "The NVIDIA kernel driver is not loaded (see driver.not-loaded).");
  }
  const ModuleInfo* mod = find_module(s, "nvidia_uvm");
  const DevNode* node = find_devnode(s, "/dev/nvidia-uvm");
  bool module_ok = mod != nullptr && (mod->state.empty() || mod->state == "Live");
  bool node_ok = node != nullptr && node->exists;
  auto major = s.driver.char_majors.find("nvidia-uvm");
  if (module_ok && node_ok) {
    std::string summary = "nvidia_uvm is loaded and /dev/nvidia-uvm exists";
    if (node->major >= 0) summary += " (major " + std::to_string(node->major) + ")";
    return all_ok(kId, summary + ".");
  }
  std::string summary =
      !module_ok ? "The nvidia_uvm kernel module is not loaded" : "/dev/nvidia-uvm does not exist";
  if (!module_ok && !node_ok) summary += " and /dev/nvidia-uvm does not exist";
  summary += "; CUDA cannot start without it.";
  Finding f = make_finding(kId, Severity::kFail, summary);
  f.evidence.push_back(mod == nullptr ? "/proc/modules: no nvidia_uvm"
                                      : "/proc/modules: nvidia_uvm " + mod->state);
  f.evidence.push_back(node_ok
                           ? "/dev/nvidia-uvm: present"
                           : "/dev/nvidia-uvm: missing" + (node != nullptr && !node->error.empty()
                                                               ? " (" + node->error + ")"
                                                               : std::string()));
  f.evidence.push_back(major == s.driver.char_majors.end()
                           ? "/proc/devices: no nvidia-uvm entry"
                           : "/proc/devices: nvidia-uvm major " + std::to_string(major->second));
  if (const CudaRun* r = user_cuda_run(s); r != nullptr && cuda_failed(s)) {
    for (auto& line : cuda_error_lines(*r)) {
      f.evidence.push_back(line + " — a missing nvidia_uvm explains this");
    }
  }
  if (s.container.in_container) {
    f.remedy.push_back(
        "Inside a container the module and node come from the host: run the "
        "commands below on the host, then restart the container.");
  }
  if (!module_ok) f.remedy.push_back("sudo modprobe nvidia_uvm");
  f.remedy.push_back(
      "sudo nvidia-modprobe -c 0 -u   # loads nvidia_uvm and creates "
      "/dev/nvidia-uvm and /dev/nvidia-uvm-tools");
  f.remedy.push_back(
      "To load it at every boot: echo nvidia_uvm | sudo tee "
      "/etc/modules-load.d/nvidia-uvm.conf");
  return {f};
}

}  // namespace gd
