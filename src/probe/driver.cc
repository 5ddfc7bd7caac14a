// The driver probe: is the NVIDIA kernel driver loaded, which version, with
// which parameters, and which NVIDIA-related (and conflicting) modules are in
// the kernel. Sources: /proc/driver/nvidia/{version,params}, /proc/modules,
// /proc/devices, /sys/module/nvidia_uvm/parameters/uvm_disable_hmm.
#include "probe/file_probes.h"
#include "probe/probe.h"
#include "probe/text.h"

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

bool keep_module(std::string_view name) {
  return name.substr(0, 6) == "nvidia" || name == "nouveau" || name == "nv_peer_mem";
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

// /proc/modules: name size refcount users state address [taint]
//   nvidia_uvm 1896448 0 - Live 0x0000000000000000 (PO)
//   nvidia 56664064 20 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (PO)
//   nouveau 2293760 1 - Live 0xffffffffc0a00000

std::vector<ModuleInfo> parse_proc_modules(std::string_view text, int* malformed) {
  std::vector<ModuleInfo> out;
  *malformed = 0;
  for (auto line : split_lines(text)) {
    if (trim(line).empty()) continue;
    auto f = split_ws(line);
    auto refcount = f.size() >= 6 ? parse_i64(f[2]) : std::nullopt;
    if (!refcount || !parse_u64(f[1]) || *refcount < 0 || *refcount > 1000000) {
      ++*malformed;
      continue;
    }
    if (!keep_module(f[0])) continue;
    ModuleInfo m;
    m.name = printable(f[0], 64);
    m.refcount = static_cast<int>(*refcount);
    m.state = printable(f[4], 16);
    if (f.size() >= 7 && f[6].size() >= 2 && f[6].front() == '(' && f[6].back() == ')') {
      m.taint = printable(f[6].substr(1, f[6].size() - 2), 16);
    }
    out.push_back(std::move(m));
  }
  return out;
}

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
    notes->garbled(r.error());
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
    notes->note(r.error());
    return;
  }
  int malformed = 0;
  d->params = parse_nvidia_params(*r, &malformed);
  if (malformed > 0) {
    notes->garbled(std::to_string(malformed) + " unrecognised lines in /proc/driver/nvidia/params");
  }
}

void read_modules(const RootFs& fs, DriverInfo* d, ProbeNotes* notes) {
  auto r = fs.read("/proc/modules", 1 << 20);
  if (!r) {
    notes->unavailable(r.error());
    return;
  }
  int malformed = 0;
  d->modules = parse_proc_modules(*r, &malformed);
  if (malformed > 0) {
    notes->garbled(std::to_string(malformed) + " unrecognised lines in /proc/modules");
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
  }
  read_uvm_hmm(fs, &d, &notes);
  if (auto r = fs.read("/proc/devices", 64 * 1024)) {
    d.char_majors = parse_proc_devices_char(*r);
  } else {
    notes.note(r.error());
  }
  return notes.record("driver");
}

ProbeRecord probe_driver(const ProbeOptions& opt, Snapshot* s) {
  return probe_driver_at(RootFs(opt.root), s);
}

}  // namespace gd
