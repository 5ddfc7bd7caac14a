// Who this process is and what bounds it: credentials (for device-node
// permissions) and the RLIMIT_AS / RLIMIT_DATA soft limits (CUDA reserves a
// large virtual range at cuInit). On the live machine they come from system
// calls; a recorded tree may fix them in /proc/self/status and
// /proc/self/limits, which are those same values as procfs prints them.
#include <sys/resource.h>
#include <unistd.h>

#include "probe/file_probes.h"
#include "util/text.h"

namespace gd {

namespace {

// nullopt: unlimited (or unreadable, which getrlimit never is for these).
std::optional<uint64_t> rlimit_value(rlim_t v) {
  if (v == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(v);
}

void read_rlimit(int resource, std::optional<uint64_t>* soft, std::optional<uint64_t>* hard) {
  struct rlimit rl;
  if (::getrlimit(resource, &rl) != 0) return;
  *soft = rlimit_value(rl.rlim_cur);
  *hard = rlimit_value(rl.rlim_max);
}

// "1000\t1000\t1000\t1000" -> its numbers; nullopt if any is not one.
std::optional<std::vector<uint32_t>> id_list(std::string_view s) {
  std::vector<uint32_t> out;
  for (auto tok : split_ws(s)) {
    auto v = parse_u64(tok);
    if (!v || *v > UINT32_MAX) return std::nullopt;
    out.push_back(static_cast<uint32_t>(*v));
  }
  return out;
}

}  // namespace

Credentials process_credentials() {
  Credentials c;
  c.uid = static_cast<uint32_t>(::getuid());
  c.euid = static_cast<uint32_t>(::geteuid());
  c.egid = static_cast<uint32_t>(::getegid());
  int n = ::getgroups(0, nullptr);
  if (n > 0) {
    std::vector<gid_t> g(static_cast<size_t>(n));
    n = ::getgroups(n, g.data());
    for (int i = 0; i < n; ++i)
      c.groups.push_back(static_cast<uint32_t>(g[static_cast<size_t>(i)]));
  }
  return c;
}

// /proc/self/status (real, effective, saved, filesystem ids):
//   Uid:	1000	1000	1000	1000
//   Gid:	1000	1000	1000	1000
//   Groups:	4 24 27 30 46 1000
std::optional<Credentials> parse_proc_status_credentials(std::string_view text) {
  Credentials c;
  bool uid = false, gid = false, groups = false;
  for (auto line : split_lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    if (key != "Uid" && key != "Gid" && key != "Groups") continue;
    auto ids = id_list(line.substr(colon + 1));
    if (!ids) return std::nullopt;
    if (key == "Groups") {
      c.groups = *ids;
      groups = true;
      continue;
    }
    if (ids->size() < 2) return std::nullopt;
    if (key == "Uid") {
      c.uid = (*ids)[0];
      c.euid = (*ids)[1];
      uid = true;
    } else {
      c.egid = (*ids)[1];
      gid = true;
    }
  }
  if (!uid || !gid || !groups) return std::nullopt;
  return c;
}

Credentials credentials_at(const RootFs& fs, std::string* problem) {
  problem->clear();
  if (fs.live()) return process_credentials();
  auto r = fs.read("/proc/self/status", 64 * 1024);
  if (!r) return process_credentials();
  if (auto c = parse_proc_status_credentials(*r)) return *c;
  *problem = "no Uid/Gid/Groups in /proc/self/status";
  return process_credentials();
}

// "         0          0 4294967295" is the initial namespace; a rootless
// container shows e.g. "0 1000 1" and "1 100000 65536".
std::optional<bool> parse_uid_map_is_namespace(std::string_view text) {
  auto lines = split_lines(trim(text));
  if (lines.empty()) return std::nullopt;
  for (auto line : lines) {
    auto ids = id_list(line);
    if (!ids || ids->size() != 3) return std::nullopt;
  }
  if (lines.size() != 1) return true;
  auto ids = *id_list(lines[0]);
  return !(ids[0] == 0 && ids[1] == 0 && ids[2] == UINT32_MAX);
}

SecurityInfo security_at(const RootFs& fs) {
  SecurityInfo sec;
  if (auto e = fs.read_line("/sys/fs/selinux/enforce", 16)) {
    std::string_view v = trim(*e);
    sec.selinux = v == "1" ? "enforcing" : v == "0" ? "permissive" : "";
  }
  if (auto l = fs.read_line("/proc/self/attr/current", 512)) {
    std::string_view v = trim(*l);
    while (!v.empty() && v.back() == '\0') v.remove_suffix(1);
    sec.label = printable(v, 256);
  }
  if (auto m = fs.read("/proc/self/uid_map", 4096)) {
    sec.user_namespace = parse_uid_map_is_namespace(*m).value_or(false);
    auto lines = split_lines(trim(*m));
    if (!lines.empty()) {
      for (auto w : split_ws(lines[0]))
        sec.uid_map += (sec.uid_map.empty() ? "" : " ") + std::string(w);
      sec.uid_map = printable(sec.uid_map, 64);
    }
  }
  return sec;
}

// /proc/self/status, the address-space lines, in kB:
//   VmPeak:	12874220 kB
//   VmSize:	12862540 kB
//   VmData:	  412312 kB
// A field that is absent or unreadable stays 0 (not measured).
VmUsage parse_proc_status_vm(std::string_view text) {
  VmUsage vm;
  for (auto line : split_lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    uint64_t* field = key == "VmSize" ? &vm.size_bytes : key == "VmData" ? &vm.data_bytes : nullptr;
    if (field == nullptr) continue;
    auto toks = split_ws(line.substr(colon + 1));
    auto kb = toks.empty() ? std::nullopt : parse_u64(toks[0]);
    if (kb && *kb <= UINT64_MAX / 1024) *field = *kb * 1024;
  }
  return vm;
}

VmUsage process_vm_usage() {
  // Read directly, not through a root: this is the live process measuring itself.
  RootFs live("/");
  auto r = live.read("/proc/self/status", 64 * 1024);
  return r ? parse_proc_status_vm(*r) : VmUsage{};
}

ProcessRlimits process_rlimits() {
  ProcessRlimits rl;
  read_rlimit(RLIMIT_AS, &rl.as_bytes, &rl.as_hard_bytes);
  read_rlimit(RLIMIT_DATA, &rl.data_bytes, &rl.data_hard_bytes);
  return rl;
}

// /proc/self/limits:
//   Limit                     Soft Limit           Hard Limit           Units
//   Max data size             unlimited            unlimited            bytes
//   Max address space         34359738368          unlimited            bytes
// The hard column is optional here: older recorded trees may carry only the
// soft one, and a missing hard limit reads as unknown (nullopt).
std::optional<ProcessRlimits> parse_proc_limits(std::string_view text) {
  ProcessRlimits rl;
  int found = 0;
  struct Row {
    std::string_view name;
    std::optional<uint64_t>* soft;
    std::optional<uint64_t>* hard;
  };
  const Row rows[] = {{"Max address space", &rl.as_bytes, &rl.as_hard_bytes},
                      {"Max data size", &rl.data_bytes, &rl.data_hard_bytes}};
  for (auto line : split_lines(text)) {
    const Row* row = nullptr;
    for (const Row& r : rows) {
      if (line.substr(0, r.name.size()) == r.name) row = &r;
    }
    if (row == nullptr) continue;
    auto toks = split_ws(line.substr(row->name.size()));
    if (toks.empty()) return std::nullopt;
    if (toks[0] != "unlimited") {
      *row->soft = parse_u64(toks[0]);
      if (!*row->soft) return std::nullopt;
    }
    if (toks.size() >= 2 && toks[1] != "unlimited") {
      *row->hard = parse_u64(toks[1]);
      if (!*row->hard) return std::nullopt;
    }
    ++found;
  }
  if (found != 2) return std::nullopt;
  return rl;
}

ProcessRlimits rlimits_at(const RootFs& fs, std::string* problem) {
  problem->clear();
  if (fs.live()) return process_rlimits();
  auto r = fs.read("/proc/self/limits", 64 * 1024);
  if (!r) return process_rlimits();
  if (auto rl = parse_proc_limits(*r)) return *rl;
  *problem = "unrecognised /proc/self/limits";
  return process_rlimits();
}

}  // namespace gd
