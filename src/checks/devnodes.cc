// devnodes.missing / devnodes.permission: CUDA opens /dev/nvidiactl and one
// /dev/nvidiaN per GPU (N = the device minor, nvidia-facts.md §7.5). Missing
// nodes or nodes whose mode bits leave this user out stop it. /dev/nvidia-uvm
// is judged by uvm.missing; its permission is judged here. A node refused
// beyond its mode bits is devnode-security's or cgroup-devices' to report.
#include "checks/checks.h"
#include "checks/devnode_access.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr const char* kMissing = "devnodes.missing";
constexpr const char* kPermission = "devnodes.permission";

struct Wanted {
  std::string path;
  int minor;        // -1 for nodes that are not per-GPU
  std::string bdf;  // the GPU, "" otherwise
};

std::vector<Wanted> wanted_nodes(const Snapshot& s) {
  std::vector<Wanted> out = {{"/dev/nvidiactl", 255, ""}};
  for (const auto& k : known_gpu_minors(s)) {
    out.push_back({"/dev/nvidia" + std::to_string(k.minor), k.minor, k.bdf});
  }
  return out;
}

Finding missing_finding(const Snapshot& s, const std::vector<Wanted>& missing) {
  Finding f = make_finding(kMissing, Severity::kFail,
                           std::to_string(missing.size()) +
                               " NVIDIA device node(s) are missing, so CUDA cannot open the "
                               "GPU(s).");
  std::vector<std::string> minors;
  for (const auto& w : missing) {
    f.evidence.push_back(w.path + ": missing" + (w.bdf.empty() ? "" : " (GPU " + w.bdf + ")"));
    if (!w.bdf.empty()) f.gpus.push_back(w.bdf);
    if (w.minor >= 0 && w.minor < 255) minors.push_back(std::to_string(w.minor));
  }
  auto modify = s.driver.params.find("ModifyDeviceFiles");
  if (modify != s.driver.params.end()) {
    f.evidence.push_back("/proc/driver/nvidia/params: ModifyDeviceFiles: " + modify->second);
  }
  if (s.container.in_container) {
    f.remedy.push_back(
        "This container was not given these devices: start it with --gpus all "
        "(or --device /dev/nvidiactl --device /dev/nvidia<N>).");
  }
  if (minors.empty()) minors.push_back("0");
  for (const auto& m : minors) {
    f.remedy.push_back("sudo nvidia-modprobe -c " + m + "   # creates /dev/nvidia" + m +
                       " and /dev/nvidiactl");
  }
  if (modify != s.driver.params.end() && modify->second == "0") {
    f.remedy.push_back(
        "The driver is set not to create nodes (NVreg_ModifyDeviceFiles=0): your "
        "udev rules must, e.g. sudo mknod -m 666 /dev/nvidia0 c 195 0");
  } else {
    f.remedy.push_back(
        "If they vanish again: check udev rules for nvidia in "
        "/etc/udev/rules.d and /lib/udev/rules.d.");
  }
  return f;
}

Finding permission_finding(const Snapshot& s, const std::vector<const DevNode*>& denied,
                           const std::vector<std::string>& gpus) {
  Finding f = make_finding(kPermission, Severity::kFail,
                           "This user may not open " + std::to_string(denied.size()) +
                               " NVIDIA device node(s), so CUDA cannot use the GPU(s).");
  f.gpus = gpus;
  uint32_t gid = 0;
  bool group_rw = false;
  for (const DevNode* n : denied) {
    f.evidence.push_back(describe_node(*n));
    if (n->owner_gid != 0) gid = n->owner_gid;
    if ((n->mode & 0060) == 0060) group_rw = true;
  }
  f.evidence.push_back(process_groups_text(s));
  auto mode = s.driver.params.find("DeviceFileMode");
  if (mode != s.driver.params.end()) {
    f.evidence.push_back("/proc/driver/nvidia/params: DeviceFileMode: " + mode->second);
  }
  if (gid != 0 && group_rw) {
    f.remedy.push_back("sudo usermod -aG $(getent group " + std::to_string(gid) +
                       " | cut -d: -f1) $USER   # then log out and back in");
  } else {
    f.remedy.push_back(
        "sudo usermod -aG video $USER   # then log out and back in, if the nodes "
        "belong to group video");
  }
  f.remedy.push_back(
      "Or let everyone open them: echo 'options nvidia NVreg_DeviceFileMode=0666' "
      "| sudo tee /etc/modprobe.d/nvidia-devmode.conf, then reboot");
  f.remedy.push_back(
      "For now (until reboot): sudo chmod 0666 /dev/nvidiactl /dev/nvidia-uvm "
      "/dev/nvidia[0-9]*");
  return f;
}

}  // namespace

std::vector<Finding> check_devnodes(const Snapshot& s, const Config&) {
  if (!nvidia_driver_loaded(s)) {
    std::string why = "The NVIDIA kernel driver is not loaded (see driver.not-loaded).";
    return {make_finding(kMissing, Severity::kNotApplicable, why),
            make_finding(kPermission, Severity::kNotApplicable, why)};
  }
  std::vector<Wanted> wanted = wanted_nodes(s);
  std::vector<Wanted> missing;
  std::vector<const DevNode*> present;
  std::vector<std::string> present_gpus;
  for (const auto& w : wanted) {
    const DevNode* n = find_devnode(s, w.path);
    if (n == nullptr || !n->exists) {
      missing.push_back(w);
    } else {
      present.push_back(n);
      present_gpus.push_back(w.bdf);
    }
  }
  if (const DevNode* uvm = find_devnode(s, "/dev/nvidia-uvm"); uvm != nullptr && uvm->exists) {
    present.push_back(uvm);
    present_gpus.push_back("");
  }

  std::vector<Finding> out;
  std::string gpu_nodes = std::to_string(wanted.size() - 1) + " GPU node(s)";
  if (missing.empty()) {
    out.push_back(
        make_finding(kMissing, Severity::kOk, "/dev/nvidiactl and " + gpu_nodes + " exist."));
  } else {
    out.push_back(missing_finding(s, missing));
  }

  std::vector<const DevNode*> denied;
  std::vector<std::string> denied_gpus;
  size_t refused_elsewhere = 0;
  for (size_t i = 0; i < present.size(); ++i) {
    NodeRefusal why = node_refusal(s, *present[i]);
    if (why == NodeRefusal::kModeBits) {
      denied.push_back(present[i]);
      if (!present_gpus[i].empty()) denied_gpus.push_back(present_gpus[i]);
    } else if (why != NodeRefusal::kNone) {
      ++refused_elsewhere;
    }
  }
  if (present.empty()) {
    out.push_back(make_finding(kPermission, Severity::kNotApplicable,
                               "No NVIDIA device node exists to test."));
  } else if (denied.empty()) {
    out.push_back(make_finding(
        kPermission, Severity::kOk,
        refused_elsewhere == 0
            ? "This user can open all " + std::to_string(present.size()) +
                  " NVIDIA device node(s) CUDA needs."
            : "The mode bits let this user open all " + std::to_string(present.size()) +
                  " NVIDIA device node(s); the kernel refuses " +
                  std::to_string(refused_elsewhere) +
                  " beyond them (see devnode-security and cgroup-devices)."));
  } else {
    out.push_back(permission_finding(s, denied, denied_gpus));
  }
  return out;
}

}  // namespace gd
