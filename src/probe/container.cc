// The container probe: are we inside a container, which runtime, what does
// its device cgroup allow, and which NVIDIA driver libraries were mounted in.
//
// Evidence, in order of strength: the `container` variable and
// KUBERNETES_SERVICE_HOST (from the env probe's allow-listed snapshot, so run
// probe_env first), /.dockerenv (docker), /run/.containerenv (podman), and
// the cgroup paths of this process and of pid 1 (/docker/, docker-*.scope,
// kubepods, cri-containerd, libpod, lxc). /proc/1/environ is never read: it holds other
// processes' secrets.
#include <array>
#include <set>

#include "probe/cdi.h"
#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/text.h"

namespace gd {

namespace {

// Where distributions and the NVIDIA Container Toolkit put libcuda.so.* and
// libnvidia-ml.so.* (the last one is WSL2's driver store).
constexpr std::array<const char*, 7> kLibDirs = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
    "/usr/local/nvidia/lib64",   "/usr/local/nvidia/lib",      "/usr/lib/wsl/lib",
    "/.singularity.d/libs"};  // where Apptainer --nv binds the host's

struct CgroupMarker {
  const char* needle;
  const char* runtime;
};
// Checked in this order: a kubernetes pod may also say docker or containerd.
// Needles carry their separators so host services ("docker.service",
// "containerd.service", "lxcfs.service") do not count.
constexpr std::array<CgroupMarker, 7> kCgroupMarkers = {{{"kubepods", "kubernetes"},
                                                         {"libpod", "podman"},
                                                         {"/docker/", "docker"},
                                                         {"docker-", "docker"},
                                                         {"cri-containerd", "containerd"},
                                                         {"/lxc/", "lxc"},
                                                         {"lxc.payload", "lxc"}}};

struct Evidence {
  std::string runtime;
  std::vector<std::string> why;
  void add(const std::string& rt, std::string reason) {
    if (runtime.empty() || (rt == "kubernetes")) runtime = rt;
    why.push_back(std::move(reason));
  }
};

void from_env(const Snapshot& s, Evidence* ev) {
  auto c = s.env.vars.find("container");
  if (c != s.env.vars.end() && !c->second.empty()) {
    std::string rt = c->second == "oci" ? "" : printable(c->second, 32);
    ev->add(rt, "container=" + printable(c->second, 32) + " in the environment");
  }
  if (s.env.vars.count("KUBERNETES_SERVICE_HOST") != 0) {
    ev->add("kubernetes", "KUBERNETES_SERVICE_HOST is set");
  }
}

void from_cgroup(const std::string& file, std::string_view text, Evidence* ev) {
  for (auto line : split_lines(text)) {
    for (const auto& m : kCgroupMarkers) {
      if (line.find(m.needle) == std::string_view::npos) continue;
      ev->add(m.runtime, file + " has '" + printable(trim(line), 160) + "'");
      return;
    }
  }
}

// v1 device cgroup of this process; the container's own hierarchy is often
// mounted at the top of /sys/fs/cgroup/devices, so fall back to that.
// devices.list:
//   c 1:5 rwm
//   c 136:* rwm
//   c 195:* rwm
void read_devices_list(const RootFs& fs, const std::string& cgroup_path, ContainerInfo* c,
                       ProbeNotes* notes) {
  const std::string base = "/sys/fs/cgroup/devices";
  const std::string top = base + "/devices.list";
  auto r = fs.read(cgroup_path == "/" ? top : base + cgroup_path + "/devices.list", 256 * 1024);
  if (!r) r = fs.read(top, 256 * 1024);
  if (!r) {
    notes->note(r.error());
    return;
  }
  c->devices_cgroup_known = true;
  for (auto line : split_lines(*r)) {
    auto t = trim(line);
    if (t.empty()) continue;
    auto f = split_ws(t);
    if (f.size() != 3 || (f[0] != "a" && f[0] != "b" && f[0] != "c")) {
      notes->garbled("unrecognised devices.list line '" + printable(t, 64) + "'");
      continue;
    }
    c->devices_allow.push_back(printable(t, 64));
  }
}

void scan_driver_libraries(const RootFs& fs, ContainerInfo* c) {
  for (const char* dir : kLibDirs) {
    for (const auto& name : fs.list(dir, 20000)) {
      if (auto v = driver_library_version(name)) {
        c->driver_libraries[std::string(dir) + "/" + printable(name, 128)] = *v;
      }
    }
  }
}

// /dev/shm's line in /proc/self/mounts, e.g. Docker's default:
//   shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0
// The size= option is in bytes, or with a k, m or g suffix (tmpfs(5)).
void read_shm_mount(const RootFs& fs, ContainerInfo* c, ProbeNotes* notes) {
  if (!fs.exists("/proc/self/mounts")) return;  // a recorded tree without it
  auto r = fs.read("/proc/self/mounts", 1024 * 1024);
  if (!r) {
    notes->note(r.error());
    return;
  }
  for (auto line : split_lines(*r)) {
    auto f = split_ws(trim(line));
    // proc /proc proc rw,nosuid,nodev,noexec,relatime,hidepid=2 0 0
    if (f.size() >= 4 && f[1] == "/proc" && f[2] == "proc") {
      for (auto opt : split(f[3], ',')) {
        if (opt.starts_with("hidepid=")) c->proc_hidepid = printable(opt.substr(8), 32);
      }
    }
    if (f.size() < 4 || f[1] != "/dev/shm") continue;
    c->shm_mount = printable(trim(line), 200);
    c->shm_bytes = -1;
    for (auto opt : split(f[3], ',')) {
      if (!opt.starts_with("size=")) continue;
      auto bytes = parse_size_suffixed(opt.substr(5));
      if (bytes) c->shm_bytes = *bytes;
    }
  }
}

// The directories container engines read CDI specs from (the CDI spec's
// defaults), and bounds on what one may hold.
constexpr const char* kCdiDirs[] = {"/etc/cdi", "/var/run/cdi"};
constexpr size_t kMaxCdiFiles = 32;
constexpr size_t kMaxCdiBytes = 4u << 20;

void read_cdi_specs(const RootFs& fs, ContainerInfo* c) {
  c->cdi_specs.clear();
  for (const char* dir : kCdiDirs) {
    for (const std::string& name : fs.list(dir, 1000)) {
      if (c->cdi_specs.size() == kMaxCdiFiles) return;
      if (!name.ends_with(".yaml") && !name.ends_with(".yml") && !name.ends_with(".json")) continue;
      CdiSpec spec;
      std::string path = std::string(dir) + "/" + name;
      auto text = fs.read(path, kMaxCdiBytes);
      if (!text.ok()) {
        spec.error = text.error();
      } else if (auto parsed = parse_cdi_spec(*text); !parsed.ok()) {
        spec.error = parsed.error();
      } else {
        spec = std::move(*parsed);
      }
      spec.path = path;
      std::set<std::string> seen;
      for (const auto* list : {&spec.device_nodes, &spec.host_paths}) {
        for (const std::string& p : *list) {
          if (p.starts_with('/') && seen.insert(p).second && !fs.exists(p))
            spec.missing.push_back(p);
        }
      }
      c->cdi_specs.push_back(std::move(spec));
    }
  }
}

// [nvidia-container-cli] no-cgroups in the toolkit's config.toml.
std::string toolkit_no_cgroups(const RootFs& fs) {
  auto text = fs.read("/etc/nvidia-container-runtime/config.toml", 256 * 1024);
  if (!text.ok()) return "";
  std::string section;
  for (std::string_view line : split(*text, '\n')) {
    line = trim(line);
    if (line.starts_with('[')) {
      section = std::string(line);
      continue;
    }
    if (section != "[nvidia-container-cli]" || !line.starts_with("no-cgroups")) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view v = trim(line.substr(eq + 1));
    v = v.substr(0, v.find('#'));
    return printable(trim(v), 16);
  }
  return "";
}

// $LD_PRELOAD (space or colon separated, as ld.so reads it), then
// /etc/ld.so.preload (whitespace separated).
void read_preloads(const RootFs& fs, const Snapshot& s, ContainerInfo* c) {
  c->preloads.clear();
  auto add = [&](std::string_view list, const char* from, std::string_view seps) {
    size_t at = 0;
    while (at < list.size() && c->preloads.size() < 64) {
      size_t end = list.find_first_of(seps, at);
      if (end == std::string_view::npos) end = list.size();
      std::string_view entry = list.substr(at, end - at);
      at = end + 1;
      if (entry.empty() || entry.starts_with('#')) continue;
      Preload p;
      p.path = printable(entry, 256);
      p.from = from;
      // A bare name is searched for by ld.so; only a path can be tested here.
      if (p.path.starts_with('/')) {
        auto st = fs.stat(p.path);
        p.loadable = st.ok() && st->st_size > 0 && fs.read(p.path, 1).ok();
      }
      c->preloads.push_back(std::move(p));
    }
  };
  if (auto it = s.env.vars.find("LD_PRELOAD"); it != s.env.vars.end()) {
    add(it->second, "LD_PRELOAD", " :");
  }
  if (auto text = fs.read("/etc/ld.so.preload", 64 * 1024); text.ok()) {
    add(*text, "/etc/ld.so.preload", " \t\r\n");
  }
}

}  // namespace

// "libcuda.so.550.54.14" -> "550.54.14", "libnvidia-ml.so.550.54.15" ->
// "550.54.15"; the sonames "libcuda.so.1" / "libcuda.so" give nullopt.
std::optional<std::string> driver_library_version(std::string_view file_name) {
  for (std::string_view prefix : {"libcuda.so.", "libnvidia-ml.so."}) {
    if (file_name.substr(0, prefix.size()) != prefix) continue;
    std::string_view v = file_name.substr(prefix.size());
    if (v.find('.') == std::string_view::npos || v.size() > 32) return std::nullopt;
    for (char ch : v) {
      if ((ch < '0' || ch > '9') && ch != '.') return std::nullopt;
    }
    return std::string(v);
  }
  return std::nullopt;
}

ProbeRecord probe_container_at(const RootFs& fs, Snapshot* s) {
  ContainerInfo& c = s->container;
  ProbeNotes notes;
  Evidence ev;
  from_env(*s, &ev);
  if (fs.exists("/.dockerenv")) ev.add("docker", "/.dockerenv exists");
  if (fs.exists("/run/.containerenv")) ev.add("podman", "/run/.containerenv exists");
  // Every Apptainer (and Singularity) image carries its runscript directory.
  if (fs.exists("/.singularity.d")) ev.add("apptainer", "/.singularity.d exists");

  auto self = fs.read("/proc/self/cgroup", 64 * 1024);
  if (self) {
    from_cgroup("/proc/self/cgroup", *self, &ev);
  } else {
    notes.unavailable(self.error());
  }
  if (auto init = fs.read("/proc/1/cgroup", 64 * 1024)) from_cgroup("/proc/1/cgroup", *init, &ev);

  c.in_container = !ev.why.empty();
  c.runtime = ev.runtime;
  c.evidence.clear();
  for (const auto& w : ev.why) c.evidence += (c.evidence.empty() ? "" : "; ") + w;

  if (self) {
    CgroupRef ref = parse_proc_cgroup(*self);
    if (!ref.devices_v1_path.empty()) read_devices_list(fs, ref.devices_v1_path, &c, &notes);
  }
  scan_driver_libraries(fs, &c);
  c.proc_hidepid.clear();
  read_shm_mount(fs, &c, &notes);
  read_cdi_specs(fs, &c);
  read_preloads(fs, *s, &c);
  c.toolkit_no_cgroups = toolkit_no_cgroups(fs);
  c.host_toolkit.clear();
  if (!c.in_container) {
    for (const char* p : {"/etc/nvidia-container-runtime/config.toml", "/usr/bin/nvidia-ctk",
                          "/usr/bin/nvidia-container-runtime"}) {
      if (fs.exists(p)) {
        c.host_toolkit = p;
        break;
      }
    }
  }
  return notes.record("container");
}

ProbeRecord probe_container(const ProbeOptions& opt, Snapshot* s) {
  return probe_container_at(RootFs(opt.root), s);
}

}  // namespace gd
