// Who uses each GPU: the processes NVML lists on the GPUs, read in /proc
// through the root (owner, cgroup, state, age), the job each belongs to (a
// Slurm job, a Kubernetes pod, a container) and whether that job still runs
// on this node. Plus one bounded scan of /proc for the node's workload
// managers (slurmd, kubelet) and the Slurm jobs whose slurmstepd runs here.
//
// Read-only: files only, no signal, nothing that touches a GPU. A process's
// environ is read only for SLURM_JOB_ID, and only when its cgroup names no
// Slurm job or pod (proctrack/linuxproc leaves no job cgroup); nothing else
// of it is kept.
#include "probe/workload.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/text.h"

namespace gd {

namespace {

bool all_digits(std::string_view s, size_t max_len) {
  return !s.empty() && s.size() <= max_len &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Container ids: 64 hex digits from docker, containerd, CRI-O and podman;
// 12 is the shortest a runtime prints.
bool container_id(std::string_view s) {
  return s.size() >= 12 && s.size() <= 128 &&
         std::all_of(s.begin(), s.end(), [](char c) { return hex_digit(c) >= 0; });
}

// A pod uid as the kubelet writes it: "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d".
// Strict, because it becomes a path under /var/lib/kubelet/pods.
bool pod_uid(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c == '-' || hex_digit(c) >= 0; });
}

std::string_view strip_suffix(std::string_view s, std::string_view suffix) {
  if (s.ends_with(suffix)) s.remove_suffix(suffix.size());
  return s;
}

// "kubepods-burstable-pod1b2c3d4e_5f60_4a7b_8c9d_0e1f2a3b4c5d.slice" (systemd
// driver: '_' for '-') or "pod1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d" (cgroupfs)
// -> the uid with dashes; "" for any other component.
std::string pod_of_component(std::string_view c) {
  std::string_view uid;
  if (c.ends_with(".slice")) {
    size_t at = c.rfind("-pod");
    if (at == std::string_view::npos) return "";
    uid = strip_suffix(c.substr(at + 4), ".slice");
  } else if (c.starts_with("pod")) {
    uid = c.substr(3);
  } else {
    return "";
  }
  std::string out(uid);
  std::replace(out.begin(), out.end(), '_', '-');
  return pod_uid(out) ? out : "";
}

// The container id a component names ("docker-<id>.scope", "libpod-<id>.scope",
// "crio-<id>.scope", "cri-containerd-<id>.scope", the same without .scope
// under cgroupfs); "" otherwise. "libpod-conmon-<id>.scope" is podman's
// monitor, not the container: its rest is no id.
std::string container_of_component(std::string_view c) {
  c = strip_suffix(c, ".scope");
  for (std::string_view p : {"docker-", "libpod-", "crio-", "cri-containerd-"}) {
    if (c.starts_with(p) && container_id(c.substr(p.size()))) {
      return std::string(c.substr(p.size()));
    }
  }
  return "";
}

// "cannot read /proc/4242/environ: Permission denied" -> "environ: Permission
// denied": the process's own errors name its file, not the whole path.
std::string file_error(std::string_view name, std::string_view abs, const std::string& err) {
  std::string prefix = "cannot read " + std::string(abs) + ": ";
  if (err.starts_with(prefix)) return std::string(name) + ": " + err.substr(prefix.size());
  if (err == "no " + std::string(abs)) return std::string(name) + ": No such file or directory";
  if (err.starts_with(abs)) return std::string(name) + err.substr(abs.size());
  return std::string(name) + ": " + err;
}

// "" when the directory can be listed, else why not.
std::string list_error(const RootFs& fs, std::string_view dir) {
  DIR* d = ::opendir(fs.path(dir).c_str());
  if (d != nullptr) {
    ::closedir(d);
    return "";
  }
  int err = errno;
  if (err == ENOENT || err == ENOTDIR) return "no " + std::string(dir);
  return "cannot list " + std::string(dir) + ": " + std::strerror(err);
}

// Job ids are numbers: shorter sorts first, so "99" before "100".
bool numeric_less(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// What the node-wide /proc scan found.
struct NodeScan {
  std::optional<uint32_t> slurmd_pid;
  std::map<std::string, std::pair<uint32_t, std::string>> stepds;  // job -> (pid, step)
  size_t stepd_count = 0;
  // A slurmstepd whose job could not be read: it may be any job's.
  std::optional<uint32_t> unnamed_stepd;
  bool truncated = false;  // stopped at kWorkloadMaxScan
};

NodeScan scan_node(const RootFs& fs, ProbeNotes* notes, WorkloadInfo* w) {
  NodeScan n;
  std::set<std::string> managers;
  // A few hundred non-pid entries ("self", "sys", ...) sit beside the pids.
  const size_t cap = kWorkloadMaxScan + 512;
  std::vector<std::string> entries = fs.list("/proc", cap);
  size_t pids = 0;
  for (const auto& e : entries) {
    if (!all_digits(e, 10)) continue;
    if (++pids > kWorkloadMaxScan) {
      n.truncated = true;
      break;
    }
    auto comm = fs.read_line("/proc/" + e + "/comm", 64);
    if (!comm) continue;  // ended meanwhile
    auto pid = static_cast<uint32_t>(*parse_u64(e));
    if (*comm == "slurmd" || *comm == "kubelet") {
      managers.insert(*comm);
      if (*comm == "slurmd" && !n.slurmd_pid) n.slurmd_pid = pid;
    } else if (*comm == "slurmstepd") {
      ++n.stepd_count;
      auto cmdline = fs.read("/proc/" + e + "/cmdline", 4096);
      auto step = cmdline ? parse_slurmstepd_cmdline(*cmdline) : std::nullopt;
      if (!step) {
        if (!n.unnamed_stepd) n.unnamed_stepd = pid;
        continue;
      }
      // The lowest pid of a job stands for it (list() sorts pids as text).
      auto [it, added] = n.stepds.emplace(step->job, std::make_pair(pid, step->step));
      if (!added && pid < it->second.first) it->second = {pid, step->step};
    }
  }
  if (entries.size() >= cap) n.truncated = true;
  if (n.truncated) {
    notes->note("the /proc scan stopped after " + std::to_string(kWorkloadMaxScan) + " processes");
  }
  w->managers.assign(managers.begin(), managers.end());
  for (const auto& [job, _] : n.stepds) w->slurm_jobs.push_back(job);
  std::sort(w->slurm_jobs.begin(), w->slurm_jobs.end(), numeric_less);
  return n;
}

void decide_slurm(const NodeScan& n, GpuProcess* p) {
  auto it = n.stepds.find(p->job_id);
  if (it != n.stepds.end()) {
    p->job_state = "running";
    const std::string& step = it->second.second;
    p->job_evidence = "slurmstepd [" + p->job_id + (step.empty() ? "" : "." + step) + "] pid " +
                      std::to_string(it->second.first) + " runs";
    return;
  }
  p->job_state = "unknown";
  if (n.truncated) {
    p->job_evidence = "the /proc scan stopped after " + std::to_string(kWorkloadMaxScan) +
                      " processes before finding a slurmstepd for job " + p->job_id;
  } else if (n.unnamed_stepd) {
    p->job_evidence = "slurmstepd pid " + std::to_string(*n.unnamed_stepd) +
                      " names no job in its cmdline: it may be job " + p->job_id + "'s";
  } else if (n.slurmd_pid) {
    p->job_state = "ended";
    p->job_evidence = "no slurmstepd for job " + p->job_id + " on this node; slurmd pid " +
                      std::to_string(*n.slurmd_pid) + " runs";
  } else if (n.stepd_count > 0) {
    p->job_state = "ended";
    p->job_evidence = "no slurmstepd for job " + p->job_id + " on this node; " +
                      std::to_string(n.stepd_count) + " slurmstepd of other jobs run";
  } else {
    p->job_evidence = "no slurmd or slurmstepd visible in this PID namespace";
  }
}

void decide_pod(const RootFs& fs, const WorkloadInfo& w, const std::string& pods_error,
                GpuProcess* p) {
  const std::string dir = "/var/lib/kubelet/pods/" + p->job_id;
  if (fs.exists(dir)) {
    p->job_state = "running";
    p->job_evidence = dir + " exists";
  } else if (w.kubelet_pods_known) {
    p->job_state = "ended";
    p->job_evidence = "no " + dir + ": the kubelet keeps no such pod on this node";
  } else {
    p->job_state = "unknown";
    p->job_evidence = pods_error + " (the kubelet's pod directories are not visible here)";
  }
}

void decide_job_state(const RootFs& fs, const NodeScan& n, const WorkloadInfo& w,
                      const std::string& pods_error, GpuProcess* p) {
  if (p->job_kind == "slurm") {
    decide_slurm(n, p);
  } else if (p->job_kind == "kubernetes") {
    decide_pod(fs, w, pods_error, p);
  } else if (p->job_kind == "container") {
    p->job_state = "unknown";
    p->job_evidence = "container " + p->job_id.substr(0, 12) +
                      ": no container engine is asked whether it still runs";
  }
}

struct ReadContext {
  const RootFs& fs;
  std::optional<double> uptime_s;
  long hz;
  const std::map<uint32_t, std::string>& users;
};

void read_stat(const ReadContext& c, const std::string& dir, GpuProcess* p) {
  const std::string path = dir + "/stat";
  auto r = c.fs.read(path, 4096);
  if (!r) {
    p->errors.push_back(file_error("stat", path, r.error()));
    return;
  }
  auto st = parse_proc_stat(*r);
  if (!st) {
    p->errors.push_back("stat: unrecognised '" + printable(trim(*r), 80) + "'");
    return;
  }
  p->state = printable(st->state, 4);
  if (!c.uptime_s) return;
  double started_s = static_cast<double>(st->starttime_ticks) / static_cast<double>(c.hz);
  // Both count from the same boot; a second of rounding is no error.
  if (started_s > *c.uptime_s + 1) {
    p->errors.push_back("stat: starttime " + std::to_string(st->starttime_ticks) +
                        " ticks is after /proc/uptime");
    return;
  }
  p->age_s = std::max(0.0, *c.uptime_s - started_s);
}

void read_cgroup_and_job(const ReadContext& c, const std::string& dir, GpuProcess* p) {
  const std::string path = dir + "/cgroup";
  auto r = c.fs.read(path, 64 * 1024);
  if (!r) {
    p->errors.push_back(file_error("cgroup", path, r.error()));
  } else if (auto cg = select_cgroup_path(*r)) {
    p->cgroup = printable(*cg, 512);
    JobRef job = job_from_cgroup(*cg);
    if (!job.kind.empty()) {
      p->job_kind = job.kind;
      p->job_id = job.id;
      p->job_source = "cgroup";
    }
  } else if (!trim(*r).empty()) {
    p->errors.push_back("cgroup: unrecognised '" + printable(trim(*r), 80) + "'");
  }
  if (p->job_kind == "slurm" || p->job_kind == "kubernetes") return;
  // A Slurm job without a job cgroup (proctrack/linuxproc), or one that
  // started a container: its processes carry the job id in their
  // environment.
  const std::string env_path = dir + "/environ";
  auto env = c.fs.read(env_path, 1 << 20);
  if (!env) {
    p->errors.push_back(file_error("environ", env_path, env.error()));
    return;
  }
  std::string id = slurm_job_from_environ(*env);
  if (id.empty()) return;
  p->job_kind = "slurm";
  p->job_id = id;
  p->job_source = "environ";
}

GpuProcess read_process(const ReadContext& c, uint32_t pid) {
  GpuProcess p;
  p.pid = pid;
  const std::string dir = "/proc/" + std::to_string(pid);
  p.visible = c.fs.is_dir(dir);
  if (!p.visible) return p;
  const std::string comm_path = dir + "/comm";
  if (auto r = c.fs.read_line(comm_path, 64)) {
    p.comm = printable(*r, 64);
  } else {
    p.errors.push_back(file_error("comm", comm_path, r.error()));
  }
  const std::string status_path = dir + "/status";
  if (auto r = c.fs.read(status_path, 64 * 1024)) {
    p.uid = parse_status_real_uid(*r);
    if (!p.uid) p.errors.push_back("status: no Uid line");
  } else {
    p.errors.push_back(file_error("status", status_path, r.error()));
  }
  if (p.uid) {
    auto u = c.users.find(*p.uid);
    if (u != c.users.end()) p.user = u->second;
  }
  read_stat(c, dir, &p);
  read_cgroup_and_job(c, dir, &p);
  return p;
}

// Every pid on any GPU, once, with one use per GPU and kind. *why: why
// NVML gave no list at all ("" when at least one GPU gave one).
std::map<uint32_t, std::vector<GpuProcessUse>> gpu_uses(const NvmlInfo& nvml, ProbeNotes* notes,
                                                        std::string* why) {
  std::map<uint32_t, std::vector<GpuProcessUse>> uses;
  bool any_list = false;
  std::vector<std::string> missing;  // noted only beside a list that was read
  for (const auto& g : nvml.gpus) {
    const std::pair<const NvmlValue<std::vector<NvmlProcess>>*, const char*> lists[] = {
        {&g.processes, "compute"}, {&g.graphics_processes, "graphics"}};
    for (const auto& [list, kind] : lists) {
      if (!list->ok()) {
        missing.push_back("GPU " + std::to_string(g.index) + ": no " + kind +
                          " process list from NVML (rc " + std::to_string(list->rc) + ")");
        continue;
      }
      any_list = true;
      for (const auto& proc : list->value) {
        uses[proc.pid].push_back(GpuProcessUse{g.pci_bus_id.value, kind, proc.used_memory_bytes});
      }
    }
  }
  why->clear();
  if (any_list) {
    for (const auto& m : missing) notes->note(m);
    return uses;
  }
  if (!nvml.attempted) {
    *why = "NVML was not probed";
  } else if (!nvml.child_error.empty()) {
    *why = "the NVML probe did not finish (" + nvml.child_error + ")";
  } else if (!nvml.dlopen_error.empty()) {
    *why = "NVML could not be loaded (" + nvml.dlopen_error + ")";
  } else if (nvml.init_rc != 0) {
    *why = "NVML did not start (" + nvml.init_symbol + " rc " + std::to_string(nvml.init_rc) + ")";
  } else if (nvml.gpus.empty()) {
    *why = "NVML lists no GPU";
  } else {
    *why = "NVML gave no process list for any GPU";
  }
  return uses;
}

// /proc/uptime: "11047.71 3945.63" (seconds since boot, idle seconds).
std::optional<double> parse_uptime(std::string_view text) {
  auto f = split_ws(trim(text));
  if (f.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(f[0].data(), f[0].data() + f[0].size(), v);
  if (ec != std::errc() || end != f[0].data() + f[0].size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

// /proc/PID/stat; comm (field 2) may hold spaces and parentheses, so the
// fields are counted after the LAST ')':
//   17129 (cat) R 17127 17127 11375 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 1104767 3133440 ...
//   812 (my (odd) job) S 1 812 812 0 -1 4194560 ... 0 1234567 ...
// State is field 3, starttime (clock ticks since boot) field 22.
std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  auto f = split_ws(trim(text.substr(close + 1)));
  if (f.size() < 20) return std::nullopt;
  auto start = parse_u64(f[19]);
  if (f[0].size() != 1 || !start) return std::nullopt;
  return ProcStat{std::string(f[0]), *start};
}

// /proc/PID/status (real, effective, saved, filesystem uids):
//   Uid:	1000	1000	1000	1000
std::optional<uint32_t> parse_status_real_uid(std::string_view text) {
  for (auto line : split_lines(text)) {
    if (!line.starts_with("Uid:")) continue;
    auto f = split_ws(line.substr(4));
    if (f.empty()) return std::nullopt;
    auto v = parse_u64(f[0]);
    if (!v || *v > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(*v);
  }
  return std::nullopt;
}

// /proc/PID/cgroup, "hierarchy:controllers:path" a line. cgroup v2 has one:
//   0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0
// v1 (and hybrid, whose "0::" line is systemd's) one per hierarchy:
//   12:devices:/slurm/uid_1000/job_4711/step_0/task_0
//   11:memory:/kubepods/burstable/pod1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d/3f4e...
//   1:name=systemd:/user.slice/user-1000.slice/session-3.scope
//   0::/
// The first path (the "0::" line first) that names a Slurm job, a pod or a
// container wins; else the v2 path where it is all there is or not "/";
// else name=systemd's; else the first line's.
std::optional<std::string> select_cgroup_path(std::string_view text) {
  struct Line {
    std::string_view controllers, path;
    bool v2;
  };
  std::vector<Line> lines;
  for (auto raw : split_lines(text)) {
    auto line = trim(raw);
    size_t a = line.find(':');
    size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view hier = line.substr(0, a);
    std::string_view ctl = line.substr(a + 1, b - a - 1);
    lines.push_back({ctl, line.substr(b + 1), hier == "0" && ctl.empty()});
  }
  if (lines.empty()) return std::nullopt;
  std::stable_partition(lines.begin(), lines.end(), [](const Line& l) { return l.v2; });
  for (const auto& l : lines) {
    if (!job_from_cgroup(l.path).kind.empty()) return std::string(l.path);
  }
  if (lines[0].v2 && (lines.size() == 1 || lines[0].path != "/")) return std::string(lines[0].path);
  for (const auto& l : lines) {
    if (l.controllers == "name=systemd") return std::string(l.path);
  }
  return std::string(lines[lines[0].v2 && lines.size() > 1 ? 1 : 0].path);
}

// A cgroup path, component by component:
//   Slurm (cgroup/v1, cgroup/v2):
//     /slurm/uid_1000/job_4711/step_0/task_0
//     /system.slice/slurmstepd.scope/job_4711/step_batch/user/task_0
//   Kubernetes (systemd driver, '_' for '-' in the pod uid; cgroupfs driver):
//     /kubepods.slice/kubepods-burstable.slice/
//         kubepods-burstable-pod1b2c3d4e_5f60_4a7b_8c9d_0e1f2a3b4c5d.slice/
//         cri-containerd-<64 hex>.scope                      (one path, broken here)
//     /kubepods/burstable/pod1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d/<64 hex>
//     /kubepods/pod1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d/<64 hex>
//   containers outside a pod:
//     /system.slice/docker-<64 hex>.scope
//     /docker/<64 hex>
//     /machine.slice/libpod-<64 hex>.scope
//     /system.slice/crio-<64 hex>.scope
//     /system.slice/cri-containerd-<64 hex>.scope
// A Slurm job wins over a pod, a pod over a container; of containers the
// innermost (docker in docker) is the one.
JobRef job_from_cgroup(std::string_view path) {
  auto parts = split(path, '/');
  for (auto c : parts) {
    if (c.starts_with("job_") && all_digits(c.substr(4), 20))
      return {"slurm", std::string(c.substr(4))};
  }
  bool kubepods = false;
  for (auto c : parts) {
    // The pod's own component may be the first to say kubepods
    // ("kubepods-pod<uid>.slice", guaranteed QoS).
    if (c.find("kubepods") != std::string_view::npos) kubepods = true;
    if (!kubepods) continue;
    if (std::string uid = pod_of_component(c); !uid.empty()) return {"kubernetes", uid};
  }
  if (kubepods) return {};  // a QoS slice itself: no pod
  std::string id;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (std::string c = container_of_component(parts[i]); !c.empty()) {
      id = c;
    } else if (parts[i] == "docker" && i + 1 < parts.size() && container_id(parts[i + 1])) {
      id = std::string(parts[i + 1]);
    }
  }
  if (!id.empty()) return {"container", id};
  return {};
}

// /proc/PID/environ, NUL-separated:
//   SLURM_JOB_ID=4711\0SLURM_JOB_USER=alice\0CUDA_VISIBLE_DEVICES=0\0
std::string slurm_job_from_environ(std::string_view environ) {
  constexpr std::string_view kKey = "SLURM_JOB_ID=";
  for (auto e : split(environ, '\0')) {
    if (!e.starts_with(kKey)) continue;
    auto v = e.substr(kKey.size());
    return all_digits(v, 20) ? std::string(v) : "";
  }
  return "";
}

// A slurmstepd rewrites its argv[0] (Slurm's setproctitle), so its
// /proc/PID/cmdline reads, up to the first NUL:
//   slurmstepd: [4711.batch]
//   slurmstepd: [4711.0]
//   slurmstepd: [4711.extern]
//   slurmstepd: [4711.interactive]
// One just started may still read "/usr/sbin/slurmstepd": no job.
std::optional<SlurmStep> parse_slurmstepd_cmdline(std::string_view cmdline) {
  std::string_view t = trim(cmdline.substr(0, cmdline.find('\0')));
  if (!t.starts_with("slurmstepd:")) return std::nullopt;
  size_t open = t.find('[');
  size_t close = open == std::string_view::npos ? open : t.find(']', open);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inner = t.substr(open + 1, close - open - 1);
  size_t dot = inner.find('.');
  std::string_view job = inner.substr(0, dot);
  if (!all_digits(job, 20)) return std::nullopt;
  std::string step = dot == std::string_view::npos ? "" : printable(inner.substr(dot + 1), 32);
  return SlurmStep{std::string(job), step};
}

// /etc/passwd, "name:password:uid:gid:gecos:home:shell" a line:
//   root:x:0:0:root:/root:/bin/bash
//   alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash
// NIS lines ("+alice::::::") and comments name no uid here.
std::map<uint32_t, std::string> parse_passwd(std::string_view text) {
  std::map<uint32_t, std::string> users;
  for (auto line : split_lines(text)) {
    auto f = split(line, ':');
    if (f.size() < 3 || f[0].empty() || f[0][0] == '+' || f[0][0] == '-' || f[0][0] == '#') {
      continue;
    }
    auto uid = parse_u64(f[2]);
    if (!uid || *uid > UINT32_MAX) continue;
    users.emplace(static_cast<uint32_t>(*uid), printable(f[0], 64));
  }
  return users;
}

ProbeRecord probe_workload(const ProbeOptions& opt, Snapshot* s) {
  auto started = std::chrono::steady_clock::now();
  RootFs fs(opt.root);
  ProbeNotes notes;
  WorkloadInfo& w = s->workload;
  w = WorkloadInfo{};
  w.attempted = true;

  std::string why_no_list;
  auto uses = gpu_uses(s->nvml, &notes, &why_no_list);
  if (!why_no_list.empty()) notes.unavailable(why_no_list);

  std::string proc_error = list_error(fs, "/proc");
  NodeScan node;
  if (proc_error.empty()) {
    node = scan_node(fs, &notes, &w);
  } else {
    w.error = proc_error;
    notes.unavailable(proc_error);
  }
  std::string pods_error = list_error(fs, "/var/lib/kubelet/pods");
  w.kubelet_pods_known = pods_error.empty();

  if (!uses.empty()) {
    std::map<uint32_t, std::string> users;
    if (auto r = fs.read("/etc/passwd", 16 << 20)) {
      users = parse_passwd(*r);
    } else {
      notes.note(r.error() + ": user names unknown");
    }
    std::optional<double> uptime;
    if (auto r = fs.read("/proc/uptime", 256)) uptime = parse_uptime(*r);
    if (!uptime && proc_error.empty()) notes.note("no /proc/uptime: process ages unknown");
    // This kernel's tick rate stands for a recorded tree's too: USER_HZ is
    // 100 on every architecture Linux runs GPUs on.
    long hz = ::sysconf(_SC_CLK_TCK);
    ReadContext ctx{fs, uptime, hz > 0 ? hz : 100, users};
    if (uses.size() > kWorkloadMaxProcesses) {
      notes.gap("workload.processes",
                "NVML lists " + std::to_string(uses.size()) + " processes; the " +
                    std::to_string(kWorkloadMaxProcesses) + " lowest pids were read");
    }
    for (auto& [pid, gpus] : uses) {
      if (w.processes.size() >= kWorkloadMaxProcesses) break;
      GpuProcess p = read_process(ctx, pid);
      p.gpus = std::move(gpus);
      decide_job_state(fs, node, w, pods_error, &p);
      w.processes.push_back(std::move(p));
    }
  }

  ProbeRecord rec = notes.record("workload");
  rec.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return rec;
}

}  // namespace gd
