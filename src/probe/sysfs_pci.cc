// The PCI probe: every NVIDIA function on the bus (GPUs, their HDMI audio
// functions, NVSwitches, bridges) from /sys/bus/pci/devices, with the driver
// bound, the link, the NUMA node, and what the NVIDIA driver says about each
// GPU in /proc/driver/nvidia/gpus/<bdf>/information; and the PCI tree above
// them: each function's root bus and parent bridge, and every bridge on the
// way (root ports, switch ports, of any vendor) with its link and ACS.
#include <algorithm>
#include <cctype>
#include <map>

#include "probe/file_probes.h"
#include "probe/pci_topology.h"
#include "probe/probe.h"
#include "util/ascii.h"
#include "util/text.h"

namespace gd {

namespace {

constexpr uint16_t kNvidiaVendor = 0x10de;
constexpr size_t kMaxPciDevices = 4096;

// A sysfs hex attribute ("0x10de\n", "0x030000\n"); nullopt when garbled.
std::optional<uint64_t> read_hex(const RootFs& fs, const std::string& file, uint64_t max,
                                 ProbeNotes* notes) {
  auto r = fs.read_line(file, 64);
  if (!r) {
    notes->note(r.error());
    return std::nullopt;
  }
  auto v = parse_hex(*r);
  if (!v || *v > max) {
    notes->garbled("unrecognised " + file + " '" + printable(*r, 32) + "'");
    return std::nullopt;
  }
  return v;
}

// current_link_speed / max_link_speed, as drivers/pci/pci-sysfs.c prints
// them (pci_speed_string):
//   32.0 GT/s PCIe          Linux 5.x and later (the H200 VM: Gen5)
//   8 GT/s                  Linux 4.x and older, no ".0" and no "PCIe"
//   2.5 GT/s
//   Unknown                 link down, or a conventional PCI function
// "Unknown" and an absent file (a VM's virtual bus may have none) are 0,
// unknown; anything else without a leading speed is an unrecognised line.
double read_link_speed(const RootFs& fs, const std::string& file, ProbeNotes* notes) {
  auto r = fs.read_line(file, 64);
  if (!r) return 0;
  std::string_view v = trim(*r);
  if (v == "Unknown" || v.empty()) return 0;
  double gts = parse_leading_double(v);
  if (gts <= 0 || gts > 1000) {
    notes->unrecognised(1, file);
    return 0;
  }
  return gts;
}

// current_link_width / max_link_width: the lane count, "16"; absent on a
// conventional PCI function (0, unknown).
int read_link_width(const RootFs& fs, const std::string& file, ProbeNotes* notes) {
  auto r = fs.read_line(file, 64);
  if (!r) return 0;
  auto v = parse_u64(*r);
  if (!v || *v > 64) {
    notes->garbled("unrecognised " + file + " '" + printable(*r, 32) + "'");
    return 0;
  }
  return static_cast<int>(*v);
}

// numa_node: "0", "1", ...; "-1" when the firmware gives the device no
// proximity domain (a VM's virtual bus: the H200 VM; single-node machines);
// absent on a kernel without CONFIG_NUMA. Both read as -1, no NUMA node.
int read_numa_node(const RootFs& fs, const std::string& file, ProbeNotes* notes) {
  auto r = fs.read_line(file, 64);
  if (!r) return -1;
  auto v = parse_i64(*r);
  if (!v || *v < -1 || *v > 65535) {
    notes->garbled("unrecognised " + file + " '" + printable(*r, 32) + "'");
    return -1;
  }
  return static_cast<int>(*v);
}

std::string basename_of(std::string_view p) {
  size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

void read_proc_information(const RootFs& fs, PciDevice* d) {
  auto r = fs.read("/proc/driver/nvidia/gpus/" + d->bdf + "/information", 16 * 1024);
  if (!r) return;  // not a GPU, or no NVIDIA driver bound: nothing to add
  GpuProcInformation info = parse_gpu_information(*r);
  d->proc_model = info.model;
  d->proc_uuid = info.uuid;
  d->proc_minor = info.minor;
  d->proc_excluded = info.excluded;
}

// nullopt: not an NVIDIA function (or its vendor file is unreadable).
std::optional<PciDevice> read_device(const RootFs& fs, const std::string& bdf, ProbeNotes* notes) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf + "/";
  auto vendor = read_hex(fs, dir + "vendor", 0xffff, notes);
  if (!vendor || *vendor != kNvidiaVendor) return std::nullopt;
  PciDevice d;
  d.bdf = ascii_lower(printable(bdf, 32));
  d.vendor_id = kNvidiaVendor;
  d.device_id = static_cast<uint16_t>(read_hex(fs, dir + "device", 0xffff, notes).value_or(0));
  d.subsystem_vendor_id =
      static_cast<uint16_t>(read_hex(fs, dir + "subsystem_vendor", 0xffff, notes).value_or(0));
  d.subsystem_device_id =
      static_cast<uint16_t>(read_hex(fs, dir + "subsystem_device", 0xffff, notes).value_or(0));
  d.class_code = static_cast<uint32_t>(read_hex(fs, dir + "class", 0xffffff, notes).value_or(0));
  d.kind = pci_kind_of_class(d.class_code);
  // "driver" -> ../../../bus/pci/drivers/nvidia; absent when unbound.
  if (auto link = fs.readlink(dir + "driver")) d.driver = printable(basename_of(*link), 64);
  d.numa_node = read_numa_node(fs, dir + "numa_node", notes);
  if (auto r = fs.read_line(dir + "local_cpulist", 4096)) d.local_cpulist = printable(*r, 1024);
  d.current_link_speed_gts = read_link_speed(fs, dir + "current_link_speed", notes);
  d.max_link_speed_gts = read_link_speed(fs, dir + "max_link_speed", notes);
  d.current_link_width = read_link_width(fs, dir + "current_link_width", notes);
  d.max_link_width = read_link_width(fs, dir + "max_link_width", notes);
  // Only GPUs have /proc/driver/nvidia/gpus/<bdf>: skip the opens bound to
  // fail for known other kinds (a garbled class stays kOther and is tried).
  if (d.kind == PciKind::kGpu || d.kind == PciKind::kOther) read_proc_information(fs, &d);
  return d;
}

PciBridge read_bridge(const RootFs& fs, const std::string& dir, const std::string& bdf,
                      ProbeNotes* notes) {
  PciBridge b;
  b.bdf = bdf;
  b.vendor_id = static_cast<uint16_t>(read_hex(fs, dir + "/vendor", 0xffff, notes).value_or(0));
  b.device_id = static_cast<uint16_t>(read_hex(fs, dir + "/device", 0xffff, notes).value_or(0));
  b.numa_node = read_numa_node(fs, dir + "/numa_node", notes);
  b.current_link_speed_gts = read_link_speed(fs, dir + "/current_link_speed", notes);
  b.max_link_speed_gts = read_link_speed(fs, dir + "/max_link_speed", notes);
  b.current_link_width = read_link_width(fs, dir + "/current_link_width", notes);
  b.max_link_width = read_link_width(fs, dir + "/max_link_width", notes);
  // 4096 bytes as root; a user's read stops at 64 (parse_acs_config says so).
  auto config = fs.read(dir + "/config", 4096);
  if (!config) {
    b.acs_error = config.error();
    return b;
  }
  AcsReading acs = parse_acs_config(*config);
  b.acs_known = acs.known;
  b.acs_capable = acs.capable;
  b.acs_ctrl = acs.ctrl;
  b.acs_error = acs.error;
  if (acs.garbled) notes->garbled(dir + "/config: " + acs.error);
  return b;
}

// Where d sits: root bus and parent from its sysfs link, and every bridge
// on the way up into *bridges (each read once).
void read_topology(const RootFs& fs, PciDevice* d, std::map<std::string, PciBridge>* bridges,
                   ProbeNotes* notes) {
  auto link = fs.readlink("/sys/bus/pci/devices/" + d->bdf);
  if (!link) {
    notes->note(link.error());
    return;
  }
  auto path = parse_pci_device_link(d->bdf, *link);
  if (!path) {
    notes->garbled("/sys/bus/pci/devices/" + d->bdf + ": " + path.error());
    return;
  }
  d->root_bus = path->root_bus;
  const auto& chain = path->chain;
  if (chain.size() >= 2) d->parent = chain[chain.size() - 2];
  std::string dir = path->root_dir;
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    dir += "/" + chain[i];
    if (bridges->count(chain[i]) || bridges->size() >= kMaxPciDevices) continue;
    PciBridge b = read_bridge(fs, dir, chain[i], notes);
    b.root_bus = path->root_bus;
    b.parent = i > 0 ? chain[i - 1] : "";
    bridges->emplace(chain[i], std::move(b));
  }
}

}  // namespace

// The class code's upper 16 bits (base class, subclass); source: PCI Code and
// ID Assignment Specification, and nvidia-facts.md §7.2/§8 (2026-12).
PciKind pci_kind_of_class(uint32_t class_code) {
  switch (class_code >> 8) {
    case 0x0300:  // VGA compatible controller (GeForce, workstation)
    case 0x0302:  // 3D controller (data-center GPUs)
      return PciKind::kGpu;
    case 0x0680:  // Bridge: other (NVSwitch)
      return PciKind::kNvSwitch;
    case 0x0403:  // Audio device (HDMI audio function .1)
      return PciKind::kAudio;
    case 0x0604:  // PCI-to-PCI bridge
      return PciKind::kBridge;
    default:
      return PciKind::kOther;
  }
}

// /proc/driver/nvidia/gpus/0000:01:00.0/information ("Key: \t\t value"):
//   Model: 		 NVIDIA GeForce RTX 4090
//   IRQ:   		 185
//   GPU UUID: 	 GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001
//   Video BIOS: 	 95.02.18.80.87
//   Bus Type: 	 PCIe
//   Bus Location: 	 0000:01:00.0
//   Device Minor: 	 0
//   GPU Excluded:	 No
GpuProcInformation parse_gpu_information(std::string_view text) {
  GpuProcInformation info;
  for (auto line : split_lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (key == "Model") info.model = printable(value, 128);
    if (key == "GPU UUID") info.uuid = printable(value, 128);
    if (key == "GPU Excluded") info.excluded = value == "Yes";
    if (key == "Device Minor") {
      auto v = parse_u64(value);
      if (v && *v < 4096) info.minor = static_cast<int>(*v);
    }
  }
  return info;
}

ProbeRecord probe_pci_at(const RootFs& fs, Snapshot* s) {
  ProbeNotes notes;
  s->pci.clear();
  s->pci_bridges.clear();
  if (!fs.is_dir("/sys/bus/pci/devices")) {
    notes.unavailable("no /sys/bus/pci/devices");
    return notes.record("pci");
  }
  for (const auto& bdf : fs.list("/sys/bus/pci/devices", kMaxPciDevices)) {
    if (auto d = read_device(fs, bdf, &notes)) s->pci.push_back(std::move(*d));
  }
  std::sort(s->pci.begin(), s->pci.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.bdf < b.bdf; });
  std::map<std::string, PciBridge> bridges;  // by bdf: sorted, each once
  for (auto& d : s->pci) read_topology(fs, &d, &bridges, &notes);
  for (auto& [bdf, b] : bridges) s->pci_bridges.push_back(std::move(b));
  return notes.record("pci");
}

ProbeRecord probe_pci(const ProbeOptions& opt, Snapshot* s) {
  return probe_pci_at(RootFs(opt.root), s);
}

}  // namespace gd
