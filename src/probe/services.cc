// The services probe: are the NVIDIA daemons running (fabric manager,
// persistence daemon, MPS), and which NVIDIA-related processes exist. It
// scans /proc/[0-9]*/comm under the root (bounded: kMaxPids) and, only for
// the ambiguous truncated name "nvidia-cuda-mps", argv[0] of cmdline.
// The fabric manager's package version comes from dpkg's status file, read
// only on machines that show a fabric manager or NVSwitch nodes.
#include <algorithm>
#include <array>

#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/text.h"

namespace gd {

namespace {

// The fabric manager stays first (its package version is recorded there).
// NVLSM, the NVLink subnet manager of NVLink5 baseboards, is started by
// the fabric manager's unit; nvidia-imex serves multi-node NVLink.
constexpr std::array<const char*, 6> kServices = {"nv-fabricmanager",
                                                  "nvidia-persistenced",
                                                  "nvidia-cuda-mps-control",
                                                  "nvidia-cuda-mps-server",
                                                  "nvlsm",
                                                  "nvidia-imex"};
// The kernel keeps 15 bytes of a process name in comm (TASK_COMM_LEN 16), so
// "nvidia-persistenced" shows as "nvidia-persiste".
constexpr size_t kCommLen = 15;
constexpr size_t kMaxProcesses = 1000;

bool nvidia_related(std::string_view comm) {
  for (std::string_view p : {"nvidia", "nv-", "nv_", "dcgm", "nv-hostengine", "nvsm", "nvlsm"}) {
    if (comm.substr(0, p.size()) == p) return true;
  }
  return false;
}

// The container engines whose GPU containers the toolkit's settings govern
// (checks/container_toolkit.cc): rootful ones, and rootlesskit beside a
// rootless dockerd.
bool container_engine(std::string_view comm) {
  for (std::string_view e : {"dockerd", "containerd", "crio", "rootlesskit"}) {
    if (comm == e) return true;
  }
  return false;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// argv[0]'s file name, e.g. "nvidia-cuda-mps-server" from
// "/usr/bin/nvidia-cuda-mps-server\0-d\0".
std::string argv0_basename(const RootFs& fs, const std::string& pid) {
  auto r = fs.read("/proc/" + pid + "/cmdline", 4096);
  if (!r) return "";
  std::string_view a(r->c_str());  // up to the first NUL
  size_t slash = a.rfind('/');
  return std::string(slash == std::string_view::npos ? a : a.substr(slash + 1));
}

// The known service this process is, or -1.
int service_index(const RootFs& fs, const std::string& pid, std::string_view comm) {
  std::vector<int> candidates;
  for (size_t i = 0; i < kServices.size(); ++i) {
    if (std::string_view(kServices[i]).substr(0, kCommLen) == comm) {
      candidates.push_back(static_cast<int>(i));
    }
  }
  if (candidates.size() <= 1) return candidates.empty() ? -1 : candidates[0];
  // MPS control and server share "nvidia-cuda-mps"; argv[0] tells them
  // apart, and a process we cannot tell is taken as the control daemon.
  std::string argv0 = argv0_basename(fs, pid);
  for (int i : candidates) {
    if (argv0 == kServices[static_cast<size_t>(i)]) return i;
  }
  return candidates[0];
}

bool fabric_manager_expected(const RootFs& fs, const std::vector<ServiceInfo>& services) {
  return services[0].running || fs.exists("/dev/nvidia-nvswitchctl") ||
         fs.exists("/usr/bin/nv-fabricmanager");
}

}  // namespace

// /var/lib/dpkg/status, one stanza per package:
//   Package: nvidia-fabricmanager-550
//   Status: install ok installed
//   ...
//   Version: 550.54.15-1
// -> "550.54.15" (the Debian revision after the last '-' dropped).
std::optional<std::string> fabricmanager_version_from_dpkg(std::string_view status_text) {
  bool in_fm = false;
  bool installed = false;
  std::string version;
  auto finish = [&]() -> std::optional<std::string> {
    if (in_fm && installed && !version.empty()) return version;
    return std::nullopt;
  };
  for (auto line : split_lines(status_text)) {
    if (trim(line).empty()) {
      if (auto v = finish()) return v;
      in_fm = installed = false;
      version.clear();
      continue;
    }
    if (line.substr(0, 9) == "Package: ") {
      in_fm = trim(line.substr(9)).substr(0, 20) == "nvidia-fabricmanager";
    } else if (line.substr(0, 8) == "Status: ") {
      installed = trim(line.substr(8)) == "install ok installed";
    } else if (line.substr(0, 9) == "Version: ") {
      std::string_view v = trim(line.substr(9));
      size_t colon = v.find(':');  // epoch "1:550.54.15-1"
      if (colon != std::string_view::npos) v = v.substr(colon + 1);
      size_t dash = v.rfind('-');
      if (dash != std::string_view::npos) v = v.substr(0, dash);
      version = printable(v, 64);
    }
  }
  return finish();
}

ProbeRecord probe_services_at(const RootFs& fs, Snapshot* s) {
  ProbeNotes notes;
  s->services.clear();
  s->processes.clear();
  for (const char* name : kServices) s->services.push_back(ServiceInfo{name, false, {}, ""});
  if (!fs.is_dir("/proc")) {
    notes.unavailable("no /proc");
    return notes.record("services");
  }
  std::vector<std::string> entries = fs.list("/proc", kMaxPids + 1000);
  size_t pids = 0;
  for (const auto& e : entries) {
    if (!all_digits(e)) continue;
    if (++pids > kMaxPids) {
      notes.note("stopped after " + std::to_string(kMaxPids) + " processes");
      break;
    }
    auto comm = fs.read_line("/proc/" + e + "/comm", 64);
    if (!comm) continue;  // the process exited meanwhile
    int pid = static_cast<int>(*parse_u64(e));
    int idx = service_index(fs, e, *comm);
    if (idx >= 0) {
      auto& svc = s->services[static_cast<size_t>(idx)];
      svc.running = true;
      svc.pids.push_back(pid);
    }
    if ((nvidia_related(*comm) || container_engine(*comm)) && s->processes.size() < kMaxProcesses) {
      s->processes.push_back(ProcessInfo{pid, printable(*comm, 32)});
    }
  }
  for (auto& svc : s->services) std::sort(svc.pids.begin(), svc.pids.end());
  std::sort(s->processes.begin(), s->processes.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid < b.pid; });

  if (fabric_manager_expected(fs, s->services)) {
    if (auto st = fs.read("/var/lib/dpkg/status", 32 << 20)) {
      if (auto v = fabricmanager_version_from_dpkg(*st)) s->services[0].version = *v;
    }
  }
  return notes.record("services");
}

ProbeRecord probe_services(const ProbeOptions& opt, Snapshot* s) {
  return probe_services_at(RootFs(opt.root), s);
}

}  // namespace gd
