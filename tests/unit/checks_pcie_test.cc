// Tests of pcie.link-degraded and p2p.blocked on hand-built snapshots: the
// fixture machines with the PCI tree above their GPUs added here (root
// ports, a PLX switch) and their link and ACS values varied one at a time.
#include <gtest/gtest.h>

#include <cstdio>

#include "checks/checks.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

PciBridge port(std::string bdf, std::string parent, std::string root_bus, int max_width = 16,
               double max_gts = 16.0, uint16_t acs_ctrl = 0) {
  PciBridge b;
  b.bdf = std::move(bdf);
  b.vendor_id = 0x1022;
  b.device_id = 0x1483;
  b.parent = std::move(parent);
  b.root_bus = std::move(root_bus);
  b.max_link_width = b.current_link_width = max_width;
  b.max_link_speed_gts = b.current_link_speed_gts = max_gts;
  b.acs_known = b.acs_capable = true;
  b.acs_ctrl = acs_ctrl;
  return b;
}

PciBridge* bridge_of(Snapshot& s, std::string_view bdf) {
  for (auto& b : s.pci_bridges) {
    if (b.bdf == bdf) return &b;
  }
  ADD_FAILURE() << "no bridge " << bdf;
  return &s.pci_bridges.front();
}

// ws-4x4090 as recorded: each GPU on its own root port 0000:X0:01.1 of root
// bus pci0000:X0; root ports ACS-capable with the given control value.
Snapshot ws_tree(uint16_t root_port_acs = 0) {
  Snapshot s = ws_4x4090();
  for (auto& d : s.pci) {
    std::string rb = d.bdf.substr(0, 5) + d.bdf.substr(5, 1) + "0";  // 0000:41 -> 0000:40
    d.root_bus = "pci" + rb;
    d.parent = rb + ":01.1";
    s.pci_bridges.push_back(port(d.parent, "", d.root_bus, 16, 16.0, root_port_acs));
  }
  std::sort(s.pci_bridges.begin(), s.pci_bridges.end(),
            [](const PciBridge& a, const PciBridge& b) { return a.bdf < b.bdf; });
  return s;
}

// The four GPUs behind one PLX switch (x8 downstream ports) on root port
// 0000:00:01.1; ACS control `down_acs` on every downstream port.
Snapshot plx_tree(uint16_t down_acs, bool iommu_on = true, bool passthrough = false) {
  Snapshot s = ws_4x4090();
  s.pci_bridges.push_back(port("0000:00:01.1", "", "pci0000:00"));
  PciBridge up = port("0000:10:00.0", "0000:00:01.1", "pci0000:00", 16, 8.0);
  up.vendor_id = 0x10b5;
  up.device_id = 0x8747;
  up.acs_capable = false;
  s.pci_bridges.push_back(up);
  int i = 0;
  for (auto& d : s.pci) {
    if (d.kind != PciKind::kGpu) continue;
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "0000:11:%02x.0", 8 + i++);
    PciBridge down = port(bdf, up.bdf, "pci0000:00", 8, 8.0, down_acs);
    down.vendor_id = 0x10b5;
    down.device_id = 0x8747;
    d.root_bus = "pci0000:00";
    d.parent = down.bdf;
    d.current_link_width = 8;
    s.pci_bridges.push_back(down);
  }
  s.iommu.known = true;
  s.iommu.enabled = iommu_on;
  s.iommu.groups = iommu_on ? 24 : 0;
  s.iommu.passthrough = passthrough;
  s.iommu.cmdline_flags = passthrough ? "amd_iommu=on iommu=pt" : "amd_iommu=on";
  return s;
}

void nvml_link(Snapshot& s, std::string_view bdf, uint32_t gen, uint32_t gen_max, uint32_t width,
               uint32_t width_max, uint32_t util_pct) {
  for (auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.value != bdf) continue;
    g.health.pcie_link_gen = nv_ok(gen);
    g.health.pcie_link_gen_max = nv_ok(gen_max);
    g.health.pcie_link_width = nv_ok(width);
    g.health.pcie_link_width_max = nv_ok(width_max);
    g.health.utilization_gpu_pct = nv_ok(util_pct);
    return;
  }
  ADD_FAILURE() << "no NVML GPU " << bdf;
}

void idle_everywhere(Snapshot& s) {
  for (auto& d : s.pci) d.current_link_speed_gts = 2.5;
  for (auto& g : s.nvml.gpus) nvml_link(s, g.pci_bus_id.value, 1, 4, 16, 16, 0);
}

// --- pcie.link-degraded ------------------------------------------------------------

TEST(PcieLinkCheck, HealthyWorkstation) {
  Finding f = only(check_pcie_link(ws_tree(), kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_NE(f.summary.find("4 GPU links at full width"), std::string::npos) << f.summary;
}

TEST(PcieLinkCheck, NarrowWidthWarnsFromSysfsAlone) {
  Snapshot s = ws_tree();
  pci_at(s, "0000:21:00.0")->current_link_width = 4;
  Finding f = only(check_pcie_link(s, kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:21:00.0"});
  EXPECT_NE(f.summary.find("x4 of x16"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f, "current_link_width 4, max_link_width 16"));
  EXPECT_TRUE(evidence_has(f, "port above it 0000:20:01.1 [1022:1483]: max_link_width 16"));
  EXPECT_TRUE(remedy_has(f, "sudo lspci -vv -s 0000:21:00.0"));
}

TEST(PcieLinkCheck, NarrowWidthFromNvmlCounts) {
  // sysfs says x16, NVML says x4: the narrower counts.
  Snapshot s = ws_tree();
  nvml_link(s, "0000:61:00.0", 4, 4, 4, 16, 0);
  Finding f = only(check_pcie_link(s, kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f, "NVML: width x4 of x16"));
  // And NVML alone, with no sysfs link values.
  Snapshot n = ws_tree();
  for (auto& d : n.pci) d.current_link_width = d.max_link_width = 0;
  nvml_link(n, "0000:01:00.0", 4, 4, 8, 16, 0);
  EXPECT_EQ(only(check_pcie_link(n, kConfig), "pcie.link-degraded").severity, Severity::kWarn);
}

TEST(PcieLinkCheck, NarrowSlotIsInfo) {
  Snapshot s = plx_tree(0);  // GPUs x16-capable at x8 in x8 switch ports
  Finding f = only(check_pcie_link(s, kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.gpus.size(), 4u);
  EXPECT_NE(f.summary.find("x8 (the GPU can do x16)"), std::string::npos) << f.summary;
  // Trained below even the slot: a warning.
  pci_at(s, "0000:41:00.0")->current_link_width = 4;
  auto fs = check_pcie_link(s, kConfig);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].severity, Severity::kWarn);
  EXPECT_NE(fs[0].summary.find("x4 of x8"), std::string::npos) << fs[0].summary;
  EXPECT_EQ(fs[1].severity, Severity::kInfo);
  EXPECT_EQ(fs[1].gpus.size(), 3u);
}

TEST(PcieLinkCheck, IdleGpusLowerTheirSpeed) {
  Snapshot s = ws_tree();
  idle_everywhere(s);
  Finding f = only(check_pcie_link(s, kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_NE(f.summary.find("4 idle GPUs run below full link speed, which is normal power saving"),
            std::string::npos)
      << f.summary;
}

TEST(PcieLinkCheck, LowSpeedUnderLoadWarns) {
  Snapshot s = ws_tree();
  idle_everywhere(s);
  pci_at(s, "0000:41:00.0")->current_link_speed_gts = 8.0;
  nvml_link(s, "0000:41:00.0", 3, 4, 16, 16, 97);
  Finding f = only(check_pcie_link(s, kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_NE(f.summary.find("8.0 GT/s of 16.0 GT/s while 97 % busy"), std::string::npos)
      << f.summary;
  // Below the configured load it is idle power saving again.
  nvml_link(s, "0000:41:00.0", 3, 4, 16, 16, 49);
  EXPECT_EQ(only(check_pcie_link(s, kConfig), "pcie.link-degraded").severity, Severity::kOk);
  Config low = kConfig;
  low.pcie_load_utilization_pct = 40;
  EXPECT_EQ(only(check_pcie_link(s, low), "pcie.link-degraded").severity, Severity::kWarn);
}

TEST(PcieLinkCheck, LowSpeedWithoutNvmlIsNotAnAlarm) {
  Snapshot s = ws_tree();
  for (auto& d : s.pci) d.current_link_speed_gts = 2.5;
  Finding f = only(check_pcie_link(s, kConfig), "pcie.link-degraded");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_NE(f.summary.find("cannot be told from idle power saving"), std::string::npos)
      << f.summary;
}

TEST(PcieLinkCheck, NotApplicable) {
  EXPECT_EQ(only(check_pcie_link(no_nvidia_machine(), kConfig), "pcie.link-degraded").severity,
            Severity::kNotApplicable);
  Snapshot s = ws_tree();
  for (auto& d : s.pci) {
    d.current_link_width = d.max_link_width = 0;
    d.current_link_speed_gts = d.max_link_speed_gts = 0;
  }
  EXPECT_EQ(only(check_pcie_link(s, kConfig), "pcie.link-degraded").severity,
            Severity::kNotApplicable);
}

// --- p2p.blocked ---------------------------------------------------------------------

TEST(P2pCheck, RedirectInASwitchWithTranslatingIommuFails) {
  Finding f = only(check_p2p(plx_tree(0x1d), kConfig), "p2p.blocked");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus.size(), 4u);
  EXPECT_NE(f.summary.find("on 4 bridges"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f,
                           "0000:11:08.0 [10b5:8747]: ACS Control 0x001d (SV RR CR UF), "
                           "redirect bits 0x000c"));
  EXPECT_TRUE(evidence_has(f,
                           "IOMMU: on, translating DMA (24 groups); kernel IOMMU flags: "
                           "amd_iommu=on"));
  EXPECT_TRUE(remedy_has(f, "sudo setpci -s 0000:11:0b.0 ECAP_ACS+0x6.w=0000"));
  EXPECT_TRUE(remedy_has(f, "sudo setpci -s 0000:11:08.0 ECAP_ACS+0x6.w=0000"));
  EXPECT_TRUE(remedy_has(f, "pci=disable_acs_redir=0000:11:08.0;"));
  EXPECT_TRUE(remedy_has(f, "iommu=pt"));
  EXPECT_TRUE(remedy_has(f, "NCCL_P2P_DISABLE=1"));
}

TEST(P2pCheck, PassthroughOrNoIommuWarns) {
  Finding pt = only(check_p2p(plx_tree(0x1d, true, true), kConfig), "p2p.blocked");
  EXPECT_EQ(pt.severity, Severity::kWarn);
  EXPECT_NE(pt.summary.find("passthrough"), std::string::npos) << pt.summary;
  EXPECT_FALSE(remedy_has(pt, "add iommu=pt"));
  Finding off = only(check_p2p(plx_tree(0x1d, false), kConfig), "p2p.blocked");
  EXPECT_EQ(off.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(off, "IOMMU: off"));
}

TEST(P2pCheck, OnlyRedirectBitsCount) {
  // SV and UF (0x11): validation and upstream forwarding, no redirect.
  EXPECT_EQ(only(check_p2p(plx_tree(0x11), kConfig), "p2p.blocked").severity, Severity::kOk);
  // Egress Control alone redirects.
  EXPECT_EQ(only(check_p2p(plx_tree(0x20), kConfig), "p2p.blocked").severity, Severity::kFail);
  // One downstream port with RR is enough for the pairs through it.
  Snapshot s = plx_tree(0);
  bridge_of(s, "0000:11:09.0")->acs_ctrl = 0x04;
  Finding f = only(check_p2p(s, kConfig), "p2p.blocked");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("on 1 bridge:"), std::string::npos) << f.summary;
  EXPECT_EQ(f.gpus.size(), 4u);  // 0000:21 paired with each of the others
}

TEST(P2pCheck, AcsAboveTheSwitchOrAtRootPortsDoesNotCount) {
  Snapshot s = plx_tree(0);
  bridge_of(s, "0000:00:01.1")->acs_ctrl = 0x1d;  // above the common upstream port
  Finding f = only(check_p2p(s, kConfig), "p2p.blocked");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_NE(f.summary.find("6 GPU pairs that share a PCIe switch"), std::string::npos) << f.summary;
  // Each GPU on its own root port: they meet at the root complex anyway.
  Snapshot ws = ws_tree(0x1d);
  ws.iommu = s.iommu;
  Finding w = only(check_p2p(ws, kConfig), "p2p.blocked");
  EXPECT_EQ(w.severity, Severity::kOk);
  EXPECT_NE(w.summary.find("6 GPU pairs meet at the root complex"), std::string::npos) << w.summary;
}

TEST(P2pCheck, UnreadableAcsAsksForRoot) {
  Snapshot s = plx_tree(0);
  for (auto& b : s.pci_bridges) {
    b.acs_known = b.acs_capable = false;
    b.acs_error = "config space past 64 bytes needs root (read 64 bytes)";
  }
  Finding f = only(check_p2p(s, kConfig), "p2p.blocked");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_NE(f.summary.find("sudo gpudoctor check"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("probably"), std::string::npos) << f.summary;  // IOMMU on
  EXPECT_TRUE(evidence_has(f, "0000:11:08.0: config space past 64 bytes needs root"));
  s.iommu.enabled = false;
  Finding off = only(check_p2p(s, kConfig), "p2p.blocked");
  EXPECT_EQ(off.summary.find("probably"), std::string::npos) << off.summary;
}

TEST(P2pCheck, NvlinkCarriesThePeerTraffic) {
  Snapshot s = plx_tree(0x1d);
  PciDevice nvswitch;
  nvswitch.bdf = "0000:05:00.0";
  nvswitch.kind = PciKind::kNvSwitch;
  s.pci.push_back(nvswitch);
  Finding f = only(check_p2p(s, kConfig), "p2p.blocked");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_NE(f.summary.find("NVLink"), std::string::npos) << f.summary;
}

TEST(P2pCheck, NotApplicableAndLoopsEnd) {
  Snapshot one = plx_tree(0x1d);
  one.pci.resize(1);
  EXPECT_EQ(only(check_p2p(one, kConfig), "p2p.blocked").severity, Severity::kNotApplicable);
  // A snapshot without the PCI tree (an older gpudoctor's, or explain).
  EXPECT_EQ(only(check_p2p(ws_4x4090(), kConfig), "p2p.blocked").severity,
            Severity::kNotApplicable);
  // A bridge that names itself as parent must not hang the check.
  Snapshot loop = plx_tree(0x1d);
  bridge_of(loop, "0000:00:01.1")->parent = "0000:10:00.0";
  EXPECT_NE(only(check_p2p(loop, kConfig), "p2p.blocked").severity, Severity::kOk);
}

}  // namespace
}  // namespace gd
