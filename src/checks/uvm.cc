// uvm.missing: CUDA needs the nvidia_uvm module and /dev/nvidia-uvm; without
// them cuInit fails, usually with CUDA_ERROR_UNKNOWN (999).
//
// nvidia_uvm counts as loaded when any of these shows it (DESIGN.md, "Truth
// on real machines": a finding never contradicts its evidence):
//  - /proc/modules lists it, in any refcount form ("0", "-");
//  - /sys/module/nvidia_uvm exists (built in, or /proc/modules unreadable);
//  - /proc/devices lists nvidia-uvm and /dev/nvidia-uvm is there: the module
//    registers that character device when it loads and removes it on unload.
// A module absent from a /proc/modules that could not be read, or that had
// lines the parser did not know, is "not seen", never "not loaded"; and when
// CUDA started in the user's run, nvidia_uvm is loaded whatever the lists say.
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr const char* kId = "uvm.missing";

std::string major_text(const Snapshot& s) {
  auto major = s.driver.char_majors.find("nvidia-uvm");
  return major == s.driver.char_majors.end()
             ? "/proc/devices: no nvidia-uvm entry"
             : "/proc/devices: nvidia-uvm major " + std::to_string(major->second);
}

std::string node_text(const DevNode* node) {
  if (node != nullptr && node->exists) return "/dev/nvidia-uvm: present";
  return "/dev/nvidia-uvm: missing" +
         (node != nullptr && !node->error.empty() ? " (" + node->error + ")" : std::string());
}

std::string module_text(const ModuleInfo* mod, const std::string& doubt) {
  if (mod != nullptr) return module_evidence(*mod);
  std::string out = "/proc/modules: no nvidia_uvm";
  if (!doubt.empty()) out += " seen (" + doubt + ")";
  return out;
}

void add_remedy(const Snapshot& s, bool module_ok, Finding* f) {
  if (s.container.in_container) {
    f->remedy.push_back(
        "Inside a container the module and node come from the host: run the "
        "commands below on the host, then restart the container.");
  }
  if (!module_ok) f->remedy.push_back("sudo modprobe nvidia_uvm");
  f->remedy.push_back(
      "sudo nvidia-modprobe -c 0 -u   # loads nvidia_uvm and creates "
      "/dev/nvidia-uvm and /dev/nvidia-uvm-tools");
  f->remedy.push_back(
      "To load it at every boot: echo nvidia_uvm | sudo tee "
      "/etc/modules-load.d/nvidia-uvm.conf");
}

}  // namespace

std::vector<Finding> check_uvm(const Snapshot& s, const Config&) {
  if (!nvidia_driver_loaded(s)) {
    return not_applicable(kId, "The NVIDIA kernel driver is not loaded (see driver.not-loaded).");
  }
  const ModuleInfo* mod = find_module(s, "nvidia_uvm");
  const DevNode* node = find_devnode(s, "/dev/nvidia-uvm");
  bool node_ok = node != nullptr && node->exists;
  bool registered = s.driver.char_majors.count("nvidia-uvm") > 0;
  bool listed_live = mod != nullptr && (mod->state.empty() || mod->state == "Live");
  // Not listed at all, but its character device is registered and its node is there.
  bool by_devices = mod == nullptr && registered && node_ok;
  bool module_ok = listed_live || by_devices;
  std::string doubt = module_list_doubt(s);

  if (module_ok && node_ok) {
    std::string summary = "nvidia_uvm is loaded and /dev/nvidia-uvm exists";
    if (node->major >= 0) summary += " (major " + std::to_string(node->major) + ")";
    auto out = all_ok(kId, summary + ".");
    // Say what showed it when /proc/modules did not list it plainly.
    if (by_devices || mod->source == ModuleInfo::kFromSysModule || mod->state.empty()) {
      out.front().evidence = {module_text(mod, doubt), major_text(s), node_text(node)};
    }
    return out;
  }
  if (cuda_started_for_user(s)) {
    // cuInit and a context succeeded: nvidia_uvm is loaded and its node
    // usable, so the lists above are what is wrong, not the machine.
    auto out = all_ok(kId,
                      "CUDA started in this run, so nvidia_uvm is loaded; the probes did not "
                      "see all of it (see the evidence).");
    out.front().evidence = {module_text(mod, doubt), major_text(s), node_text(node)};
    return out;
  }

  std::vector<std::string> evidence = {module_text(mod, doubt), node_text(node), major_text(s)};
  if (node_ok && mod == nullptr && !doubt.empty()) {
    // The node is there and the module list is incomplete: it may well be
    // loaded. Unsure is a warning that says what decides it.
    Finding f = make_finding(kId, Severity::kWarn,
                             "nvidia_uvm was not seen, but " + doubt +
                                 ", so whether it is loaded is unknown; /dev/nvidia-uvm exists.");
    f.evidence = std::move(evidence);
    f.remedy.push_back(
        "lsmod | grep nvidia_uvm   # or: ls /sys/module/nvidia_uvm; either decides it");
    add_remedy(s, false, &f);
    return {f};
  }

  std::string summary;
  if (!module_ok && mod == nullptr && registered) {
    // Registered in /proc/devices, so the module is in; only the node lacks.
    summary = "/dev/nvidia-uvm does not exist although nvidia-uvm is registered in /proc/devices";
    module_ok = true;
  } else if (!module_ok && mod == nullptr && !doubt.empty()) {
    summary = "/dev/nvidia-uvm does not exist and nvidia_uvm was not seen";
  } else if (!module_ok) {
    summary = "The nvidia_uvm kernel module is not loaded";
    if (mod != nullptr && !mod->state.empty()) summary += " (it is " + mod->state + ")";
    if (!node_ok) summary += " and /dev/nvidia-uvm does not exist";
  } else {
    summary = "/dev/nvidia-uvm does not exist";
  }
  summary += "; CUDA cannot start without it.";
  Finding f = make_finding(kId, Severity::kFail, summary);
  f.evidence = std::move(evidence);
  if (const CudaRun* r = user_cuda_run(s); r != nullptr && cuda_failed(s)) {
    for (auto& line : cuda_error_lines(*r)) {
      f.evidence.push_back(line + " — a missing nvidia_uvm explains this");
    }
  }
  add_remedy(s, module_ok, &f);
  return {f};
}

}  // namespace gd
