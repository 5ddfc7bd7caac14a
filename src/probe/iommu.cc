// The iommu probe: whether an IOMMU translates DMA on this machine. With
// PCIe ACS it decides whether GPUs reach each other directly (p2p.blocked).
//
// Sources:
//   /sys/class/iommu/<unit>            one entry per IOMMU unit: dmar0 (Intel
//                                      VT-d), ivhd0 (AMD-Vi), smmu3.0x... (Arm)
//   /sys/kernel/iommu_groups/<n>/type  "identity" (passthrough), "DMA",
//                                      "DMA-FQ" (translating), "blocked", ...
//   /proc/cmdline                      intel_iommu=on iommu=pt ...
// Both directories exist whenever the kernel has IOMMU support; they are
// empty when the firmware or the command line turned the IOMMU off.
#include <cctype>

#include "probe/pci_topology.h"
#include "util/text.h"

namespace gd {

namespace {

constexpr size_t kMaxUnits = 1024;
constexpr size_t kMaxGroups = 65536;
constexpr size_t kMaxGroupTypesRead = 64;  // enough to tell the default domain type

// sysfs names never start with a dot; recorded trees keep an empty
// directory in git with a ".keep" file.
std::vector<std::string> visible(std::vector<std::string> names) {
  std::erase_if(names, [](const std::string& n) { return n.empty() || n[0] == '.'; });
  return names;
}

std::optional<bool> kernel_bool(std::string_view v) {
  // kstrtobool: 1/y/Y/on true, 0/n/N/off false
  if (v == "1" || v == "y" || v == "Y" || v == "on") return true;
  if (v == "0" || v == "n" || v == "N" || v == "off") return false;
  return std::nullopt;
}

std::string join_words(const std::vector<std::string>& words, size_t max_words = 64) {
  std::string out;
  for (size_t i = 0; i < words.size() && i < max_words; ++i) {
    if (i > 0) out += ' ';
    out += printable(words[i], 64);
  }
  if (words.size() > max_words) out += " ...";
  return out;
}

}  // namespace

// /proc/cmdline:
//   BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=3b0f... ro amd_iommu=on iommu=pt quiet
// iommu= takes a comma-separated list on x86 ("pt", "nopt", "off", "force", ...);
// iommu.passthrough= a kernel bool.
IommuCmdline parse_iommu_cmdline(std::string_view cmdline) {
  IommuCmdline out;
  size_t pos = 0;
  while (pos < cmdline.size() && out.flags.size() < 64) {
    while (pos < cmdline.size() && std::isspace(static_cast<unsigned char>(cmdline[pos]))) ++pos;
    size_t end = pos;
    while (end < cmdline.size() && !std::isspace(static_cast<unsigned char>(cmdline[end]))) ++end;
    std::string_view tok = cmdline.substr(pos, end - pos);
    pos = end;
    size_t eq = tok.find('=');
    std::string_view key = tok.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : tok.substr(eq + 1);
    if (key == "iommu") {
      for (size_t p = 0; p <= value.size();) {
        size_t comma = value.find(',', p);
        if (comma == std::string_view::npos) comma = value.size();
        std::string_view opt = value.substr(p, comma - p);
        if (opt == "pt") out.passthrough = true;
        if (opt == "nopt") out.passthrough = false;
        p = comma + 1;
      }
    } else if (key == "iommu.passthrough") {
      if (auto b = kernel_bool(value)) out.passthrough = *b;
    } else if (key != "intel_iommu" && key != "amd_iommu" && key != "iommu.strict") {
      continue;
    }
    out.flags.push_back(printable(tok, 128));
  }
  return out;
}

ProbeRecord probe_iommu_at(const RootFs& fs, Snapshot* s) {
  ProbeNotes notes;
  s->iommu = IommuInfo{};
  IommuInfo& io = s->iommu;
  const bool class_dir = fs.is_dir("/sys/class/iommu");
  const bool groups_dir = fs.is_dir("/sys/kernel/iommu_groups");
  io.known = class_dir || groups_dir;
  if (!io.known) notes.unavailable("no /sys/class/iommu or /sys/kernel/iommu_groups");
  std::vector<std::string> units = visible(fs.list("/sys/class/iommu", kMaxUnits));
  std::vector<std::string> groups = visible(fs.list("/sys/kernel/iommu_groups", kMaxGroups));
  // Groups are numbered; anything else there is not a group.
  std::erase_if(groups, [](const std::string& g) { return !parse_u64(g); });
  io.groups = static_cast<int>(groups.size());
  io.enabled = !units.empty() || !groups.empty();

  std::optional<bool> from_groups;
  for (size_t i = 0; i < groups.size() && i < kMaxGroupTypesRead; ++i) {
    auto t = fs.read_line("/sys/kernel/iommu_groups/" + groups[i] + "/type", 64);
    if (!t) continue;  // kernels before 5.11 have no type file
    if (*t == "identity") {
      if (!from_groups) from_groups = true;
    } else if (t->starts_with("DMA")) {
      from_groups = false;
    } else if (*t != "blocked" && *t != "unmanaged") {
      notes.garbled("unrecognised /sys/kernel/iommu_groups/" + printable(groups[i], 16) +
                    "/type '" + printable(*t, 32) + "'");
    }
  }
  if (auto r = fs.read("/proc/cmdline", 64 * 1024)) {
    IommuCmdline c = parse_iommu_cmdline(*r);
    io.cmdline_flags = join_words(c.flags);
    io.passthrough = c.passthrough;
  } else {
    notes.gap("iommu.cmdline_flags", r.error());
  }
  // The groups' default domain is what the kernel did; the command line is
  // what it was asked (and the only source before Linux 5.11).
  if (from_groups) io.passthrough = *from_groups;
  if (!io.enabled) io.passthrough = false;
  if (!units.empty()) notes.note("units: " + join_words(units, 16));
  return notes.record("iommu");
}

ProbeRecord probe_iommu(const ProbeOptions& opt, Snapshot* s) {
  return probe_iommu_at(RootFs(opt.root), s);
}

}  // namespace gd
