// The driver probe: is the NVIDIA kernel driver loaded, which version, with
// which parameters, and which NVIDIA-related (and conflicting) modules are in
// the kernel. Sources: /proc/driver/nvidia/{version,params}, /proc/modules,
// /proc/devices, /sys/module/nvidia_uvm/parameters/uvm_disable_hmm.
#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/ascii.h"
#include "util/text.h"

namespace gd {

namespace {

bool is_version_token(std::string_view t) {
  if (t.empty() || t.front() < '0' || t.front() > '9' || t.back() == '.') return false;
  bool dot = false;
  for (char c : t) {
    if (c == '.') {
      dot = true;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dot;
}

// The NVIDIA modules, nouveau, and the InfiniBand modules an NVLink5
// baseboard's fabric needs (mlx5_ib makes its management ports InfiniBand
// devices, ib_umad gives the subnet manager their umad nodes).
bool keep_module(std::string_view name) {
  return name.substr(0, 6) == "nvidia" || name == "nouveau" || name == "nv_peer_mem" ||
         name == "mlx5_core" || name == "mlx5_ib" || name == "ib_umad";
}

}  // namespace

// /proc/driver/nvidia/version:
//   NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024
//   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build
//   (dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 19:33:09 UTC 2024
//   GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)
// The version is the first dotted number after the prefix.
std::optional<NvidiaVersion> parse_nvidia_version(std::string_view text) {
  constexpr std::string_view kPrefix = "NVRM version:";
  for (auto line : split_lines(text)) {
    line = trim(line);
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    NvidiaVersion v;
    v.line = printable(line, 512);
    v.open_module = line.find("Open Kernel Module") != std::string_view::npos;
    for (auto tok : split_ws(line.substr(kPrefix.size()))) {
      if (is_version_token(tok)) {
        v.version = std::string(tok);
        break;
      }
    }
    if (v.version.empty()) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

// /proc/modules, one module a line, as kernel/module/procfs.c m_show() and
// print_unload_info() print it (Linux 2.6 to 6.x):
//   name size refcount users state address [taint]
// With CONFIG_MODULE_UNLOAD, refcount is a number and users the modules
// using this one, each followed by a comma, "[permanent]," for a module with
// init but no exit (it can never be unloaded), "[unsafe]," on old kernels,
// or "-" for none:
//   nvidia_uvm 1896448 0 - Live 0x0000000000000000 (PO)
//   nvidia 56664064 20 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (PO)
//   nvidia 8650752 186 nvidia_peermem,[permanent], Live 0xffffffffc1200000 (OE)
// Without it (the H200 VM's kernel 6.18), both columns are "-":
//   nvidia_uvm 1875968 - - Live 0xffffffffc080c000 (O)
// state is Live, Loading or Unloading; the address is 0x0 without
// CAP_SYSLOG (kptr_restrict); the taint column is absent for an untainted
// module, and older or patched kernels may omit the address as well:
//   nouveau 2293760 1 - Live 0xffffffffc0a00000
//   ext4 1069056 2 - Live
// Columns are separated by one space, but any run of blanks is accepted.
namespace {

bool module_name_ok(std::string_view n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// "-", or module names each followed by a comma ("a,b,", "[permanent],").
bool module_users_ok(std::string_view u) { return u == "-" || (!u.empty() && u.back() == ','); }

bool module_state_ok(std::string_view s) {
  return s == "Live" || s == "Loading" || s == "Unloading";
}

// One /proc/modules line; nullopt when it is not in any form above.
std::optional<ModuleInfo> parse_module_line(const std::vector<std::string_view>& f) {
  if (f.size() < 5 || f.size() > 7) return std::nullopt;
  if (!module_name_ok(f[0]) || !parse_u64(f[1])) return std::nullopt;
  int refcount = ModuleInfo::kRefcountUnknown;
  if (f[2] != "-") {
    auto n = parse_i64(f[2]);
    if (!n || *n < 0 || *n > 1000000) return std::nullopt;
    refcount = static_cast<int>(*n);
  }
  if (!module_users_ok(f[3]) || !module_state_ok(f[4])) return std::nullopt;
  ModuleInfo m;
  m.name = std::string(f[0]);
  m.refcount = refcount;
  m.state = std::string(f[4]);
  m.source = ModuleInfo::kFromProcModules;
  size_t next = 5;
  if (next < f.size() && f[next].substr(0, 2) == "0x") {
    if (!parse_hex(f[next])) return std::nullopt;
    ++next;
  }
  if (next < f.size()) {
    std::string_view t = f[next];
    if (t.size() < 3 || t.front() != '(' || t.back() != ')') return std::nullopt;
    m.taint = printable(t.substr(1, t.size() - 2), 16);
    ++next;
  }
  if (next != f.size()) return std::nullopt;
  return m;
}

}  // namespace

std::vector<ModuleInfo> parse_proc_modules(std::string_view text, int* malformed) {
  std::vector<ModuleInfo> out;
  *malformed = 0;
  for (auto line : split_lines(text)) {
    if (trim(line).empty()) continue;
    auto f = split_ws(line);
    auto m = parse_module_line(f);
    if (!m) {
      ++*malformed;
      // Counted, and never read as "absent": a line in a form we do not know
      // that names a module we watch still says the module is in the kernel.
      if (!f.empty() && module_name_ok(f[0]) && keep_module(f[0])) {
        ModuleInfo seen;
        seen.name = std::string(f[0]);
        seen.refcount = ModuleInfo::kRefcountUnknown;
        seen.source = ModuleInfo::kFromProcModules;
        out.push_back(std::move(seen));
      }
      continue;
    }
    if (keep_module(m->name)) out.push_back(std::move(*m));
  }
  return out;
}

// /sys/module/<name>/ exists for every module in the kernel: a loadable one
// has initstate ("live", "coming", "going") and refcnt files; a built-in one
// has neither (its directory holds only parameters/ and maybe version):
//   /sys/module/nvidia_uvm/initstate   live
//   /sys/module/nvidia_uvm/refcnt      0
//   /sys/module/nvidia_uvm/taint       O
// Read for the NVIDIA modules that /proc/modules did not show: built into
// the kernel, or /proc/modules unreadable (some container runtimes).
namespace {

std::optional<ModuleInfo> sys_module(const RootFs& fs, const std::string& name) {
  const std::string dir = "/sys/module/" + name;
  if (!fs.is_dir(dir)) return std::nullopt;
  ModuleInfo m;
  m.name = name;
  m.source = ModuleInfo::kFromSysModule;
  m.refcount = ModuleInfo::kRefcountUnknown;
  auto init = fs.read_line(dir + "/initstate", 64);
  if (!init) {
    m.builtin = !fs.exists(dir + "/initstate");
  } else if (*init == "live") {
    m.state = "Live";
  } else if (*init == "coming") {
    m.state = "Loading";
  } else if (*init == "going") {
    m.state = "Unloading";
  } else {
    m.state = printable(*init, 16);
  }
  if (auto r = fs.read_line(dir + "/refcnt", 64)) {
    if (auto n = parse_u64(*r); n && *n <= 1000000) m.refcount = static_cast<int>(*n);
  }
  if (auto t = fs.read_line(dir + "/taint", 64)) m.taint = printable(*t, 16);
  return m;
}

}  // namespace

// /proc/driver/nvidia/params, "Name: value", numbers then quoted strings:
//   ResmanDebugLevel: 4294967295
//   ModifyDeviceFiles: 1
//   DeviceFileMode: 438
//   RegistryDwords: ""
//   ExcludedGpus: ""
// Quotes around string values are removed.
std::map<std::string, std::string> parse_nvidia_params(std::string_view text, int* malformed) {
  std::map<std::string, std::string> out;
  *malformed = 0;
  for (auto line : split_lines(text)) {
    if (trim(line).empty()) continue;
    size_t colon = line.find(':');
    std::string_view name = colon == std::string_view::npos ? "" : trim(line.substr(0, colon));
    bool name_ok = !name.empty() && name.size() <= 64;
    for (char c : name) {
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      name_ok = name_ok && (alnum || c == '_');
    }
    if (!name_ok) {
      ++*malformed;
      continue;
    }
    std::string_view value = trim(line.substr(colon + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    out[std::string(name)] = printable(value, 1024);
  }
  return out;
}

// /proc/devices, the "Character devices:" section:
//   Character devices:
//     1 mem
//   195 nvidia
//   195 nvidiactl
//   510 nvidia-uvm
//   Block devices:
// Only nvidia* names are kept.
std::map<std::string, int> parse_proc_devices_char(std::string_view text) {
  std::map<std::string, int> out;
  bool in_char = false;
  for (auto line : split_lines(text)) {
    std::string_view t = trim(line);
    if (t == "Character devices:") {
      in_char = true;
      continue;
    }
    if (t == "Block devices:") in_char = false;
    if (!in_char) continue;
    auto f = split_ws(t);
    if (f.size() != 2 || f[1].substr(0, 6) != "nvidia") continue;
    auto major = parse_u64(f[0]);
    if (major && *major < 4096) out[printable(f[1], 64)] = static_cast<int>(*major);
  }
  return out;
}

namespace {

void read_version(const RootFs& fs, DriverInfo* d, ProbeNotes* notes) {
  auto r = fs.read("/proc/driver/nvidia/version", 16 * 1024);
  if (!r) {
    notes->gap("driver.version", r.error());
    return;
  }
  auto v = parse_nvidia_version(*r);
  if (!v) {
    auto lines = split_lines(*r);
    d->version_line = printable(lines.empty() ? "" : trim(lines[0]), 512);
    notes->garbled("unrecognised /proc/driver/nvidia/version: '" + printable(*r, 80) + "'");
    return;
  }
  d->version = v->version;
  d->version_line = v->line;
  d->open_kernel_module = v->open_module;
}

void read_params(const RootFs& fs, DriverInfo* d, ProbeNotes* notes) {
  auto r = fs.read("/proc/driver/nvidia/params", 64 * 1024);
  if (!r) {
    notes->gap("driver.params", r.error());
    return;
  }
  int malformed = 0;
  d->params = parse_nvidia_params(*r, &malformed);
  if (malformed > 0) {
    notes->garbled(std::to_string(malformed) + " unrecognised lines in /proc/driver/nvidia/params");
  }
}

void read_modules(const RootFs& fs, DriverInfo* d, ProbeNotes* notes) {
  if (auto r = fs.read("/proc/modules", 1 << 20)) {
    int malformed = 0;
    d->modules = parse_proc_modules(*r, &malformed);
    notes->unrecognised(malformed, "/proc/modules");
  } else {
    // A gap, not "no modules": /sys/module below still shows what is loaded.
    notes->gap("driver.modules", r.error());
  }
  // The modules /proc/modules did not list may still be in the kernel.
  for (const char* name : {"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem",
                           "nouveau", "mlx5_core", "mlx5_ib", "ib_umad"}) {
    bool listed = false;
    for (const auto& m : d->modules) listed = listed || m.name == name;
    if (listed) continue;
    if (auto m = sys_module(fs, name)) d->modules.push_back(std::move(*m));
  }
}

void read_uvm_hmm(const RootFs& fs, DriverInfo* d, ProbeNotes* notes) {
  // Absent on drivers before HMM support and whenever nvidia_uvm is not loaded.
  auto r = fs.read_line("/sys/module/nvidia_uvm/parameters/uvm_disable_hmm", 64);
  if (!r) return;
  if (*r == "Y" || *r == "N") {
    d->uvm_disable_hmm = *r;
  } else {
    notes->garbled("unrecognised uvm_disable_hmm '" + printable(*r, 16) + "'");
  }
}

// modules.dep ("updates/dkms/nvidia.ko.zst: kernel/...") lists nvidia.ko,
// compressed or not, under any folder.
bool lists_nvidia(std::string_view modules_dep) {
  for (auto line : split_lines(modules_dep)) {
    std::string_view path = line.substr(0, line.find(':'));
    std::string_view base = path.substr(path.rfind('/') + 1);
    if (base == "nvidia.ko" || base.starts_with("nvidia.ko.")) return true;
  }
  return false;
}

// Why the driver is not loaded may be that no module exists for this
// kernel: DKMS failed, or a kernel update came without the driver's build.
void read_module_builds(const RootFs& fs, DriverInfo* d, ProbeNotes* notes) {
  constexpr size_t kDepBytes = 16 << 20;
  constexpr size_t kMaxKernels = 32;
  if (!fs.exists("/proc/sys/kernel/osrelease")) return;  // a recorded tree without it
  auto rel = fs.read_line("/proc/sys/kernel/osrelease", 256);
  if (!rel) {
    notes->gap("driver.kernel_release", rel.error());
    return;
  }
  d->kernel_release = printable(trim(*rel), 128);
  if (auto dep = fs.read("/lib/modules/" + d->kernel_release + "/modules.dep", kDepBytes)) {
    d->nvidia_module_built = lists_nvidia(*dep) ? 1 : 0;
  }
  if (d->nvidia_module_built != 0) return;
  for (const auto& other : fs.list("/lib/modules", kMaxKernels)) {
    if (other == d->kernel_release || other.find('/') != std::string::npos) continue;
    auto dep = fs.read("/lib/modules/" + other + "/modules.dep", kDepBytes);
    if (dep && lists_nvidia(*dep)) d->kernels_with_nvidia.push_back(printable(other, 128));
  }
}

// WSL: the kernel is Microsoft's ("5.15.153.1-microsoft-standard-WSL2";
// WSL 1 reports "4.4.0-19041-Microsoft"), and the Windows driver's files
// appear in /usr/lib/wsl/lib (facts §13).
void read_wsl(const RootFs& fs, DriverInfo* d) {
  constexpr size_t kMaxEntries = 256;
  constexpr size_t kConfBytes = 64 * 1024;
  WslInfo& w = d->wsl;
  std::string release = ascii_lower(d->kernel_release);
  w.dxg = fs.exists("/dev/dxg");
  w.detected = w.dxg || release.find("microsoft") != std::string::npos;
  if (!w.detected) return;
  w.wsl1 = d->kernel_release.ends_with("-Microsoft");
  for (const auto& name : fs.list("/usr/lib/wsl/lib", kMaxEntries)) {
    w.libs.push_back(printable(name, 128));
  }
  if (!fs.is_dir("/etc/ld.so.conf.d")) return;
  w.lib_dir_configured = 0;
  for (const auto& name : fs.list("/etc/ld.so.conf.d", kMaxEntries)) {
    if (!name.ends_with(".conf")) continue;
    auto conf = fs.read("/etc/ld.so.conf.d/" + name, kConfBytes);
    if (!conf) continue;
    for (auto line : split_lines(*conf)) {
      std::string_view dir = trim(line);
      while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
      if (dir == "/usr/lib/wsl/lib") w.lib_dir_configured = 1;
    }
  }
}

}  // namespace

ProbeRecord probe_driver_at(const RootFs& fs, Snapshot* s) {
  DriverInfo& d = s->driver;
  ProbeNotes notes;
  read_modules(fs, &d, &notes);
  d.proc_driver_nvidia = fs.is_dir("/proc/driver/nvidia");
  if (d.proc_driver_nvidia) {
    read_version(fs, &d, &notes);
    read_params(fs, &d, &notes);
  } else {
    notes.unavailable("no /proc/driver/nvidia");
    read_module_builds(fs, &d, &notes);
    read_wsl(fs, &d);
  }
  read_uvm_hmm(fs, &d, &notes);
  if (auto r = fs.read("/proc/devices", 64 * 1024)) {
    d.char_majors = parse_proc_devices_char(*r);
  } else {
    notes.gap("driver.char_majors", r.error());
  }
  return notes.record("driver");
}

ProbeRecord probe_driver(const ProbeOptions& opt, Snapshot* s) {
  return probe_driver_at(RootFs(opt.root), s);
}

}  // namespace gd
