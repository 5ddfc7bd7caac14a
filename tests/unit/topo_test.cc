// The topology model: PCIe path classification from hand-built PCI trees,
// NVML's levels and NVLinks, the CUDA order columns, and both renderings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "topo/render.h"
#include "topo/topology.h"

namespace gd {
namespace {

template <class T>
NvmlValue<T> ok(T v) {
  NvmlValue<T> out;
  out.value = std::move(v);
  out.rc = 0;
  return out;
}

// A machine built bridge by bridge, as the sysfs probe records it.
struct Machine {
  Snapshot s;

  Machine& bridge(const std::string& bdf, const std::string& parent,
                  const std::string& root_bus = "pci0000:00", int numa = 0) {
    PciBridge b;
    b.bdf = bdf;
    b.vendor_id = 0x1000;
    b.parent = parent;
    b.root_bus = root_bus;
    b.numa_node = numa;
    s.pci_bridges.push_back(b);
    return *this;
  }

  Machine& gpu(const std::string& bdf, const std::string& parent,
               const std::string& root_bus = "pci0000:00", int numa = 0,
               const std::string& cpus = "0-15") {
    PciDevice d;
    d.bdf = bdf;
    d.vendor_id = 0x10de;
    d.device_id = 0x2684;
    d.class_code = 0x030000;
    d.kind = PciKind::kGpu;
    d.driver = "nvidia";
    d.numa_node = numa;
    d.local_cpulist = cpus;
    d.parent = parent;
    d.root_bus = root_bus;
    d.current_link_speed_gts = 2.5;
    d.max_link_speed_gts = 16;
    d.current_link_width = 16;
    d.max_link_width = 16;
    s.pci.push_back(d);
    return *this;
  }

  Machine& nvswitch(const std::string& bdf) {
    PciDevice d;
    d.bdf = bdf;
    d.vendor_id = 0x10de;
    d.device_id = 0x22a3;
    d.class_code = 0x068000;
    d.kind = PciKind::kNvSwitch;
    s.pci.push_back(d);
    return *this;
  }

  // NVML answering for every GPU in s.pci, in bus order, with compute
  // capability 8.9 and the given max SM clocks (CUDA's default order).
  Machine& nvml(const std::vector<uint32_t>& clocks_mhz = {}) {
    s.nvml.attempted = true;
    s.nvml.init_rc = 0;
    uint32_t index = 0;
    for (const auto& d : s.pci) {
      if (d.kind != PciKind::kGpu) continue;
      NvmlGpu g;
      g.index = index;
      g.pci_bus_id = ok(d.bdf);
      g.uuid = ok("GPU-" + d.bdf);
      g.name = ok(std::string("NVIDIA GeForce RTX 4090"));
      g.cc_major = ok(8);
      g.cc_minor = ok(9);
      g.max_sm_clock_mhz = ok(index < clocks_mhz.size() ? clocks_mhz[index] : 2520u);
      g.health.nvlinks.rc = 3;  // NOT_SUPPORTED: PCIe GPUs
      s.nvml.gpus.push_back(g);
      ++index;
    }
    return *this;
  }

  NvmlGpu& nvml_gpu(uint32_t index) { return s.nvml.gpus.at(index); }

  Machine& level(uint32_t a, uint32_t b, int level) {
    NvmlTopoPair p;
    p.a = a;
    p.b = b;
    p.level = ok(level);
    s.nvml.topology.push_back(p);
    return *this;
  }

  PathKind path(const std::string& a, const std::string& b, std::string* why = nullptr) const {
    return sysfs_pcie_path(s, a, b, why);
  }
};

void add_links(NvmlGpu* g, const std::string& remote, int n, bool active = true) {
  g->health.nvlinks.rc = 0;
  for (int i = 0; i < n; ++i) {
    NvmlNvLink l;
    l.link = static_cast<uint32_t>(g->health.nvlinks.value.size());
    l.active = ok(active ? 1 : 0);
    l.remote_bus_id = ok(remote);
    g->health.nvlinks.value.push_back(l);
  }
}

// A root port 00:01.0 with a switch below it (upstream port 01:00.0,
// downstream ports 02:00.0 and 02:01.0) and a GPU on each downstream port.
Machine one_switch() {
  Machine m;
  m.bridge("0000:00:01.0", "")
      .bridge("0000:01:00.0", "0000:00:01.0")
      .bridge("0000:02:00.0", "0000:01:00.0")
      .bridge("0000:02:01.0", "0000:01:00.0")
      .gpu("0000:03:00.0", "0000:02:00.0")
      .gpu("0000:04:00.0", "0000:02:01.0");
  return m;
}

// --- PCIe path from sysfs ---------------------------------------------------------

TEST(TopoSysfsPath, SameSwitchIsPix) {
  Machine m = one_switch();
  EXPECT_EQ(m.path("0000:03:00.0", "0000:04:00.0"), PathKind::kPix);
  EXPECT_EQ(m.path("0000:04:00.0", "0000:03:00.0"), PathKind::kPix);
}

TEST(TopoSysfsPath, SameFunctionIsSelf) {
  Machine m = one_switch();
  EXPECT_EQ(m.path("0000:03:00.0", "0000:03:00.0"), PathKind::kSelf);
}

TEST(TopoSysfsPath, NestedSwitchesArePxb) {
  // A second switch on the first one's downstream port 02:02.0: upstream
  // port 05:00.0, downstream ports 06:00.0 and 06:01.0, GPUs 07 and 08.
  Machine m = one_switch();
  m.bridge("0000:02:02.0", "0000:01:00.0")
      .bridge("0000:05:00.0", "0000:02:02.0")
      .bridge("0000:06:00.0", "0000:05:00.0")
      .bridge("0000:06:01.0", "0000:05:00.0")
      .gpu("0000:07:00.0", "0000:06:00.0")
      .gpu("0000:08:00.0", "0000:06:01.0");
  EXPECT_EQ(m.path("0000:03:00.0", "0000:07:00.0"), PathKind::kPxb);
  EXPECT_EQ(m.path("0000:08:00.0", "0000:04:00.0"), PathKind::kPxb);
  // Both behind the inner switch: one switch between them.
  EXPECT_EQ(m.path("0000:07:00.0", "0000:08:00.0"), PathKind::kPix);
}

TEST(TopoSysfsPath, SameRootBusDifferentRootPortsIsPhb) {
  Machine m;
  m.bridge("0000:00:01.0", "")
      .bridge("0000:00:03.0", "")
      .gpu("0000:01:00.0", "0000:00:01.0")
      .gpu("0000:02:00.0", "0000:00:03.0");
  EXPECT_EQ(m.path("0000:01:00.0", "0000:02:00.0"), PathKind::kPhb);
}

TEST(TopoSysfsPath, SwitchAndRootPortOnOneRootBusIsPhb) {
  Machine m = one_switch();
  m.bridge("0000:00:03.0", "").gpu("0000:10:00.0", "0000:00:03.0");
  EXPECT_EQ(m.path("0000:03:00.0", "0000:10:00.0"), PathKind::kPhb);
}

TEST(TopoSysfsPath, DifferentRootBusesOnOneNumaNodeIsNode) {
  Machine m;
  m.bridge("0000:00:01.0", "", "pci0000:00", 0)
      .bridge("0000:20:01.0", "", "pci0000:20", 0)
      .gpu("0000:01:00.0", "0000:00:01.0", "pci0000:00", 0)
      .gpu("0000:21:00.0", "0000:20:01.0", "pci0000:20", 0);
  EXPECT_EQ(m.path("0000:01:00.0", "0000:21:00.0"), PathKind::kNode);
}

TEST(TopoSysfsPath, DifferentNumaNodesIsSys) {
  Machine m;
  m.bridge("0000:00:01.0", "", "pci0000:00", 0)
      .bridge("0000:80:01.0", "", "pci0000:80", 1)
      .gpu("0000:01:00.0", "0000:00:01.0", "pci0000:00", 0, "0-15")
      .gpu("0000:81:00.0", "0000:80:01.0", "pci0000:80", 1, "16-31");
  EXPECT_EQ(m.path("0000:01:00.0", "0000:81:00.0"), PathKind::kSys);
}

TEST(TopoSysfsPath, NoNumaNodeFallsBackToLocalCpus) {
  Machine m;
  m.bridge("0000:00:01.0", "", "pci0000:00", -1)
      .bridge("0000:20:01.0", "", "pci0000:20", -1)
      .bridge("0000:40:01.0", "", "pci0000:40", -1)
      .gpu("0000:01:00.0", "0000:00:01.0", "pci0000:00", -1, "0-15")
      .gpu("0000:21:00.0", "0000:20:01.0", "pci0000:20", -1, "0-15")
      .gpu("0000:41:00.0", "0000:40:01.0", "pci0000:40", -1, "16-31");
  EXPECT_EQ(m.path("0000:01:00.0", "0000:21:00.0"), PathKind::kNode);
  EXPECT_EQ(m.path("0000:01:00.0", "0000:41:00.0"), PathKind::kSys);
}

TEST(TopoSysfsPath, MissingDataIsUnknownNotAGuess) {
  // NUMA and CPUs unknown across host bridges.
  Machine m;
  m.bridge("0000:00:01.0", "", "pci0000:00", -1)
      .bridge("0000:20:01.0", "", "pci0000:20", -1)
      .gpu("0000:01:00.0", "0000:00:01.0", "pci0000:00", -1, "")
      .gpu("0000:21:00.0", "0000:20:01.0", "pci0000:20", 0, "0-15");
  std::string why;
  EXPECT_EQ(m.path("0000:01:00.0", "0000:21:00.0", &why), PathKind::kUnknown);
  EXPECT_EQ(why, "the NUMA node of 0000:01:00.0 is not known");

  // A bridge named as a parent but not recorded: not PHB.
  Machine gap = one_switch();
  gap.s.pci_bridges.erase(gap.s.pci_bridges.begin() + 1);  // the upstream port 01:00.0
  EXPECT_EQ(gap.path("0000:03:00.0", "0000:04:00.0", &why), PathKind::kUnknown);
  EXPECT_EQ(why, "bridge 0000:01:00.0 above 0000:03:00.0 was not recorded");

  // No place in the tree recorded (an older snapshot).
  Machine old = one_switch();
  old.s.pci[1].root_bus.clear();
  EXPECT_EQ(old.path("0000:03:00.0", "0000:04:00.0", &why), PathKind::kUnknown);
  EXPECT_EQ(why, "the place of 0000:04:00.0 in the PCI tree was not recorded");

  // A GPU the PCI probe did not see.
  EXPECT_EQ(old.path("0000:03:00.0", "0000:99:00.0", &why), PathKind::kUnknown);
  EXPECT_EQ(why, "0000:99:00.0 is not on the PCI bus read from sysfs");
}

TEST(TopoSysfsPath, BusIdsInNvmlFormAreMatched) {
  Machine m = one_switch();
  EXPECT_EQ(m.path("00000000:03:00.0", "00000000:04:00.0"), PathKind::kPix);
}

// --- NVML levels, NVLinks, small tables ---------------------------------------

TEST(TopoNvml, LevelsMapToNvidiaSmiNames) {
  EXPECT_EQ(nvml_level_path(0), PathKind::kPix);
  EXPECT_EQ(nvml_level_path(10), PathKind::kPix);
  EXPECT_EQ(nvml_level_path(20), PathKind::kPxb);
  EXPECT_EQ(nvml_level_path(30), PathKind::kPhb);
  EXPECT_EQ(nvml_level_path(40), PathKind::kNode);
  EXPECT_EQ(nvml_level_path(50), PathKind::kSys);
  EXPECT_EQ(nvml_level_path(60), PathKind::kUnknown);
  EXPECT_EQ(path_name({PathKind::kNvLink, 18}), "NV18");
  EXPECT_EQ(path_name({PathKind::kUnknown, 0}), "?");
  EXPECT_EQ(path_name({PathKind::kSelf, 0}), "X");
}

TEST(TopoNvml, PcieGenerationFromSpeed) {
  EXPECT_EQ(pcie_gen_from_gts(2.5), 1);
  EXPECT_EQ(pcie_gen_from_gts(8), 3);
  EXPECT_EQ(pcie_gen_from_gts(16), 4);
  EXPECT_EQ(pcie_gen_from_gts(32), 5);
  EXPECT_EQ(pcie_gen_from_gts(0), 0);
  EXPECT_EQ(pcie_gen_from_gts(12), 0);
}

TEST(TopoNvLink, DirectLinksCountActiveOnesToThePeer) {
  Machine m = one_switch();
  m.nvml();
  add_links(&m.nvml_gpu(0), "0000:04:00.0", 4);
  add_links(&m.nvml_gpu(0), "0000:04:00.0", 2, /*active=*/false);
  add_links(&m.nvml_gpu(1), "0000:03:00.0", 4);
  EXPECT_EQ(nvlink_count(m.s, m.nvml_gpu(0), m.nvml_gpu(1)), 4);

  Topology t = build_topology(m.s);
  EXPECT_EQ(path_name(t.paths[0][1]), "NV4");
  EXPECT_EQ(path_name(t.pcie_paths[0][1]), "PIX");
}

TEST(TopoNvLink, NvSwitchConnectsEveryPairWithTheSmallerLinkCount) {
  Machine m;
  m.bridge("0000:00:01.0", "", "pci0000:00", 0)
      .bridge("0000:80:01.0", "", "pci0000:80", 1)
      .gpu("0000:01:00.0", "0000:00:01.0", "pci0000:00", 0, "0-15")
      .gpu("0000:02:00.0", "0000:00:01.0", "pci0000:00", 0, "0-15")
      .gpu("0000:81:00.0", "0000:80:01.0", "pci0000:80", 1, "16-31")
      .nvswitch("0000:05:00.0")
      .nvswitch("0000:06:00.0")
      .nvml();
  for (uint32_t g = 0; g < 3; ++g) {
    add_links(&m.nvml_gpu(g), "0000:05:00.0", 9);
    add_links(&m.nvml_gpu(g), "0000:06:00.0", 9);
  }
  // One of GPU 2's links is down.
  m.nvml_gpu(2).health.nvlinks.value[17].active = ok(0);
  EXPECT_EQ(nvlink_count(m.s, m.nvml_gpu(0), m.nvml_gpu(1)), 18);
  EXPECT_EQ(nvlink_count(m.s, m.nvml_gpu(0), m.nvml_gpu(2)), 17);

  Topology t = build_topology(m.s);
  EXPECT_EQ(path_name(t.paths[0][1]), "NV18");
  EXPECT_EQ(path_name(t.paths[2][0]), "NV17");
  EXPECT_EQ(path_name(t.pcie_paths[0][2]), "SYS");
}

TEST(TopoNvLink, LinksToAnUnknownPeerAreNotNvSwitchLinks) {
  Machine m = one_switch();
  m.nvml();
  add_links(&m.nvml_gpu(0), "0000:77:00.0", 4);  // not a GPU, not an NVSwitch
  add_links(&m.nvml_gpu(1), "0000:77:00.0", 4);
  EXPECT_EQ(nvlink_count(m.s, m.nvml_gpu(0), m.nvml_gpu(1)), 0);
}

TEST(TopoNvLink, UnknownWhenNeitherListIsKnown) {
  Machine m = one_switch();
  m.nvml();
  m.nvml_gpu(0).health.nvlinks.rc = -1;
  m.nvml_gpu(1).health.nvlinks.rc = 15;
  EXPECT_EQ(nvlink_count(m.s, m.nvml_gpu(0), m.nvml_gpu(1)), std::nullopt);
}

// --- build_topology -----------------------------------------------------------------

TEST(TopoBuild, NvmlDisagreeingWithSysfsIsShownAndNoted) {
  Machine m = one_switch();
  m.nvml().level(0, 1, 20);
  Topology t = build_topology(m.s);
  EXPECT_EQ(path_name(t.paths[0][1]), "PXB");
  EXPECT_EQ(path_name(t.paths[1][0]), "PXB");
  ASSERT_FALSE(t.notes.empty());
  EXPECT_EQ(t.notes.back(),
            "GPU0-GPU1 (0000:03:00.0 - 0000:04:00.0): the PCI tree in sysfs says PIX, NVML says "
            "PXB; NVML's is shown");
}

TEST(TopoBuild, NvmlAgreeingOrFillingAGapIsNotNoted) {
  Machine m = one_switch();
  m.nvml().level(0, 1, 10);
  Topology agree = build_topology(m.s);
  EXPECT_EQ(path_name(agree.paths[0][1]), "PIX");
  for (const auto& n : agree.notes) EXPECT_EQ(n.find("NVML says"), std::string::npos) << n;

  for (auto& d : m.s.pci) d.root_bus.clear();
  m.s.nvml.topology[0].level = ok(30);
  Topology fill = build_topology(m.s);
  EXPECT_EQ(path_name(fill.paths[0][1]), "PHB");
  for (const auto& n : fill.notes) EXPECT_EQ(n.find("?"), std::string::npos) << n;
}

TEST(TopoBuild, UnknownPathSaysWhy) {
  Machine m = one_switch();
  m.nvml();
  for (auto& d : m.s.pci) d.root_bus.clear();
  Topology t = build_topology(m.s);
  EXPECT_EQ(path_name(t.paths[0][1]), "?");
  ASSERT_FALSE(t.notes.empty());
  EXPECT_EQ(t.notes.back(),
            "? = not known (1 pair): NVML gave no topology; the place of 0000:03:00.0 in the "
            "PCI tree was not recorded");
}

// Four GPUs on four root buses of one NUMA node; the fastest clock last on
// the bus, so CUDA's default order differs from PCI order.
Machine four_gpus() {
  Machine m;
  for (const char* bus : {"00", "20", "40", "60"}) {
    std::string root = std::string("pci0000:") + bus;
    std::string port = std::string("0000:") + bus + ":01.0";
    std::string gpu = std::string("0000:") + bus[0] + "1:00.0";
    m.bridge(port, "", root, 0).gpu(gpu, port, root, 0, "0-31");
  }
  m.nvml({2520, 2520, 2640, 2580});
  return m;
}

TEST(TopoBuild, OrdersAndTheVisibleDevicesLine) {
  Machine m = four_gpus();
  Topology t = build_topology(m.s);
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.gpus[0].bdf, "0000:01:00.0");
  EXPECT_EQ(t.gpus[3].bdf, "0000:61:00.0");
  // FASTEST_FIRST: 41 (2640), 61 (2580), 01, 21.
  EXPECT_EQ(t.gpus[2].cuda_default, 0);
  EXPECT_EQ(t.gpus[3].cuda_default, 1);
  EXPECT_EQ(t.gpus[0].cuda_default, 2);
  EXPECT_EQ(t.gpus[1].cuda_default, 3);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.gpus[i].cuda_pci, i);
  EXPECT_TRUE(t.order_differs);
  EXPECT_FALSE(t.default_order_observed);
  EXPECT_EQ(t.cvd1_default.bdf, "0000:61:00.0");
  EXPECT_EQ(t.cvd1_pci.bdf, "0000:21:00.0");
  EXPECT_EQ(t.order_line,
            "CUDA's default order differs from PCI order: CUDA_VISIBLE_DEVICES=1 is 0000:61:00.0 "
            "(nvidia-smi 3) by default, 0000:21:00.0 (nvidia-smi 1) with "
            "CUDA_DEVICE_ORDER=PCI_BUS_ID");
  EXPECT_EQ(path_name(t.paths[0][3]), "NODE");
  EXPECT_EQ(t.gpus[0].numa_node, 0);
  EXPECT_EQ(t.gpus[0].cpus, "0-31");
  EXPECT_EQ(t.gpus[0].link.gen, 1);
  EXPECT_EQ(t.gpus[0].link.gen_max, 4);
  EXPECT_EQ(t.gpus[0].link.width_max, 16);
  EXPECT_EQ(t.gpus[0].link.source, "sysfs");
}

TEST(TopoBuild, SameOrderHasNoLine) {
  Machine m = four_gpus();
  for (auto& g : m.s.nvml.gpus) g.max_sm_clock_mhz = ok(2520u);
  Topology t = build_topology(m.s);
  EXPECT_FALSE(t.order_differs);
  EXPECT_EQ(t.order_line, "");
  EXPECT_EQ(t.cvd1_default.bdf, "0000:21:00.0");
}

TEST(TopoBuild, UnknownDefaultOrderIsAQuestionMark) {
  Machine m = four_gpus();
  for (auto& g : m.s.nvml.gpus) g.max_sm_clock_mhz.rc = 3;
  Topology t = build_topology(m.s);
  EXPECT_FALSE(t.default_order_known);
  EXPECT_EQ(t.gpus[0].cuda_default, std::nullopt);
  EXPECT_EQ(t.gpus[0].cuda_pci, 0);
  ASSERT_FALSE(t.notes.empty());
  EXPECT_EQ(t.notes[0].rfind("CUDA's default order is not known: ", 0), 0u) << t.notes[0];
}

TEST(TopoBuild, LinkFromNvmlWinsOverSysfs) {
  Machine m = four_gpus();
  NvmlHealth& h = m.nvml_gpu(0).health;
  h.pcie_link_gen = ok(4u);
  h.pcie_link_gen_max = ok(4u);
  h.pcie_link_width = ok(8u);
  h.pcie_link_width_max = ok(16u);
  Topology t = build_topology(m.s);
  EXPECT_EQ(t.gpus[0].link.gen, 4);
  EXPECT_EQ(t.gpus[0].link.width, 8);
  EXPECT_EQ(t.gpus[0].link.source, "nvml");
}

TEST(TopoBuild, EnvironmentSettingsAreNoted) {
  Machine m = four_gpus();
  m.s.env.vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  Topology t = build_topology(m.s);
  bool found = false;
  for (const auto& n : t.notes) found = found || n.find("CUDA/PCI column") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(TopoBuild, NoGpu) {
  Snapshot s;
  Topology t = build_topology(s);
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_EQ(t.no_gpu, "no NVIDIA GPU found (NVML, CUDA and the PCI bus show none)");
  EXPECT_EQ(render_topology_text(t), t.no_gpu + "\n");

  Machine nouveau = one_switch();
  for (auto& d : nouveau.s.pci) d.driver = "nouveau";
  EXPECT_EQ(build_topology(nouveau.s).no_gpu,
            "no usable NVIDIA GPU: 2 on the PCI bus, none driven by the nvidia driver "
            "(gpudoctor check says why)");
}

// --- rendering ------------------------------------------------------------------------

TEST(TopoRender, TextHasTableMatrixAndLegend) {
  Machine m = four_gpus();
  m.s.pci[3].numa_node = -1;
  m.s.pci[3].local_cpulist.clear();
  std::string text = render_topology_text(build_topology(m.s));
  EXPECT_NE(text.find("4 GPUs (from NVML)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("CUDA  CUDA/PCI  SMI  BUS ID"), std::string::npos) << text;
  EXPECT_NE(text.find("Gen1 x16 / Gen4 x16"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU0  X     NODE  NODE  ?     0-31          0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU3  ?     ?     ?     X     N/A           N/A\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  PIX  = Connection traversing at most a single PCIe bridge\n"),
            std::string::npos);
  EXPECT_NE(text.find("CUDA_VISIBLE_DEVICES=1 is 0000:61:00.0"), std::string::npos);
  EXPECT_NE(text.find("Notes:\n  - "), std::string::npos);
  EXPECT_NE(text.find("  ?    = Not known from sysfs or NVML (see the notes)\n"),
            std::string::npos);
  // Without a ? in the matrix, no legend line for it.
  std::string known = render_topology_text(build_topology(four_gpus().s));
  EXPECT_EQ(known.find("?    = Not known"), std::string::npos) << known;
  for (size_t p = text.find(" \n"); p != std::string::npos; p = std::string::npos) {
    ADD_FAILURE() << "trailing blank at " << p;
  }
}

// -1 on a GPU straight on a root bus: a VM's passthrough (the H200 record),
// where nvidia-smi topo -m prints 0. Behind a root port, -1 stays N/A.
TEST(TopoRender, VmGpuHasNoNumaNode) {
  Machine m;
  m.gpu("0000:00:06.0", "", "pci0000:00", -1, "0-15");
  Topology t = build_topology(m.s);
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].numa_node, std::nullopt);
  EXPECT_EQ(t.gpus[0].numa_note, "no NUMA node (VM)");
  std::string text = render_topology_text(t);
  EXPECT_NE(text.find("GPU0  X     0-15          no NUMA node (VM)\n"), std::string::npos) << text;
  auto doc = nlohmann::json::parse(render_topology_json(t));
  EXPECT_TRUE(doc["gpus"][0]["numa_node"].is_null());
  EXPECT_EQ(doc["gpus"][0]["numa_note"], "no NUMA node (VM)");

  Machine bare = four_gpus();
  bare.s.pci[3].numa_node = -1;
  Topology b = build_topology(bare.s);
  EXPECT_EQ(b.gpus[3].numa_note, "");
  EXPECT_TRUE(nlohmann::json::parse(render_topology_json(b))["gpus"][3]["numa_note"].is_null());
}

TEST(TopoRender, JsonSchema) {
  Machine m = four_gpus();
  m.s.pci[3].numa_node = -1;
  auto doc = nlohmann::json::parse(render_topology_json(build_topology(m.s)));
  EXPECT_EQ(doc["schema"], "gpudoctor.topo/v2");
  ASSERT_EQ(doc["gpus"].size(), 4u);
  EXPECT_EQ(doc["gpus"][2]["bus_id"], "0000:41:00.0");
  EXPECT_EQ(doc["gpus"][2]["cuda_index"], 0);
  EXPECT_EQ(doc["gpus"][2]["cuda_index_pci_bus_id"], 2);
  EXPECT_EQ(doc["gpus"][2]["nvml_index"], 2);
  EXPECT_TRUE(doc["gpus"][3]["numa_node"].is_null());
  EXPECT_EQ(doc["gpus"][0]["link"]["gen_max"], 4);
  EXPECT_EQ(doc["paths"][0][0], "X");
  EXPECT_EQ(doc["paths"][0][1], "NODE");
  EXPECT_EQ(doc["paths"][3][0], "NODE");  // the CPU list still decides
  EXPECT_EQ(doc["cuda_order"]["differs_from_pci"], true);
  EXPECT_EQ(doc["cuda_order"]["visible_devices_1"]["default"]["bus_id"], "0000:61:00.0");
  EXPECT_EQ(doc["cuda_order"]["visible_devices_1"]["pci_bus_id"]["nvml_index"], 1);
  EXPECT_EQ(doc["notes"][0].get<std::string>().rfind("CUDA's default order differs", 0), 0u);
}

TEST(TopoRender, JsonWithoutGpus) {
  auto doc = nlohmann::json::parse(render_topology_json(build_topology(Snapshot{})));
  EXPECT_EQ(doc["gpus"].size(), 0u);
  EXPECT_EQ(doc["paths"].size(), 0u);
  EXPECT_EQ(doc["notes"][0], "no NVIDIA GPU found (NVML, CUDA and the PCI bus show none)");
}

}  // namespace
}  // namespace gd
