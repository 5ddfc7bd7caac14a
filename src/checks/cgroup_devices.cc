// cgroup.device-denied: a cgroup v1 device controller whose allow list does
// not cover the NVIDIA nodes (c 195:* for nvidiactl and the GPUs, the
// dynamic nvidia-uvm major) with read and write.
//
// Input: devices.list lines, e.g.
//   a *:* rwm
//   c 195:* rwm
//   c 510:0 rw
//   c 1:3 rwm
#include <charconv>

#include "checks/checks.h"
#include "checks/devnode_access.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

struct Rule {
  char type = 0;   // 'a', 'c', 'b'
  int major = -1;  // -1 = '*'
  int minor = -1;
  bool read = false;
  bool write = false;
};

bool parse_num(std::string_view t, int* out) {
  if (t == "*") {
    *out = -1;
    return true;
  }
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && p == t.data() + t.size() && *out >= 0;
}

// nullopt for a line of another shape (kept as evidence, never trusted).
std::optional<Rule> parse_rule(const std::string& line) {
  std::vector<std::string> f;
  for (auto& part : split_strings(line, ' ')) {
    if (!part.empty()) f.push_back(part);
  }
  if (f.size() != 3 || f[0].size() != 1) return std::nullopt;
  Rule r;
  r.type = f[0][0];
  if (r.type != 'a' && r.type != 'c' && r.type != 'b') return std::nullopt;
  size_t colon = f[1].find(':');
  if (colon == std::string::npos) return std::nullopt;
  if (!parse_num(std::string_view(f[1]).substr(0, colon), &r.major) ||
      !parse_num(std::string_view(f[1]).substr(colon + 1), &r.minor)) {
    return std::nullopt;
  }
  r.read = contains(f[2], "r");
  r.write = contains(f[2], "w");
  return r;
}

bool covers(const std::vector<Rule>& rules, int major, int minor) {
  bool read = false;
  bool write = false;
  for (const auto& r : rules) {
    bool type_ok = r.type == 'a' || r.type == 'c';
    bool match = r.type == 'a' ||
                 ((r.major == -1 || r.major == major) && (r.minor == -1 || r.minor == minor));
    if (!type_ok || !match) continue;
    read = read || r.read;
    write = write || r.write;
  }
  return read && write;
}

struct Need {
  std::string path;
  int major;
  int minor;
  std::string bdf;
};

// cgroup v2: the filter is an eBPF program that cannot be read from here,
// but access(2) runs it and answers EPERM (DevNode::kernel_refused). A
// container whose filter was rebuilt without the nodes (systemd
// daemon-reload with the runtime's rules not in the unit) shows this.
Finding ebpf_denied(const Snapshot& s, const std::vector<const DevNode*>& nodes) {
  Finding f = make_finding("cgroup.device-denied", Severity::kFail,
                           "The device cgroup's eBPF filter refuses this process " +
                               std::to_string(nodes.size()) + " NVIDIA device node(s).");
  for (const DevNode* n : nodes) f.evidence.push_back(describe_node(*n));
  if (!s.limits.cgroup_path.empty()) f.evidence.push_back("cgroup: " + s.limits.cgroup_path);
  f.remedy = {"restart the container (or pod): its runtime installs the device rules anew",
              "so that a systemctl daemon-reload cannot drop them again: sudo nvidia-ctk system "
              "create-dev-char-symlinks --create-all   # the /dev/char links systemd needs"};
  return f;
}

}  // namespace

std::vector<Finding> check_cgroup_devices(const Snapshot& s, const Config&) {
  constexpr const char* kId = "cgroup.device-denied";
  if (!s.container.devices_cgroup_known) {
    std::vector<const DevNode*> refused = nodes_refused(s, NodeRefusal::kDeviceCgroup);
    if (refused.empty()) {
      return not_applicable(kId,
                            "The device cgroup's rules are not readable here (cgroup v2 uses "
                            "an eBPF filter), and access(2) was refused no NVIDIA node.");
    }
    return {ebpf_denied(s, refused)};
  }
  std::vector<Rule> rules;
  for (const auto& line : s.container.devices_allow) {
    if (auto r = parse_rule(line)) rules.push_back(*r);
  }
  std::vector<Need> needs = {{"/dev/nvidiactl", 195, 255, ""}};
  for (const auto& k : known_gpu_minors(s)) {
    needs.push_back({"/dev/nvidia" + std::to_string(k.minor), 195, k.minor, k.bdf});
  }
  int uvm_major = -1;
  if (auto it = s.driver.char_majors.find("nvidia-uvm"); it != s.driver.char_majors.end()) {
    uvm_major = it->second;
  } else if (const DevNode* n = find_devnode(s, "/dev/nvidia-uvm"); n != nullptr && n->exists) {
    uvm_major = n->major;
  }
  if (uvm_major >= 0) needs.push_back({"/dev/nvidia-uvm", uvm_major, 0, ""});

  std::vector<std::string> denied;
  std::vector<std::string> gpus;
  for (const auto& n : needs) {
    if (covers(rules, n.major, n.minor)) continue;
    denied.push_back(n.path + " (c " + std::to_string(n.major) + ":" + std::to_string(n.minor) +
                     ")");
    if (!n.bdf.empty()) gpus.push_back(n.bdf);
  }
  if (denied.empty()) {
    return all_ok(kId, "The device cgroup allows read/write on all " +
                           std::to_string(needs.size()) + " NVIDIA node(s) CUDA needs.");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "The device cgroup forbids this process to use " +
                               std::to_string(denied.size()) + " NVIDIA device node(s).");
  f.gpus = gpus;
  f.evidence.push_back("not allowed rw: " + join(denied, ", "));
  if (s.container.devices_allow.empty()) {
    f.evidence.push_back("devices.list: empty (nothing allowed)");
  }
  for (const auto& line : s.container.devices_allow) f.evidence.push_back("devices.list: " + line);
  if (!s.limits.cgroup_path.empty()) f.evidence.push_back("cgroup: " + s.limits.cgroup_path);
  std::string uvm_rule = uvm_major >= 0
                             ? " --device-cgroup-rule='c " + std::to_string(uvm_major) + ":* rmw'"
                             : std::string();
  f.remedy = {"docker run --gpus all IMAGE ...   # the NVIDIA runtime adds the device rules",
              "or: docker run --device-cgroup-rule='c 195:* rmw'" + uvm_rule + " ...",
              "Slurm with ConstrainDevices=yes: request the GPUs (srun --gres=gpu:N or --gpus=N)."};
  return {f};
}

}  // namespace gd
