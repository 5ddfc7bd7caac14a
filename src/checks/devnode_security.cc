// devnodes.selinux-denied, devnodes.rootless-denied: the NVIDIA device nodes
// exist and their mode bits would let this process open them, yet the kernel
// refuses it. Two causes seen in the field (docs/nvidia-facts.md §7.6):
//  - a security module: access(2) answers EACCES where the mode bits allow
//    it. On SELinux hosts containers run as container_t, which may not use
//    host devices until the boolean container_use_devices is on.
//  - a user namespace (rootless podman/docker): root in the container
//    overrides mode bits only on nodes whose owner is mapped into it. The
//    host's root and video group are not, so the nodes show as owned by
//    65534 and only their "other" bits count; the user's video group is lost
//    unless the runtime keeps it (podman --group-add keep-groups, crun).
#include <algorithm>

#include "checks/checks.h"
#include "checks/devnode_access.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr const char* kSelinux = "devnodes.selinux-denied";
constexpr const char* kRootless = "devnodes.rootless-denied";

// A container's process: SELinux's container_t label, or a container seen.
bool in_a_container(const Snapshot& s) {
  return s.security.label.find(":container_t:") != std::string::npos || s.container.in_container;
}

Finding selinux_finding(const Snapshot& s, const std::vector<const DevNode*>& nodes) {
  bool selinux = s.security.selinux == "enforcing";
  std::string who = selinux ? "SELinux" : "A security module (SELinux or AppArmor)";
  Finding f = make_finding(kSelinux, Severity::kFail,
                           who + " refuses " + std::to_string(nodes.size()) +
                               " NVIDIA device node(s) that their mode bits allow, so CUDA "
                               "and NVML cannot open the GPU(s) (NVML: Insufficient "
                               "Permissions).");
  for (const DevNode* n : nodes) f.evidence.push_back(describe_node(*n));
  f.evidence.push_back("/sys/fs/selinux/enforce: " + (s.security.selinux.empty()
                                                          ? std::string("absent (no SELinux)")
                                                          : s.security.selinux));
  if (!s.security.label.empty()) {
    f.evidence.push_back("this process's label (/proc/self/attr/current): " + s.security.label);
  }
  if (selinux && in_a_container(s)) {
    f.remedy.push_back(
        "on the host: sudo setsebool -P container_use_devices on   # lets containers use the "
        "device nodes they are given");
    f.remedy.push_back(
        "or for this container only: podman/docker run --security-opt "
        "label=disable ...");
  }
  f.remedy.push_back(selinux ? "on the host: sudo ausearch -m avc -ts recent | grep nvidia   # "
                               "the denial, with the label that asked"
                             : "on the host: sudo journalctl -k | grep -i 'apparmor=\"DENIED\"' "
                               "| grep nvidia   # the denial and its profile");
  return f;
}

Finding rootless_finding(const Snapshot& s, const std::vector<const DevNode*>& nodes) {
  Finding f = make_finding(
      kRootless, Severity::kFail,
      "This process runs in a user namespace (a rootless container) that cannot open " +
          std::to_string(nodes.size()) +
          " NVIDIA device node(s): their owner is not mapped into it, so only their "
          "\"other\" mode bits count here.");
  for (const DevNode* n : nodes) {
    f.evidence.push_back(describe_node(*n) + " (65534: an owner outside the namespace)");
  }
  f.evidence.push_back("/proc/self/uid_map: " + s.security.uid_map);
  f.evidence.push_back(process_groups_text(s));
  f.remedy = {
      "podman run --group-add keep-groups --device nvidia.com/gpu=all ...   # keeps your "
      "host groups (video) in the container; needs the crun runtime",
      "on the host, be in the nodes' group: sudo usermod -aG video $USER, then log in again",
      "or let every user open the nodes (the driver's default): echo 'options nvidia "
      "NVreg_DeviceFileMode=0666' | sudo tee /etc/modprobe.d/nvidia-devmode.conf, then "
      "reboot"};
  return f;
}

}  // namespace

std::vector<Finding> check_devnode_security(const Snapshot& s, const Config&) {
  std::vector<Finding> out;
  auto lsm = nodes_refused(s, NodeRefusal::kSecurityModule);
  bool any_node =
      std::any_of(s.devnodes.begin(), s.devnodes.end(), [](const DevNode& n) { return n.exists; });
  if (!any_node) {
    out.push_back(
        make_finding(kSelinux, Severity::kNotApplicable, "No NVIDIA device node exists to test."));
  } else if (lsm.empty()) {
    out.push_back(make_finding(kSelinux, Severity::kOk,
                               "No security module refuses an NVIDIA device node whose mode "
                               "bits allow it."));
  } else {
    out.push_back(selinux_finding(s, lsm));
  }
  auto unmapped = nodes_refused(s, NodeRefusal::kUnmappedOwner);
  if (!unmapped.empty()) {
    out.push_back(rootless_finding(s, unmapped));
  } else if (s.security.user_namespace) {
    out.push_back(make_finding(kRootless, Severity::kOk,
                               "This user namespace (uid_map " + s.security.uid_map +
                                   ") can open every NVIDIA device node it was given."));
  } else {
    out.push_back(make_finding(kRootless, Severity::kNotApplicable,
                               "This process does not run in a user namespace."));
  }
  return out;
}

}  // namespace gd
