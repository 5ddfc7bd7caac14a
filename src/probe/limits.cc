// The limits probe: what bounds this process's address space and memory.
// CUDA reserves a large virtual range at cuInit, so a `ulimit -v`, a strict
// overcommit policy or a tight cgroup limit turns into "out of memory" (2)
// before any allocation. rlimits and credentials are this process's (or a
// recorded tree's /proc/self/{limits,status}, see process_identity.cc); the
// other /proc and /sys files come through the root.
#include <algorithm>

#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/text.h"

namespace gd {

namespace {

// cgroup v1 prints "no limit" as the largest page-aligned long (9223372036854771712);
// anything this large is no limit in practice.
constexpr uint64_t kV1NoLimit = uint64_t{1} << 62;

// /proc/meminfo, values in kB:
//   MemTotal:       131891232 kB
//   CommitLimit:    74334760 kB
//   Committed_AS:   12345678 kB
void parse_meminfo(std::string_view text, LimitsInfo* l, ProbeNotes* notes) {
  int found = 0;
  for (auto line : split_lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::optional<uint64_t>* field = nullptr;
    if (key == "MemTotal") field = &l->mem_total_bytes;
    if (key == "CommitLimit") field = &l->commit_limit_bytes;
    if (key == "Committed_AS") field = &l->committed_as_bytes;
    if (field == nullptr) continue;
    auto toks = split_ws(line.substr(colon + 1));
    std::optional<uint64_t> kb = toks.empty() ? std::nullopt : parse_u64(toks[0]);
    if (!kb || *kb > UINT64_MAX / 1024) {
      notes->unrecognised(1, "/proc/meminfo (" + std::string(key) + ")");
      continue;
    }
    *field = *kb * 1024;
    ++found;
  }
  if (found == 0) notes->garbled("no MemTotal/CommitLimit/Committed_AS in /proc/meminfo");
  if (!l->mem_total_bytes) notes->gap("limits.mem_total_bytes", "no MemTotal in /proc/meminfo");
  if (!l->commit_limit_bytes) {
    notes->gap("limits.commit_limit_bytes", "no CommitLimit in /proc/meminfo");
  }
}

void read_overcommit(const RootFs& fs, LimitsInfo* l, ProbeNotes* notes) {
  if (auto r = fs.read_line("/proc/sys/vm/overcommit_memory")) {
    auto v = parse_u64(*r);
    if (v && *v <= 2) {
      l->overcommit_memory = static_cast<int>(*v);
    } else {
      notes->garbled("unrecognised overcommit_memory '" + printable(*r, 32) + "'");
    }
  } else {
    notes->gap("limits.overcommit_memory", r.error());
  }
  if (auto r = fs.read_line("/proc/sys/vm/overcommit_ratio")) {
    l->overcommit_ratio = parse_u64(*r);
    if (!l->overcommit_ratio) notes->garbled("unrecognised overcommit_ratio");
  } else {
    notes->note(r.error());
  }
}

// The cgroup's parents down to the root: "/a/b" -> {"/a/b", "/a"}.
std::vector<std::string> self_and_ancestors(const std::string& path) {
  std::vector<std::string> out;
  std::string p = path;
  while (p.size() > 1) {
    out.push_back(p);
    size_t slash = p.rfind('/');
    p = slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
  }
  return out;
}

// A limit file value; nullopt when absent or "no limit". *read_any is set
// when the file existed.
std::optional<uint64_t> read_limit_file(const RootFs& fs, const std::string& file, bool v1,
                                        bool* read_any, ProbeNotes* notes) {
  auto r = fs.read_line(file);
  if (!r) return std::nullopt;
  *read_any = true;
  if (!v1 && *r == "max") return std::nullopt;
  auto v = parse_u64(*r);
  if (!v) {
    notes->garbled("unrecognised " + file + " '" + printable(*r, 32) + "'");
    return std::nullopt;
  }
  if (v1 && *v >= kV1NoLimit) return std::nullopt;
  return v;
}

// The smallest limit on the way from the process's cgroup up to the root.
// Inside a container with its own cgroup namespace or mount, the recorded path
// may not exist under /sys/fs/cgroup: then the mount's top holds the limit.
std::optional<uint64_t> cgroup_limit(const RootFs& fs, const std::string& base,
                                     const std::string& path, const std::string& file, bool v1,
                                     ProbeNotes* notes) {
  std::optional<uint64_t> best;
  bool read_any = false;
  for (const auto& p : self_and_ancestors(path)) {
    auto v = read_limit_file(fs, base + p + "/" + file, v1, &read_any, notes);
    if (v && (!best || *v < *best)) best = v;
  }
  if (!read_any) best = read_limit_file(fs, base + "/" + file, v1, &read_any, notes);
  return best;
}

}  // namespace

// /proc/self/cgroup:
//   0::/user.slice/user-1000.slice/session-3.scope          (v2)
//   11:memory:/docker/4f1c...                                 (v1 / hybrid)
//   12:devices:/docker/4f1c...
//   4:cpu,cpuacct:/docker/4f1c...
CgroupRef parse_proc_cgroup(std::string_view text) {
  CgroupRef ref;
  for (auto line : split_lines(text)) {
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string_view id = line.substr(0, c1);
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = printable(trim(line.substr(c2 + 1)), 1024);
    if (id == "0" && controllers.empty()) ref.v2_path = path;
    for (auto c : split(controllers, ',')) {
      if (c == "memory") ref.memory_v1_path = path;
      if (c == "devices") ref.devices_v1_path = path;
    }
  }
  return ref;
}

ProbeRecord probe_limits_files(const RootFs& fs, Snapshot* s) {
  LimitsInfo& l = s->limits;
  ProbeNotes notes;
  // Each input sets its own fields; a missing one leaves a gap and the
  // rest stand (RLIMIT_AS decides memory.address-space-limit without meminfo).
  if (auto r = fs.read("/proc/meminfo", 64 * 1024)) {
    parse_meminfo(*r, &l, &notes);
  } else {
    for (const char* field : {"limits.mem_total_bytes", "limits.commit_limit_bytes"}) {
      notes.gap(field, r.error());
    }
  }
  read_overcommit(fs, &l, &notes);

  auto cg = fs.read("/proc/self/cgroup", 64 * 1024);
  if (!cg) {
    notes.gap("limits.cgroup_memory_limit_bytes", cg.error());
    return notes.record("limits");
  }
  CgroupRef ref = parse_proc_cgroup(*cg);
  if (!ref.memory_v1_path.empty()) {
    l.cgroup_path = ref.memory_v1_path;
    l.cgroup_memory_limit_bytes = cgroup_limit(fs, "/sys/fs/cgroup/memory", ref.memory_v1_path,
                                               "memory.limit_in_bytes", true, &notes);
  } else if (!ref.v2_path.empty()) {
    l.cgroup_path = ref.v2_path;
    l.cgroup_memory_limit_bytes =
        cgroup_limit(fs, "/sys/fs/cgroup", ref.v2_path, "memory.max", false, &notes);
  } else {
    notes.garbled("no cgroup path in /proc/self/cgroup");
  }
  return notes.record("limits");
}

ProbeRecord probe_limits(const ProbeOptions& opt, Snapshot* s) {
  LimitsInfo& l = s->limits;
  RootFs fs(opt.root);
  std::string rl_problem, cred_problem;
  ProcessRlimits rl = rlimits_at(fs, &rl_problem);
  l.rlimit_as_bytes = rl.as_bytes;
  l.rlimit_data_bytes = rl.data_bytes;
  l.rlimit_as_hard_bytes = rl.as_hard_bytes;
  l.rlimit_data_hard_bytes = rl.data_hard_bytes;
  Credentials c = credentials_at(fs, &cred_problem);
  l.uid = c.uid;
  l.euid = c.euid;
  l.groups = c.groups;
  ProbeRecord r = probe_limits_files(fs, s);
  for (const auto& p : {rl_problem, cred_problem}) {
    if (p.empty()) continue;
    r.status = ProbeStatus::kFailed;
    r.detail += (r.detail.empty() ? "" : "; ") + p;
  }
  if (!rl_problem.empty()) r.gaps.push_back({"limits.rlimit_as_bytes", rl_problem});
  return r;
}

}  // namespace gd
