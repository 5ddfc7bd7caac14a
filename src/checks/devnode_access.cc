#include "checks/devnode_access.h"

#include <cstdio>

#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

std::string mode_text(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

}  // namespace

NodeRefusal node_refusal(const Snapshot& s, const DevNode& n) {
  if (!n.exists || n.can_open) return NodeRefusal::kNone;
  if (n.kernel_refused == "EACCES") return NodeRefusal::kSecurityModule;
  if (n.kernel_refused == "EPERM") return NodeRefusal::kDeviceCgroup;
  if (s.security.user_namespace &&
      (n.owner_uid == SecurityInfo::kOverflowId || n.owner_gid == SecurityInfo::kOverflowId)) {
    return NodeRefusal::kUnmappedOwner;
  }
  return NodeRefusal::kModeBits;
}

std::vector<const DevNode*> nodes_refused(const Snapshot& s, NodeRefusal why) {
  std::vector<const DevNode*> out;
  for (const auto& n : s.devnodes) {
    if (node_refusal(s, n) == why) out.push_back(&n);
  }
  return out;
}

std::string describe_node(const DevNode& n) {
  std::string out = n.path + ": mode " + mode_text(n.mode) + " owner uid " +
                    std::to_string(n.owner_uid) + " gid " + std::to_string(n.owner_gid);
  if (!n.kernel_refused.empty()) out += ", but access(2) answers " + n.kernel_refused;
  if (!n.error.empty()) out += " (" + n.error + ")";
  return out;
}

std::string process_groups_text(const Snapshot& s) {
  std::vector<std::string> g;
  for (uint32_t x : s.limits.groups) g.push_back(std::to_string(x));
  return "this process: uid " + std::to_string(s.limits.euid) + ", groups " +
         (g.empty() ? std::string("none") : join(g, ","));
}

}  // namespace gd
