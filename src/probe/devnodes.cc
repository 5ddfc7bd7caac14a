// The devnodes probe: the /dev/nvidia* nodes CUDA opens, whether they exist,
// are character devices with the right numbers, and whether this process may
// open them for reading and writing (judged from the mode bits against
// credentials_at(): this process, or a recorded tree's /proc/self/status).
// A real node (the live machine's, or one under a recorded root) that the
// mode bits allow is then asked of the kernel with access(2), which also
// runs the device cgroup and the security module (SELinux) without opening
// the device: a refusal there is recorded as kernel_refused. Opening it
// would wake the GPU, and may hang with it.
//
// Nodes looked at: /dev/nvidiactl, every /dev/nvidia[0-9]+ (plus, absent,
// each /dev/nvidiaN the driver announces as "Device Minor: N" in
// /proc/driver/nvidia/gpus/*/information), /dev/nvidia-uvm,
// /dev/nvidia-uvm-tools, /dev/nvidia-modeset, /dev/nvidia-nvswitchctl and
// /dev/nvidia-nvswitch[0-9]+ (when present), and /dev/nvidia-caps/*.
// The first five always get a record, present or not.
//
// RECORDED TREES (any --root other than "/"): git cannot hold device nodes,
// so there a regular file stands for a node, its one line describing it:
//
//   char 195:0 0666 0:0
//   ^type ^major:minor ^mode (octal) ^uid:gid
//   char 195:255 0666 0:0 refused=EACCES
//                         ^the kernel refused it beyond the mode bits
//
// type is "char" or "block". The same format is described in
// tests/roots/README.md. A real device node under a recorded root is read as
// on a live machine; a regular file that does not parse is recorded as an
// existing non-device with the parse error.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/text.h"

namespace gd {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "nvidia12" -> 12; nullopt for "nvidiactl", "nvidia-uvm".
std::optional<int> numbered(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  if (!all_digits(rest) || rest.size() > 6) return std::nullopt;
  return static_cast<int>(*parse_u64(rest));
}

std::vector<std::string> numbered_nodes(const std::vector<std::string>& dev_entries,
                                        std::string_view prefix, const std::set<int>& also) {
  std::set<int> numbers = also;
  for (const auto& e : dev_entries) {
    if (auto n = numbered(e, prefix)) numbers.insert(*n);
  }
  std::vector<std::string> out;
  for (int n : numbers) out.push_back("/dev/" + std::string(prefix) + std::to_string(n));
  return out;
}

// GPU minors the driver announces, so a missing /dev/nvidiaN gets a record.
std::set<int> announced_minors(const RootFs& fs) {
  std::set<int> minors;
  for (const auto& bdf : fs.list("/proc/driver/nvidia/gpus", 4096)) {
    auto r = fs.read("/proc/driver/nvidia/gpus/" + bdf + "/information", 16 * 1024);
    if (!r) continue;
    auto info = parse_gpu_information(*r);
    if (info.minor) minors.insert(*info.minor);
  }
  return minors;
}

void fill_from_stat(const struct stat& st, const Credentials& creds, DevNode* n) {
  n->exists = true;
  n->is_char_device = S_ISCHR(st.st_mode);
  if (n->is_char_device || S_ISBLK(st.st_mode)) {
    n->major = static_cast<int>(major(st.st_rdev));
    n->minor = static_cast<int>(minor(st.st_rdev));
  }
  n->mode = static_cast<uint32_t>(st.st_mode & 07777);
  n->owner_uid = static_cast<uint32_t>(st.st_uid);
  n->owner_gid = static_cast<uint32_t>(st.st_gid);
  n->can_open = n->is_char_device && can_open_rw(n->mode, n->owner_uid, n->owner_gid, creds);
}

// access(2) checks with this process's real ids, so it is asked only when
// they are its effective ones and the ones the mode bits were judged for (a
// recorded tree may name another user); glibc's faccessat(AT_EACCESS) may
// judge the mode bits alone on kernels before 5.8.
void ask_kernel(const std::string& path, const Credentials& creds, DevNode* n) {
  if (!n->is_char_device || !n->can_open) return;
  if (::getuid() != ::geteuid() || ::getgid() != ::getegid() || creds.euid != ::geteuid() ||
      creds.egid != ::getegid()) {
    return;
  }
  if (::access(path.c_str(), R_OK | W_OK) == 0) return;
  int err = errno;
  if (err != EACCES && err != EPERM) return;
  n->can_open = false;
  n->kernel_refused = err == EACCES ? "EACCES" : "EPERM";
}

DevNode read_node(const RootFs& fs, const std::string& path, const Credentials& creds,
                  ProbeNotes* notes) {
  DevNode n;
  n.path = path;
  auto st = fs.stat(path);
  if (!st) {
    n.error = st.error();
    return n;
  }
  if (fs.live() || !S_ISREG(st->st_mode)) {
    fill_from_stat(*st, creds, &n);
    ask_kernel(fs.path(path), creds, &n);
    return n;
  }
  n.exists = true;
  auto text = fs.read_line(path, 256);
  auto rec = text ? parse_recorded_node(*text) : Result<RecordedNode>(Error{text.error()});
  if (!rec) {
    n.error = rec.error();
    notes->garbled(path + ": " + rec.error());
    return n;
  }
  n.is_char_device = rec->is_char;
  n.major = rec->major;
  n.minor = rec->minor;
  n.mode = rec->mode;
  n.owner_uid = rec->uid;
  n.owner_gid = rec->gid;
  n.can_open = n.is_char_device && can_open_rw(n.mode, n.owner_uid, n.owner_gid, creds);
  if (!rec->refused.empty() && n.can_open) {
    n.can_open = false;
    n.kernel_refused = rec->refused;
  }
  return n;
}

std::optional<std::pair<uint32_t, uint32_t>> parse_pair(std::string_view s, char sep) {
  size_t p = s.find(sep);
  if (p == std::string_view::npos) return std::nullopt;
  auto a = parse_u64(s.substr(0, p));
  auto b = parse_u64(s.substr(p + 1));
  if (!a || !b || *a > UINT32_MAX || *b > UINT32_MAX) return std::nullopt;
  return std::make_pair(static_cast<uint32_t>(*a), static_cast<uint32_t>(*b));
}

}  // namespace

bool can_open_rw(uint32_t mode, uint32_t owner_uid, uint32_t owner_gid, const Credentials& c) {
  // CAP_DAC_OVERRIDE; in a user namespace only over nodes whose owner is
  // mapped into it, and an unmapped owner shows as the overflow id.
  bool owner_mapped = !c.user_namespace || (owner_uid != SecurityInfo::kOverflowId &&
                                            owner_gid != SecurityInfo::kOverflowId);
  if (c.euid == 0 && owner_mapped) return true;
  // The kernel uses exactly one class: owner, else group, else other.
  if (c.euid == owner_uid) return (mode & 0600) == 0600;
  bool in_group = c.egid == owner_gid ||
                  std::find(c.groups.begin(), c.groups.end(), owner_gid) != c.groups.end();
  if (in_group) return (mode & 0060) == 0060;
  return (mode & 0006) == 0006;
}

// "char 195:0 0666 0:0", "char 510:1 0666 0:44", "block 8:0 0660 0:6",
// "char 195:255 0666 0:0 refused=EACCES"
Result<RecordedNode> parse_recorded_node(std::string_view text) {
  auto f = split_ws(trim(text));
  auto bad = [&]() {
    return Error{"not a recorded device node ('" + printable(trim(text), 64) +
                 "', want 'char MAJOR:MINOR MODE UID:GID [refused=EACCES|EPERM]')"};
  };
  std::string refused;
  if (f.size() == 5) {
    if (f[4] != "refused=EACCES" && f[4] != "refused=EPERM") return bad();
    refused = std::string(f[4].substr(f[4].find('=') + 1));
    f.pop_back();
  }
  if (f.size() != 4 || (f[0] != "char" && f[0] != "block")) return bad();
  auto dev = parse_pair(f[1], ':');
  auto mode = parse_octal(f[2]);
  auto owner = parse_pair(f[3], ':');
  if (!dev || !mode || *mode > 07777 || !owner || dev->first > 4095 || dev->second > 1048575) {
    return bad();
  }
  RecordedNode n;
  n.is_char = f[0] == "char";
  n.major = static_cast<int>(dev->first);
  n.minor = static_cast<int>(dev->second);
  n.mode = *mode;
  n.uid = owner->first;
  n.gid = owner->second;
  n.refused = refused;
  return n;
}

ProbeRecord probe_devnodes_at(const RootFs& fs, Credentials creds, Snapshot* s) {
  ProbeNotes notes;
  s->devnodes.clear();
  s->security = security_at(fs);
  creds.user_namespace = s->security.user_namespace;
  if (!fs.is_dir("/dev")) {
    notes.unavailable("no /dev");
    return notes.record("devnodes");
  }
  const std::vector<std::string> dev = fs.list("/dev", 100000);
  std::vector<std::string> paths = {"/dev/nvidiactl"};
  for (auto& p : numbered_nodes(dev, "nvidia", announced_minors(fs))) paths.push_back(p);
  for (const char* p : {"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
    paths.push_back(p);
  }
  if (std::find(dev.begin(), dev.end(), "nvidia-nvswitchctl") != dev.end()) {
    paths.push_back("/dev/nvidia-nvswitchctl");
  }
  for (auto& p : numbered_nodes(dev, "nvidia-nvswitch", {})) paths.push_back(p);
  for (const auto& c : fs.list("/dev/nvidia-caps", 4096)) paths.push_back("/dev/nvidia-caps/" + c);

  for (const auto& p : paths) s->devnodes.push_back(read_node(fs, p, creds, &notes));
  // The names in /dev/char, not their targets: a recorded tree keeps the
  // links, which point outside it.
  if (fs.is_dir("/dev/char")) {
    std::vector<std::string> links = fs.list("/dev/char", 100000);
    std::set<std::string> names(links.begin(), links.end());
    for (auto& n : s->devnodes) {
      if (!n.exists || !n.is_char_device || n.major < 0) continue;
      n.char_link = names.count(std::to_string(n.major) + ":" + std::to_string(n.minor)) != 0;
    }
  }
  return notes.record("devnodes");
}

ProbeRecord probe_devnodes(const ProbeOptions& opt, Snapshot* s) {
  RootFs fs(opt.root);
  std::string problem;  // reported by the limits probe, which records the identity
  return probe_devnodes_at(fs, credentials_at(fs, &problem), s);
}

}  // namespace gd
