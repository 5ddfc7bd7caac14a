// The fabric probe: the software around an NVLink fabric that the driver
// does not show. Read only where a fabric may exist (an NVSwitch on the bus
// or its nodes, a fabric manager's files, a Mellanox function that may be an
// NVLink5 management bridge, IMEX channels); on every other machine it
// reads a few directory listings and stops.
//
// Sources (Fabric Manager User Guide, "NVIDIA HGX B200/B300" sections,
// https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html;
// the start script's rules as re-implemented in siderolabs/extensions#895):
//   /usr/bin/nv-fabricmanager, /opt/nvidia/nvlsm/sbin/nvlsm
//   /{lib,usr/lib,etc}/systemd/system/nvidia-fabricmanager.service and its
//     /etc/systemd/system/*.wants/ link (enabled)
//   /proc/<fm pid>/exe                      "/usr/bin/nv-fabricmanager (deleted)"
//   /sys/bus/pci/devices/<bdf>/vpd          ConnectX-7 VPD; "SW_MNG" marks the
//                                           NVLink management function (root only)
//   /sys/bus/pci/devices/<bdf>/infiniband/  its IB device, with mlx5_ib loaded
//   /sys/class/infiniband/<dev>/ports/<n>/{state,link_layer,cap_mask}
//   /sys/class/infiniband_mad/abi_version   present once ib_umad is loaded
//   /dev/nvidia-caps-imex-channels/channel<N>, /etc/nvidia-imex/nodes_config.cfg
//   /var/log/fabricmanager.log              the fabric manager's own log
#include <algorithm>
#include <optional>

#include "probe/file_probes.h"
#include "probe/kernel_log.h"
#include "probe/probe.h"
#include "probe/rootfs.h"
#include "util/text.h"

namespace gd {

namespace {

constexpr uint16_t kMellanox = 0x15b3;
constexpr size_t kMaxPciFunctions = 4096;
constexpr size_t kMaxBridges = 64;
constexpr size_t kMaxPorts = 8;
constexpr size_t kMaxChannels = 256;
constexpr size_t kVpdBytes = 4096;      // PCI VPD is at most 32 KiB; the tag sits early
constexpr int kCapMaskSmDisabled = 10;  // IB PortInfo CapabilityMask bit IsSMDisabled
constexpr const char* kFmLog = "/var/log/fabricmanager.log";
constexpr const char* kFmUnit = "nvidia-fabricmanager.service";

bool visible_name(const std::string& n) { return !n.empty() && n[0] != '.'; }

void read_unit(const RootFs& fs, FabricInfo* f) {
  for (const char* dir :
       {"/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"}) {
    std::string path = std::string(dir) + "/" + kFmUnit;
    if (fs.exists(path)) {
      f->fm_unit = path;
      break;
    }
  }
  if (f->fm_unit.empty()) return;
  f->fm_unit_enabled = 0;
  // The link itself, not its target: systemctl enable writes an absolute
  // link, which a recorded tree cannot follow.
  for (const auto& wants : fs.list("/etc/systemd/system", 512)) {
    if (wants.size() < 6 || wants.substr(wants.size() - 6) != ".wants") continue;
    auto links = fs.list("/etc/systemd/system/" + wants, 1024);
    if (std::find(links.begin(), links.end(), kFmUnit) != links.end()) f->fm_unit_enabled = 1;
  }
}

// cap_mask is printed as "0x2651e84a" (drivers/infiniband/core/sysfs.c).
IbPort read_port(const RootFs& fs, const std::string& dir, int port) {
  IbPort p;
  p.port = port;
  if (auto r = fs.read_line(dir + "/state", 256)) p.state = printable(*r, 64);
  if (auto r = fs.read_line(dir + "/link_layer", 256)) p.link_layer = printable(*r, 64);
  if (auto r = fs.read_line(dir + "/cap_mask", 256)) {
    if (auto v = parse_hex(*r)) p.sm_disabled = ((*v >> kCapMaskSmDisabled) & 1) != 0;
  }
  return p;
}

std::optional<NvlinkBridge> read_bridge(const RootFs& fs, const std::string& bdf) {
  std::string dev = "/sys/bus/pci/devices/" + bdf;
  auto vendor = fs.read_line(dev + "/vendor", 64);
  if (!vendor || parse_hex(*vendor) != kMellanox) return std::nullopt;
  NvlinkBridge b;
  b.bdf = bdf;
  if (auto link = fs.readlink(dev + "/driver")) {
    size_t slash = link->rfind('/');
    b.driver = printable(slash == std::string::npos ? *link : link->substr(slash + 1), 64);
  }
  if (auto vpd = fs.read(dev + "/vpd", kVpdBytes)) {
    b.switch_management = vpd->find("SW_MNG") != std::string::npos ? 1 : 0;
  } else {
    b.vpd_error = vpd.error();
  }
  for (const auto& ib : fs.list(dev + "/infiniband", 8)) {
    if (!visible_name(ib)) continue;
    b.ib_device = printable(ib, 64);
    std::string ports = "/sys/class/infiniband/" + ib + "/ports";
    for (const auto& n : fs.list(ports, kMaxPorts)) {
      if (auto v = parse_u64(n))
        b.ports.push_back(read_port(fs, ports + "/" + n, static_cast<int>(*v)));
    }
    break;
  }
  return b;
}

void read_bridges(const RootFs& fs, FabricInfo* f) {
  for (const auto& bdf : fs.list("/sys/bus/pci/devices", kMaxPciFunctions)) {
    if (f->bridges.size() >= kMaxBridges) break;
    if (auto b = read_bridge(fs, bdf)) f->bridges.push_back(std::move(*b));
  }
}

void read_imex(const RootFs& fs, FabricInfo* f) {
  f->imex_dir = fs.is_dir("/dev/nvidia-caps-imex-channels");
  for (const auto& n : fs.list("/dev/nvidia-caps-imex-channels", kMaxChannels)) {
    if (n.rfind("channel", 0) == 0) f->imex_channels.push_back(printable(n, 32));
  }
  f->imex_configured = fs.exists("/etc/nvidia-imex/nodes_config.cfg");
}

// The running fabric manager's binary, from the services probe's pid.
void read_fm_exe(const RootFs& fs, const Snapshot& s, FabricInfo* f) {
  for (const auto& svc : s.services) {
    if (svc.name != "nv-fabricmanager" || svc.pids.empty()) continue;
    if (auto exe = fs.readlink("/proc/" + std::to_string(svc.pids.front()) + "/exe")) {
      f->fm_exe = printable(*exe, 256);
    }
  }
}

// Boot time as a unix time, to keep the log's events of this boot only;
// nullopt when unknown.
std::optional<int64_t> boot_unix_s(const RootFs& fs) {
  if (auto v = parse_u64(trim(btime_field(fs)))) return static_cast<int64_t>(*v);
  return std::nullopt;
}

void read_fm_log(const RootFs& fs, FabricInfo* f, ProbeNotes* notes) {
  if (!fs.exists(kFmLog)) return;
  KernelLogOptions opt;
  opt.file = fs.path(kFmLog);
  auto log = read_kernel_log(opt);
  if (!log) {
    f->log_error = log.error();
    notes->note(f->log_error);
    return;
  }
  f->log_path = kFmLog;
  std::optional<int64_t> boot = boot_unix_s(fs);
  for (auto& e : log->events) {
    if (e.kind != "fabric-manager") continue;
    // A line of an earlier boot says nothing of this one's fabric.
    if (boot && e.last_unix_s && *e.last_unix_s < *boot) continue;
    e.age_s.reset();  // it counts back from the log's own last line, not from now
    f->log_events.push_back(std::move(e));
  }
}

bool has_nvswitch(const Snapshot& s) {
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kNvSwitch) return true;
  }
  return false;
}

}  // namespace

ProbeRecord probe_fabric_at(const RootFs& fs, Snapshot* s) {
  ProbeNotes notes;
  FabricInfo& f = s->fabric;
  f = FabricInfo{};
  f.fm_binary = fs.exists("/usr/bin/nv-fabricmanager");
  f.nvlsm_binary = fs.exists("/opt/nvidia/nvlsm/sbin/nvlsm");
  f.umad = fs.exists("/sys/class/infiniband_mad/abi_version");
  read_unit(fs, &f);
  read_fm_exe(fs, *s, &f);
  read_bridges(fs, &f);
  read_imex(fs, &f);
  bool fabric_here = f.fm_binary || !f.fm_unit.empty() || !f.fm_exe.empty() || has_nvswitch(*s) ||
                     fs.exists("/dev/nvidia-nvswitchctl") ||
                     std::any_of(f.bridges.begin(), f.bridges.end(),
                                 [](const NvlinkBridge& b) { return b.switch_management != 0; });
  if (fabric_here) read_fm_log(fs, &f, &notes);
  return notes.record("fabric");
}

ProbeRecord probe_fabric(const ProbeOptions& opt, Snapshot* s) {
  return probe_fabric_at(RootFs(opt.root), s);
}

}  // namespace gd
