// The PCI tree above the GPUs and the IOMMU: the link and config-space
// parsers, the pci probe's root_bus/parent/pci_bridges over small trees
// built in a temporary directory (incl. truncated, garbled and looping
// config space) and over the recorded trees, and the iommu probe.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probe/file_probes.h"
#include "probe/pci_topology.h"

namespace gd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A machine tree in a fresh temporary directory, removed at the end.
class TempTree {
 public:
  TempTree() {
    char tmpl[] = "/tmp/gd-pcitopo-XXXXXX";
    const char* p = mkdtemp(tmpl);
    EXPECT_NE(p, nullptr);
    root_ = p ? p : "/nonexistent";
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  const std::string& root() const { return root_; }
  void file(const std::string& rel, const std::string& content) const {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void link(const std::string& rel, const std::string& target) const {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    fs::create_symlink(target, p);
  }
  void dir(const std::string& rel) const { fs::create_directories(fs::path(root_) / rel); }

 private:
  std::string root_;
};

// A config space of `size` bytes with the given 32-bit extended capability
// headers (offset -> header) and an ACS control value at acs_at + 6.
std::string config(size_t size, std::vector<std::pair<size_t, uint32_t>> headers = {},
                   size_t acs_at = 0, uint16_t acs_ctrl = 0) {
  std::string c(size, '\0');
  auto put = [&](size_t at, uint32_t v, int bytes) {
    for (int i = 0; i < bytes && at + i < c.size(); ++i)
      c[at + i] = static_cast<char>(v >> (8 * i));
  };
  for (auto [at, h] : headers) put(at, h, 4);
  if (acs_at) put(acs_at + 6, acs_ctrl, 2);
  return c;
}
uint32_t ext(uint32_t id, uint32_t next) { return id | (1u << 16) | (next << 20); }

// A function dir under sys/devices/<path> with the sysfs link to it.
void function(const TempTree& t, const std::string& path, const std::string& vendor,
              const std::string& cls) {
  std::string bdf = path.substr(path.rfind('/') + 1);
  t.link("sys/bus/pci/devices/" + bdf, "../../../devices/" + path);
  t.file("sys/devices/" + path + "/vendor", vendor + "\n");
  t.file("sys/devices/" + path + "/class", cls + "\n");
}

void bridge(const TempTree& t, const std::string& path, const std::string& vendor,
            const std::string& device, const std::string& cfg, int max_width = 16) {
  function(t, path, vendor, "0x060400");
  t.file("sys/devices/" + path + "/device", device + "\n");
  t.file("sys/devices/" + path + "/numa_node", "1\n");
  t.file("sys/devices/" + path + "/current_link_speed", "8.0 GT/s PCIe\n");
  t.file("sys/devices/" + path + "/max_link_speed", "16.0 GT/s PCIe\n");
  t.file("sys/devices/" + path + "/current_link_width", std::to_string(max_width) + "\n");
  t.file("sys/devices/" + path + "/max_link_width", std::to_string(max_width) + "\n");
  t.file("sys/devices/" + path + "/config", cfg);
}

const PciDevice* pci_at(const Snapshot& s, const std::string& bdf) {
  for (const auto& d : s.pci) {
    if (d.bdf == bdf) return &d;
  }
  return nullptr;
}
const PciBridge* bridge_at(const Snapshot& s, const std::string& bdf) {
  for (const auto& b : s.pci_bridges) {
    if (b.bdf == bdf) return &b;
  }
  return nullptr;
}
std::vector<std::string> bridge_bdfs(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& b : s.pci_bridges) out.push_back(b.bdf);
  return out;
}
std::string recorded(const std::string& name) {
  return std::string(GD_SOURCE_DIR) + "/tests/roots/" + name;
}

// --- parsers -----------------------------------------------------------------------

TEST(PciTopologyParse, PciAddresses) {
  EXPECT_TRUE(is_pci_address("0000:17:00.0"));
  EXPECT_TRUE(is_pci_address("10000:e1:1f.7"));  // VMD domain
  EXPECT_FALSE(is_pci_address("0000:17:00.8"));
  EXPECT_FALSE(is_pci_address("0000:17:20.0"));  // device numbers stop at 0x1f
  EXPECT_FALSE(is_pci_address("pci0000:00"));
  EXPECT_FALSE(is_pci_address("17:00.0"));
  EXPECT_FALSE(is_pci_address("0000:zz:00.0"));
  EXPECT_FALSE(is_pci_address(""));
}

TEST(PciTopologyParse, DeviceLinkBehindASwitch) {
  auto p = parse_pci_device_link(
      "0000:05:00.0",
      "../../../devices/pci0000:00/0000:00:01.1/0000:02:00.0/0000:03:08.0/0000:05:00.0");
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->root_bus, "pci0000:00");
  EXPECT_EQ(p->root_dir, "/sys/devices/pci0000:00");
  EXPECT_THAT(p->chain,
              ElementsAre("0000:00:01.1", "0000:02:00.0", "0000:03:08.0", "0000:05:00.0"));
}

TEST(PciTopologyParse, DeviceLinkOnTheRootBusAbsoluteAndVmd) {
  auto flat = parse_pci_device_link("0000:00:1f.3", "/sys/devices/pci0000:00/0000:00:1f.3");
  ASSERT_TRUE(flat.ok()) << flat.error();
  EXPECT_THAT(flat->chain, ElementsAre("0000:00:1f.3"));
  // Behind a VMD controller the innermost root bus counts.
  auto vmd = parse_pci_device_link(
      "10000:e1:00.0",
      "../../../devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0");
  ASSERT_TRUE(vmd.ok()) << vmd.error();
  EXPECT_EQ(vmd->root_bus, "pci10000:e0");
  EXPECT_EQ(vmd->root_dir, "/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0");
  EXPECT_THAT(vmd->chain, ElementsAre("10000:e0:06.0", "10000:e1:00.0"));
}

TEST(PciTopologyParse, BadDeviceLinks) {
  EXPECT_THAT(parse_pci_device_link("0000:01:00.0", "../../../../../../0000:01:00.0").error(),
              HasSubstr("leaves /"));
  EXPECT_THAT(
      parse_pci_device_link("0000:01:00.0", "../../../devices/platform/0000:01:00.0").error(),
      HasSubstr("names no root bus"));
  EXPECT_THAT(parse_pci_device_link("0000:01:00.0", "../../../class/0000:01:00.0").error(),
              HasSubstr("does not lead into /sys/devices"));
  EXPECT_THAT(
      parse_pci_device_link("0000:01:00.0", "../../../devices/pci0000:00/0000:02:00.0").error(),
      HasSubstr("does not end in 0000:01:00.0"));
  EXPECT_THAT(
      parse_pci_device_link("0000:01:00.0", "../../../devices/pci0000:00/junk\xff/0000:01:00.0")
          .error(),
      HasSubstr("is no PCI address"));
  std::string deep = "../../../devices/pci0000:00";
  for (int i = 0; i < 200; ++i) deep += "/0000:00:01.0";
  EXPECT_THAT(parse_pci_device_link("0000:00:01.0", deep).error(), HasSubstr("too deep"));
}

TEST(PciTopologyParse, AcsFromConfigSpace) {
  // Root's 4096 bytes: AER at 0x100, then ACS at 0x148 with SV RR CR UF.
  AcsReading a =
      parse_acs_config(config(4096, {{0x100, ext(0x1, 0x148)}, {0x148, ext(0xd, 0)}}, 0x148, 0x1d));
  EXPECT_TRUE(a.known);
  EXPECT_TRUE(a.capable);
  EXPECT_EQ(a.ctrl, 0x1d);
  EXPECT_EQ(a.error, "");
  // The list ends without ACS (a switch's upstream port).
  AcsReading none = parse_acs_config(config(4096, {{0x100, ext(0x1, 0)}}));
  EXPECT_TRUE(none.known);
  EXPECT_FALSE(none.capable);
  // No extended capabilities at all.
  EXPECT_TRUE(parse_acs_config(config(4096)).known);
  // A next pointer into the legacy space ends the list, as in Linux.
  EXPECT_TRUE(parse_acs_config(config(4096, {{0x100, ext(0x1, 0x40)}})).known);
}

TEST(PciTopologyParse, AcsUnknownWithoutRoot) {
  AcsReading user = parse_acs_config(config(64));
  EXPECT_FALSE(user.known);
  EXPECT_FALSE(user.garbled);
  EXPECT_THAT(user.error, HasSubstr("config space past 64 bytes needs root"));
  AcsReading conventional = parse_acs_config(config(256));
  EXPECT_FALSE(conventional.known);
  EXPECT_THAT(conventional.error, HasSubstr("256 bytes"));
  EXPECT_FALSE(parse_acs_config("").known);
}

TEST(PciTopologyParse, AcsGarbledConfigSpaceEnds) {
  // 0x100 -> 0x140 -> 0x100 -> ...: the walk stops and says so.
  AcsReading loop =
      parse_acs_config(config(4096, {{0x100, ext(0x1, 0x140)}, {0x140, ext(0x19, 0x100)}}));
  EXPECT_FALSE(loop.known);
  EXPECT_TRUE(loop.garbled);
  EXPECT_THAT(loop.error, HasSubstr("does not end"));
  // A capability pointing at itself.
  EXPECT_TRUE(parse_acs_config(config(4096, {{0x100, ext(0x1, 0x100)}})).garbled);
  // Cut off: the next capability lies past the bytes read.
  AcsReading cut = parse_acs_config(config(0x142, {{0x100, ext(0x1, 0x140)}}));
  EXPECT_FALSE(cut.known);
  EXPECT_TRUE(cut.garbled);
  EXPECT_THAT(cut.error, HasSubstr("past the 322 bytes read"));
  // ACS header present but its control register cut off.
  EXPECT_TRUE(parse_acs_config(config(0x104, {{0x100, ext(0xd, 0)}})).garbled);
  // A device that does not answer reads all ones.
  AcsReading gone = parse_acs_config(std::string(4096, '\xff'));
  EXPECT_FALSE(gone.known);
  EXPECT_THAT(gone.error, HasSubstr("all ones"));
}

TEST(PciTopologyParse, AcsBitNames) {
  EXPECT_EQ(acs_ctrl_bits(0x1d), "SV RR CR UF");
  EXPECT_EQ(acs_ctrl_bits(0), "none");
  EXPECT_EQ(acs_ctrl_bits(0x7f), "SV TB RR CR UF EC DT");
}

TEST(PciTopologyParse, IommuCmdline) {
  IommuCmdline c = parse_iommu_cmdline(
      "BOOT_IMAGE=/boot/vmlinuz-6.8.0 root=UUID=x ro intel_iommu=on iommu=pt quiet\n");
  EXPECT_THAT(c.flags, ElementsAre("intel_iommu=on", "iommu=pt"));
  EXPECT_TRUE(c.passthrough);
  EXPECT_FALSE(parse_iommu_cmdline("amd_iommu=on").passthrough);
  EXPECT_TRUE(parse_iommu_cmdline("iommu.passthrough=1").passthrough);
  EXPECT_TRUE(parse_iommu_cmdline("iommu=force,pt").passthrough);
  // Later parameters win.
  EXPECT_FALSE(parse_iommu_cmdline("iommu=pt iommu=nopt").passthrough);
  EXPECT_FALSE(parse_iommu_cmdline("iommu=pt iommu.passthrough=0").passthrough);
  EXPECT_TRUE(parse_iommu_cmdline("iommu.passthrough=0 iommu=pt").passthrough);
  EXPECT_FALSE(parse_iommu_cmdline("iommu.passthrough=maybe").passthrough);
  EXPECT_THAT(parse_iommu_cmdline("iommu.strict=0 iommu_foo=1 xiommu=pt").flags,
              ElementsAre("iommu.strict=0"));
  EXPECT_TRUE(parse_iommu_cmdline("").flags.empty());
}

// --- the pci probe over built trees ----------------------------------------------------

TEST(PciTopologyProbe, GpusBehindASwitch) {
  TempTree t;
  const std::string acs =
      config(4096, {{0x100, ext(0x1, 0x148)}, {0x148, ext(0xd, 0)}}, 0x148, 0x1d);
  bridge(t, "pci0000:00/0000:00:01.1", "0x1022", "0x1483", acs);
  bridge(t, "pci0000:00/0000:00:01.1/0000:01:00.0", "0x10b5", "0x8747",
         config(4096, {{0x100, ext(0x1, 0)}}));
  bridge(t, "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:08.0", "0x10b5", "0x8747", acs, 8);
  bridge(t, "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:09.0", "0x10b5", "0x8747",
         config(4096, {{0x100, ext(0xd, 0)}}, 0x100, 0), 8);
  function(t, "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:08.0/0000:03:00.0", "0x10de",
           "0x030000");
  function(t, "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:08.0/0000:03:00.1", "0x10de",
           "0x040300");
  function(t, "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:09.0/0000:04:00.0", "0x10de",
           "0x030000");
  function(t, "pci0000:40/0000:40:00.0", "0x10de", "0x030200");  // on the root bus

  Snapshot s;
  ProbeRecord r = probe_pci_at(RootFs(t.root()), &s);
  EXPECT_EQ(r.name, "pci");
  EXPECT_NE(r.status, ProbeStatus::kFailed) << r.detail;
  const PciDevice* g = pci_at(s, "0000:03:00.0");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->root_bus, "pci0000:00");
  EXPECT_EQ(g->parent, "0000:02:08.0");
  EXPECT_EQ(pci_at(s, "0000:03:00.1")->parent, "0000:02:08.0");
  EXPECT_EQ(pci_at(s, "0000:04:00.0")->parent, "0000:02:09.0");
  EXPECT_EQ(pci_at(s, "0000:40:00.0")->root_bus, "pci0000:40");
  EXPECT_EQ(pci_at(s, "0000:40:00.0")->parent, "");
  // Every bridge once, sorted, non-NVIDIA vendors included.
  EXPECT_THAT(bridge_bdfs(s),
              ElementsAre("0000:00:01.1", "0000:01:00.0", "0000:02:08.0", "0000:02:09.0"));
  const PciBridge* root = bridge_at(s, "0000:00:01.1");
  EXPECT_EQ(root->vendor_id, 0x1022);
  EXPECT_EQ(root->device_id, 0x1483);
  EXPECT_EQ(root->parent, "");
  EXPECT_EQ(root->root_bus, "pci0000:00");
  EXPECT_EQ(root->numa_node, 1);
  EXPECT_DOUBLE_EQ(root->current_link_speed_gts, 8.0);
  EXPECT_DOUBLE_EQ(root->max_link_speed_gts, 16.0);
  EXPECT_TRUE(root->acs_known && root->acs_capable);
  EXPECT_EQ(root->acs_ctrl, 0x1d);
  const PciBridge* up = bridge_at(s, "0000:01:00.0");
  EXPECT_EQ(up->parent, "0000:00:01.1");
  EXPECT_TRUE(up->acs_known);
  EXPECT_FALSE(up->acs_capable);
  const PciBridge* down = bridge_at(s, "0000:02:09.0");
  EXPECT_EQ(down->parent, "0000:01:00.0");
  EXPECT_EQ(down->max_link_width, 8);
  EXPECT_TRUE(down->acs_capable);
  EXPECT_EQ(down->acs_ctrl, 0);
}

TEST(PciTopologyProbe, UserReadsAndBrokenConfigSpace) {
  TempTree t;
  bridge(t, "pci0000:00/0000:00:01.0", "0x1022", "0x1483", config(64));
  bridge(t, "pci0000:00/0000:00:02.0", "0x1022", "0x1483",
         config(4096, {{0x100, ext(0x1, 0x140)}, {0x140, ext(0x19, 0x100)}}));
  function(t, "pci0000:00/0000:00:01.0/0000:01:00.0", "0x10de", "0x030000");
  function(t, "pci0000:00/0000:00:02.0/0000:02:00.0", "0x10de", "0x030000");
  // No config file at all.
  function(t, "pci0000:00/0000:00:03.0", "0x1022", "0x060400");
  function(t, "pci0000:00/0000:00:03.0/0000:05:00.0", "0x10de", "0x030000");
  Snapshot s;
  ProbeRecord r = probe_pci_at(RootFs(t.root()), &s);
  EXPECT_EQ(r.status, ProbeStatus::kFailed);  // the looping list is garbled
  EXPECT_THAT(r.detail, HasSubstr("/sys/devices/pci0000:00/0000:00:02.0/config: extended "
                                  "capability list does not end"));
  const PciBridge* user = bridge_at(s, "0000:00:01.0");
  ASSERT_NE(user, nullptr);
  EXPECT_FALSE(user->acs_known);
  EXPECT_THAT(user->acs_error, HasSubstr("needs root"));
  EXPECT_FALSE(bridge_at(s, "0000:00:02.0")->acs_known);
  EXPECT_THAT(bridge_at(s, "0000:00:03.0")->acs_error, HasSubstr("no /sys/devices/"));
  // The GPUs' places are known all the same.
  EXPECT_EQ(pci_at(s, "0000:02:00.0")->parent, "0000:00:02.0");
}

TEST(PciTopologyProbe, LinksThatLeadNowhereAreNotedNotFollowed) {
  TempTree t;
  t.link("sys/bus/pci/devices/0000:01:00.0", "../../../devices/platform/0000:01:00.0");
  t.file("sys/devices/platform/0000:01:00.0/vendor", "0x10de\n");
  // A real directory instead of a link (as some container runtimes show).
  t.file("sys/bus/pci/devices/0000:02:00.0/vendor", "0x10de\n");
  Snapshot s;
  ProbeRecord r = probe_pci_at(RootFs(t.root()), &s);
  ASSERT_EQ(s.pci.size(), 2u);
  EXPECT_EQ(s.pci[0].root_bus, "");
  EXPECT_EQ(s.pci[1].root_bus, "");
  EXPECT_TRUE(s.pci_bridges.empty());
  EXPECT_THAT(r.detail, HasSubstr("names no root bus"));
}

// --- the recorded trees --------------------------------------------------------------

TEST(PciTopologyProbe, RecordedHgxPairsShareASwitch) {
  Snapshot s;
  ProbeRecord r = probe_pci_at(RootFs(recorded("hgx-8xh100")), &s);
  EXPECT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  // Per pair: root port, upstream port, two downstream ports; the NVSwitches'
  // switch: root port, upstream port, four downstream ports.
  EXPECT_EQ(s.pci_bridges.size(), 4u * 4 + 6);
  const PciDevice* a = pci_at(s, "0000:18:00.0");
  const PciDevice* b = pci_at(s, "0000:2a:00.0");
  EXPECT_EQ(a->root_bus, "pci0000:15");
  EXPECT_EQ(a->parent, "0000:17:00.0");
  EXPECT_EQ(b->parent, "0000:17:01.0");
  EXPECT_EQ(bridge_at(s, "0000:17:01.0")->parent, "0000:16:00.0");
  EXPECT_EQ(bridge_at(s, "0000:16:00.0")->vendor_id, 0x1000);
  EXPECT_EQ(bridge_at(s, "0000:16:00.0")->parent, "0000:15:01.0");
  EXPECT_EQ(bridge_at(s, "0000:b9:01.0")->numa_node, 1);
  for (const auto& br : s.pci_bridges) {
    EXPECT_TRUE(br.acs_known) << br.bdf << ": " << br.acs_error;
    EXPECT_EQ(br.acs_ctrl, 0) << br.bdf;
  }
  EXPECT_EQ(pci_at(s, "0000:07:00.0")->parent, "0000:04:02.0");
}

TEST(PciTopologyProbe, RecordedWorkstationAndAcsTrees) {
  Snapshot ws;
  probe_pci_at(RootFs(recorded("ws-4x4090")), &ws);
  EXPECT_THAT(bridge_bdfs(ws),
              ElementsAre("0000:00:01.1", "0000:20:01.1", "0000:40:01.1", "0000:60:01.1"));
  EXPECT_EQ(pci_at(ws, "0000:41:00.0")->root_bus, "pci0000:40");
  EXPECT_EQ(pci_at(ws, "0000:41:00.0")->parent, "0000:40:01.1");
  EXPECT_DOUBLE_EQ(pci_at(ws, "0000:41:00.0")->current_link_speed_gts, 2.5);  // idle
  EXPECT_DOUBLE_EQ(pci_at(ws, "0000:41:00.0")->max_link_speed_gts, 16.0);

  Snapshot acs;
  probe_pci_at(RootFs(recorded("ws-4x4090-acs")), &acs);
  const PciBridge* down = bridge_at(acs, "0000:02:10.0");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->vendor_id, 0x10b5);
  EXPECT_EQ(down->acs_ctrl, 0x1d);
  EXPECT_FALSE(bridge_at(acs, "0000:01:00.0")->acs_capable);

  Snapshot x4;
  probe_pci_at(RootFs(recorded("ws-4x4090-x4")), &x4);
  EXPECT_EQ(pci_at(x4, "0000:21:00.0")->current_link_width, 4);
  EXPECT_EQ(bridge_at(x4, "0000:20:01.1")->current_link_width, 4);
}

TEST(PciTopologyProbe, RecordedGarbageNeverCrashes) {
  Snapshot s;
  ProbeRecord r = probe_pci_at(RootFs(recorded("garbage-pci")), &s);
  EXPECT_EQ(r.status, ProbeStatus::kFailed);
  EXPECT_THAT(r.detail, HasSubstr("does not end"));
  EXPECT_THAT(r.detail, HasSubstr("past the 322 bytes read"));
  EXPECT_THAT(r.detail, HasSubstr("names no root bus"));
  EXPECT_THAT(r.detail, HasSubstr("numa_node 'x'"));
  EXPECT_THAT(bridge_bdfs(s), ElementsAre("0000:00:01.0", "0000:00:02.0", "0000:00:03.0"));
  EXPECT_THAT(bridge_at(s, "0000:00:03.0")->acs_error, HasSubstr("needs root"));
  EXPECT_EQ(bridge_at(s, "0000:00:02.0")->max_link_width, 0);  // "-4"
}

// --- the iommu probe -------------------------------------------------------------------

TEST(IommuProbe, TranslatingAmdIommu) {
  Snapshot s;
  ProbeRecord r = probe_iommu_at(RootFs(recorded("ws-4x4090-acs")), &s);
  EXPECT_EQ(r.name, "iommu");
  EXPECT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  EXPECT_THAT(r.detail, HasSubstr("units: ivhd0"));
  EXPECT_TRUE(s.iommu.known);
  EXPECT_TRUE(s.iommu.enabled);
  EXPECT_FALSE(s.iommu.passthrough);
  EXPECT_EQ(s.iommu.groups, 24);
  EXPECT_EQ(s.iommu.cmdline_flags, "amd_iommu=on");
}

TEST(IommuProbe, PassthroughAndOff) {
  Snapshot hgx;
  probe_iommu_at(RootFs(recorded("hgx-8xh100")), &hgx);
  EXPECT_TRUE(hgx.iommu.enabled);
  EXPECT_TRUE(hgx.iommu.passthrough);
  EXPECT_EQ(hgx.iommu.groups, 64);
  EXPECT_EQ(hgx.iommu.cmdline_flags, "intel_iommu=on iommu=pt");

  Snapshot ws;  // directories present but empty (with .keep): IOMMU off
  EXPECT_EQ(probe_iommu_at(RootFs(recorded("ws-4x4090")), &ws).status, ProbeStatus::kOk);
  EXPECT_TRUE(ws.iommu.known);
  EXPECT_FALSE(ws.iommu.enabled);
  EXPECT_EQ(ws.iommu.groups, 0);
  EXPECT_EQ(ws.iommu.cmdline_flags, "");
}

TEST(IommuProbe, GroupTypesOverruleTheCommandLine) {
  TempTree t;
  t.file("proc/cmdline", "ro iommu=pt\n");
  t.dir("sys/class/iommu");
  t.file("sys/kernel/iommu_groups/0/type", "DMA-FQ\n");
  t.file("sys/kernel/iommu_groups/1/type", "identity\n");
  Snapshot s;
  probe_iommu_at(RootFs(t.root()), &s);
  EXPECT_TRUE(s.iommu.enabled);
  EXPECT_EQ(s.iommu.groups, 2);
  EXPECT_FALSE(s.iommu.passthrough);  // a translating default domain

  TempTree old;  // before Linux 5.11: no type files, the command line decides
  old.file("proc/cmdline", "ro iommu=pt\n");
  old.dir("sys/kernel/iommu_groups/0");
  Snapshot o;
  probe_iommu_at(RootFs(old.root()), &o);
  EXPECT_TRUE(o.iommu.passthrough);
}

TEST(IommuProbe, MissingAndGarbage) {
  TempTree t;
  Snapshot s;
  ProbeRecord r = probe_iommu_at(RootFs(t.root()), &s);
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_FALSE(s.iommu.known);
  EXPECT_FALSE(s.iommu.enabled);

  Snapshot g;
  ProbeRecord gr = probe_iommu_at(RootFs(recorded("garbage")), &g);
  EXPECT_EQ(gr.status, ProbeStatus::kFailed);
  EXPECT_THAT(gr.detail, HasSubstr("unrecognised /sys/kernel/iommu_groups/0/type"));
  EXPECT_EQ(g.iommu.groups, 1);  // "x" is no group
}

}  // namespace
}  // namespace gd
