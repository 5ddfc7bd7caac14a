// Why this process may or may not open an NVIDIA device node: shared by the
// devnodes, devnode-security and cgroup-devices checks, which each report
// one kind of refusal, so a refused node is reported exactly once.
#pragma once

#include <string>
#include <vector>

#include "checks/check.h"

namespace gd {

enum class NodeRefusal {
  kNone,            // it may open it (or it is missing)
  kModeBits,        // its mode and owner leave this user out: devnodes.permission
  kUnmappedOwner,   // a user namespace whose map leaves the owner out: devnodes.rootless-denied
  kSecurityModule,  // the mode bits allow it, access(2) said EACCES: devnodes.selinux-denied
  kDeviceCgroup,    // the mode bits allow it, access(2) said EPERM: cgroup.device-denied
};
NodeRefusal node_refusal(const Snapshot& s, const DevNode& n);
// The snapshot's nodes refused for that reason, in probe order.
std::vector<const DevNode*> nodes_refused(const Snapshot& s, NodeRefusal why);

// "/dev/nvidia0: mode 0660 owner uid 0 gid 44", with the kernel's refusal.
std::string describe_node(const DevNode& n);
// "this process: uid 1000, groups 4,24,1000"
std::string process_groups_text(const Snapshot& s);

}  // namespace gd
