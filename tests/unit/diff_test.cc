// gpudoctor diff: grouping by value, majority and ties, node naming, and the
// comparison of whole snapshots (node, GPU and report fields).
#include "fleet/diff.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "checks/runner.h"
#include "facts/identity.h"
#include "fleet/report_input.h"
#include "report/render.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using fixtures::hgx_8xh100;
using fixtures::nv_ok;
using fixtures::nv_rc;

std::vector<std::string> names(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 1; i <= n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

// --- compare_field ---------------------------------------------------------------

TEST(DiffField, AllAgree) {
  FieldDiff f = compare_field("driver", names(3), {"550.54.15", "550.54.15", "550.54.15"});
  EXPECT_TRUE(f.same());
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.majority, 0);
  EXPECT_TRUE(f.odd_nodes().empty());
}

TEST(DiffField, MajorityAndOddOnesOut) {
  FieldDiff f = compare_field("driver", names(5), {"a", "b", "a", "c", "a"});
  EXPECT_FALSE(f.same());
  ASSERT_EQ(f.groups.size(), 3u);
  EXPECT_EQ(f.majority, 0);
  EXPECT_EQ(f.groups[0].value, "a");
  EXPECT_EQ(f.groups[0].nodes, (std::vector<std::string>{"n1", "n3", "n5"}));
  // Minorities of equal size in value order, nodes in input order.
  EXPECT_EQ(f.groups[1].value, "b");
  EXPECT_EQ(f.groups[2].value, "c");
  EXPECT_EQ(f.odd_nodes(), (std::vector<std::string>{"n2", "n4"}));
}

TEST(DiffField, TieHasNoMajority) {
  FieldDiff f = compare_field("driver", names(4), {"b", "a", "b", "a"});
  EXPECT_FALSE(f.same());
  EXPECT_EQ(f.majority, -1);
  EXPECT_TRUE(f.odd_nodes().empty());
  ASSERT_EQ(f.groups.size(), 2u);
  EXPECT_EQ(f.groups[0].value, "a");
  EXPECT_EQ(f.groups[0].nodes, (std::vector<std::string>{"n2", "n4"}));
}

TEST(DiffField, TwoNodesThatDifferHaveNoMajority) {
  FieldDiff f = compare_field("vbios", names(2), {"96.00.89.00.01", "96.00.99.00.01"});
  EXPECT_FALSE(f.same());
  EXPECT_EQ(f.majority, -1);
}

TEST(DiffField, PluralityIsNoMajority) {
  // 2 of 5 is the largest group but not more than half.
  FieldDiff f = compare_field("x", names(5), {"a", "a", "b", "c", "d"});
  EXPECT_EQ(f.groups[0].value, "a");
  EXPECT_EQ(f.majority, -1);
}

TEST(DiffField, Labels) {
  FieldDiff f = compare_field("vbios", names(2), {"a", "a"});
  f.scope = "gpu";
  f.gpu = "0000:18:00.0";
  EXPECT_EQ(f.label(), "gpu 0000:18:00.0 vbios");
  f.scope = "report";
  f.field = "xid.79";
  EXPECT_EQ(f.label(), "finding xid.79");
  f.field = "verdict";
  EXPECT_EQ(f.label(), "verdict");
}

// --- node names --------------------------------------------------------------------

TEST(DiffNames, HostnameElseFileStem) {
  EXPECT_EQ(node_names({"node-1", ""}, {"/x/a.json", "/y/b.json"}),
            (std::vector<std::string>{"node-1", "b"}));
}

TEST(DiffNames, DuplicatesGetTheirFileName) {
  EXPECT_EQ(node_names({"h", "h", "g"}, {"/x/a.json", "/y/b.json", "c.json"}),
            (std::vector<std::string>{"h (a.json)", "h (b.json)", "g"}));
  // Same file name in two directories: the path as given.
  EXPECT_EQ(node_names({"h", "h"}, {"x/a.json", "y/a.json"}),
            (std::vector<std::string>{"h (x/a.json)", "h (y/a.json)"}));
  // The same file twice.
  EXPECT_EQ(node_names({"h", "h"}, {"a.json", "a.json"}),
            (std::vector<std::string>{"h (a.json)", "h (a.json) #2"}));
}

// --- whole snapshots ------------------------------------------------------------------

struct Fleet {
  std::vector<Snapshot> snaps;
  DiffResult run() {
    std::vector<const Snapshot*> ptrs;
    std::vector<std::string> files;
    for (size_t i = 0; i < snaps.size(); ++i) {
      ptrs.push_back(&snaps[i]);
      files.push_back("node-" + std::to_string(i + 1) + ".json");
    }
    std::vector<const CheckEntry*> checks;
    for (const auto& c : all_checks()) checks.push_back(&c);
    return diff_snapshots(ptrs, files, Config{}, checks);
  }
};

Fleet hgx_fleet(int n) {
  Fleet f;
  for (int i = 1; i <= n; ++i) {
    Snapshot s = hgx_8xh100();
    s.hostname = "node-" + std::to_string(i);
    for (auto& g : s.nvml.gpus) g.vbios_version = nv_ok(std::string("96.00.89.00.01"));
    f.snaps.push_back(std::move(s));
  }
  return f;
}

const FieldDiff* field(const DiffResult& d, const std::string& label) {
  for (const auto& f : d.fields) {
    if (f.label() == label) return &f;
  }
  return nullptr;
}

std::vector<std::string> differing(const DiffResult& d) {
  std::vector<std::string> out;
  for (const auto& f : d.fields) {
    if (!f.same()) out.push_back(f.label());
  }
  return out;
}

TEST(DiffSnapshots, IdenticalNodesHaveNoDrift) {
  DiffResult d = hgx_fleet(4).run();
  EXPECT_FALSE(d.drift()) << testing::PrintToString(differing(d));
  ASSERT_NE(field(d, "driver"), nullptr);
  EXPECT_EQ(field(d, "driver")->groups[0].value, "550.54.15");
  EXPECT_EQ(field(d, "kernel_module")->groups[0].value, "open");
  EXPECT_EQ(field(d, "fabric_manager")->groups[0].value, "running 550.54.15");
  EXPECT_EQ(field(d, "gpus_by_model")->groups[0].value, "8x NVIDIA H100 80GB HBM3");
  EXPECT_EQ(field(d, "cuda_visible_devices")->groups[0].value, "unset");
  EXPECT_EQ(field(d, "gpu 0000:18:00.0 pcie_max_link")->groups[0].value, "Gen5 x16");
  EXPECT_EQ(field(d, "nvidia.DeviceFileMode")->groups[0].value, "438");
  EXPECT_NE(render_diff_text(d, {}).find("No drift"), std::string::npos);
}

TEST(DiffSnapshots, NewerDriverOnOneNode) {
  Fleet fleet = hgx_fleet(4);
  Snapshot& s = fleet.snaps[2];
  s.driver.version = "550.90.07";
  s.nvml.driver_version = nv_ok(std::string("550.90.07"));
  DiffResult d = fleet.run();
  EXPECT_TRUE(d.drift());
  const FieldDiff* f = field(d, "driver");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->groups[0].value, "550.54.15");
  EXPECT_EQ(f->odd_nodes(), (std::vector<std::string>{"node-3"}));
  std::string text = render_diff_text(d, {});
  EXPECT_NE(text.find("driver: 550.54.15 on 3 nodes; node-3 has 550.90.07\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  node-3: driver, driver_library"), std::string::npos) << text;
}

TEST(DiffSnapshots, VbiosOfOneGpu) {
  Fleet fleet = hgx_fleet(3);
  fleet.snaps[1].nvml.gpus[3].vbios_version = nv_ok(std::string("96.00.99.00.01"));
  DiffResult d = fleet.run();
  const FieldDiff* f = field(d, "gpu 0000:5d:00.0 vbios");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->odd_nodes(), (std::vector<std::string>{"node-2"}));
  // The node-level summary joins the distinct versions.
  EXPECT_EQ(field(d, "vbios")->groups[1].value, "96.00.89.00.01,96.00.99.00.01");
  // Other GPUs agree.
  EXPECT_TRUE(field(d, "gpu 0000:18:00.0 vbios")->same());
}

TEST(DiffSnapshots, FailingNodeAmongPassingOnes) {
  Fleet fleet = hgx_fleet(3);
  Snapshot& s = fleet.snaps[0];
  s.services[0].running = false;
  s.services[0].pids.clear();
  for (auto& g : s.nvml.gpus) g.fabric_state = nv_ok(1);  // NOT_STARTED
  fixtures::fail_cuda(s, 802);
  DiffResult d = fleet.run();
  EXPECT_EQ(field(d, "fabric_manager")->odd_nodes(), (std::vector<std::string>{"node-1"}));
  const FieldDiff* verdict = field(d, "verdict");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->odd_nodes(), (std::vector<std::string>{"node-1"}));
  EXPECT_EQ(verdict->groups[1].value, "fail");
  const FieldDiff* fm = field(d, "finding fabric-manager.not-running");
  ASSERT_NE(fm, nullptr);
  EXPECT_EQ(fm->groups[0].value, "not raised");
  EXPECT_EQ(fm->groups[1].nodes, (std::vector<std::string>{"node-1"}));
}

TEST(DiffSnapshots, AHealthyNodeIsNeverTheOddOneOut) {
  // Three of four nodes fail alike: the problem is theirs, not the healthy
  // node's, though it is the one in the minority.
  Fleet fleet = hgx_fleet(4);
  for (int i = 0; i < 3; ++i) fixtures::fail_cuda(fleet.snaps[i], 802);
  DiffResult d = fleet.run();
  const FieldDiff* verdict = field(d, "verdict");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->odd_nodes(), (std::vector<std::string>{"node-1", "node-2", "node-3"}));
  std::string text = render_diff_text(d, {});
  EXPECT_NE(text.find("verdict: fail on node-1, node-2, node-3; ok on node-4\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nProblems:\n  node-1: verdict"), std::string::npos) << text;
  EXPECT_EQ(text.find("  node-4:"), std::string::npos) << text;
  EXPECT_EQ(text.find("Odd ones out"), std::string::npos) << text;
}

TEST(DiffSnapshots, OneChangeOnEveryGpuIsOneLine) {
  Fleet fleet = hgx_fleet(3);
  for (auto& s : fleet.snaps) {
    for (auto& g : s.nvml.gpus) g.health.power_limit_mw = nv_ok(uint32_t{700000});
  }
  for (auto& g : fleet.snaps[1].nvml.gpus) g.health.power_limit_mw = nv_ok(uint32_t{600000});
  DiffResult d = fleet.run();
  std::string text = render_diff_text(d, {});
  EXPECT_NE(text.find("8 GPUs power_limit: \"700 W\" on 2 nodes; node-2 has \"600 W\"\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("gpu 0000:18:00.0 power_limit"), std::string::npos) << text;
  EXPECT_NE(text.find("  node-2: 8 GPUs power_limit"), std::string::npos) << text;
  // The JSON keeps one field per GPU.
  EXPECT_FALSE(field(d, "gpu 0000:db:00.0 power_limit")->same());
}

TEST(DiffReports, ReportsReadBackCompareLikeSnapshots) {
  // Two nodes' /report.json: one healthy, one failing; diffed from the
  // reports alone (no snapshot, no checks run again).
  Fleet fleet = hgx_fleet(2);
  fixtures::fail_cuda(fleet.snaps[1], 802);
  std::vector<const CheckEntry*> checks;
  for (const auto& c : all_checks()) checks.push_back(&c);
  std::vector<ReportInput> inputs;
  for (const Snapshot& s : fleet.snaps) {
    Report r = run_checks(s, Config{}, checks);
    r.snapshot = &s;
    auto in = report_input_from_json(nlohmann::json::parse(render_json(r)));
    ASSERT_TRUE(in.ok()) << in.error();
    EXPECT_EQ(in->report.verdict, r.verdict);
    EXPECT_EQ(in->snapshot.nvml.gpus.size(), 8u);
    inputs.push_back(std::move(*in));
  }
  std::vector<const Snapshot*> snaps = {&inputs[0].snapshot, &inputs[1].snapshot};
  std::vector<const Report*> reports = {&inputs[0].report, &inputs[1].report};
  DiffResult d = diff_snapshots(snaps, {"a.json", "b.json"}, Config{}, {}, reports);
  EXPECT_EQ(d.nodes[0].name, "node-1");
  EXPECT_EQ(field(d, "verdict")->odd_nodes(), (std::vector<std::string>{"node-2"}));
  EXPECT_TRUE(field(d, "gpu 0000:18:00.0 model")->same());
  EXPECT_FALSE(report_input_from_json(nlohmann::json::parse(R"({"schema":"x"})")).ok());
  EXPECT_FALSE(report_input_from_json(
                   nlohmann::json::parse(R"({"schema":"gpudoctor.report/v1","findings":[7]})"))
                   .ok());
}

TEST(DiffSnapshots, StrayVisibleDevicesOnTwoOfFour) {
  Fleet fleet = hgx_fleet(4);
  fleet.snaps[0].env.vars["CUDA_VISIBLE_DEVICES"] = "0,1";
  fleet.snaps[3].env.vars["CUDA_VISIBLE_DEVICES"] = "0,1";
  DiffResult d = fleet.run();
  const FieldDiff* f = field(d, "cuda_visible_devices");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->majority, -1);  // 2 against 2
  std::string text = render_diff_text(d, {});
  EXPECT_NE(text.find("cuda_visible_devices: no majority: 0,1 on node-1, node-4; unset on "
                      "node-2, node-3\n"),
            std::string::npos)
      << text;
}

TEST(DiffSnapshots, MissingFieldsAreUnknownNotEqual) {
  Fleet fleet = hgx_fleet(3);
  // NVML failed on node-2: no VBIOS, no power limit; and its driver
  // parameters list one entry fewer (another driver branch).
  Snapshot& s = fleet.snaps[1];
  s.nvml.gpus.clear();
  s.nvml.init_rc = 9;
  s.nvml.driver_version = nv_rc<std::string>(-1);
  s.nvml.cuda_driver_version = nv_rc<int>(-1);
  s.driver.params.erase("DeviceFileMode");
  DiffResult d = fleet.run();
  EXPECT_EQ(field(d, "vbios")->groups[1].value, "unknown");
  EXPECT_EQ(field(d, "cuda")->odd_nodes(), (std::vector<std::string>{"node-2"}));
  EXPECT_EQ(field(d, "gpu 0000:18:00.0 vbios")->groups[1].value, "unknown");
  // The model still comes from the driver's own /proc information.
  EXPECT_TRUE(field(d, "gpu 0000:18:00.0 model")->same());
  EXPECT_EQ(field(d, "nvidia.DeviceFileMode")->groups[1].value, "absent");
  // A snapshot the driver probe never saw: its parameters are unknown.
  fleet.snaps[1].unobserved = {"driver"};
  d = fleet.run();
  EXPECT_EQ(field(d, "nvidia.DeviceFileMode")->groups[1].value, "unknown");
  EXPECT_EQ(field(d, "nvidia_uvm")->groups[1].value, "unknown");
}

TEST(DiffSnapshots, GpuMissingOnOneNode) {
  Fleet fleet = hgx_fleet(3);
  Snapshot& s = fleet.snaps[2];
  std::erase_if(s.pci, [](const PciDevice& d) { return d.bdf == "0000:db:00.0"; });
  s.nvml.gpus.pop_back();
  DiffResult d = fleet.run();
  const FieldDiff* present = field(d, "gpu 0000:db:00.0 present");
  ASSERT_NE(present, nullptr);
  EXPECT_EQ(present->odd_nodes(), (std::vector<std::string>{"node-3"}));
  EXPECT_EQ(field(d, "gpu_count")->groups[1].value, "7");
  // Its other fields compare the nodes that have it: no noise.
  EXPECT_TRUE(field(d, "gpu 0000:db:00.0 vbios")->same());
  EXPECT_EQ(field(d, "gpu 0000:18:00.0 present"), nullptr);
}

TEST(DiffSnapshots, OtherBoardLayoutMatchesByBusOrder) {
  Fleet fleet = hgx_fleet(2);
  for (auto& d : fleet.snaps[1].pci) {
    if (d.bdf == "0000:18:00.0") d.bdf = "0000:19:00.0";
  }
  fleet.snaps[1].nvml.gpus[0].pci_bus_id = nv_ok(std::string("0000:19:00.0"));
  DiffResult d = fleet.run();
  const FieldDiff* bus = field(d, "gpu #0 bus_id");
  ASSERT_NE(bus, nullptr);
  EXPECT_FALSE(bus->same());
  EXPECT_TRUE(field(d, "gpu #0 vbios")->same());
}

TEST(DiffSnapshots, PcieMaxLinkOfOneGpu) {
  Fleet fleet = hgx_fleet(3);
  for (auto& d : fleet.snaps[0].pci) {
    if (d.bdf == "0000:9a:00.0") d.max_link_speed_gts = 16;
  }
  DiffResult d = fleet.run();
  const FieldDiff* f = field(d, "gpu 0000:9a:00.0 pcie_max_link");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->groups[1].value, "Gen4 x16");
}

TEST(DiffSnapshots, JsonSchema) {
  Fleet fleet = hgx_fleet(3);
  fleet.snaps[2].driver.version = "550.90.07";
  auto j = nlohmann::json::parse(render_diff_json(fleet.run()));
  EXPECT_EQ(j["schema"], "gpudoctor.diff/v1");
  EXPECT_EQ(j["drift"], true);
  ASSERT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["nodes"][0]["name"], "node-1");
  EXPECT_EQ(j["nodes"][0]["file"], "node-1.json");
  EXPECT_EQ(j["odd_nodes"]["node-3"][0], "driver");
  bool found = false;
  for (const auto& f : j["fields"]) {
    if (f["field"] != "driver") continue;
    found = true;
    EXPECT_EQ(f["majority"], "550.54.15");
    EXPECT_EQ(f["same"], false);
    EXPECT_EQ(f["odd_nodes"], nlohmann::json::array({"node-3"}));
  }
  EXPECT_TRUE(found);
}

// --- identity -----------------------------------------------------------------------

TEST(Identity, LabelFieldsStayTheSevenOfTheInfoSeries) {
  auto fields = identity_fields(node_identity(hgx_8xh100()));
  std::vector<std::string> keys;
  for (const auto& [k, v] : fields) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"driver", "cuda", "gpu_model", "gpu_count", "vbios",
                                            "fabric_manager", "cuda_visible_devices"}));
}

TEST(Identity, DriftFields) {
  Snapshot s = hgx_8xh100();
  s.nvml.gpus[2].persistence_mode = nv_ok(0);
  s.env.vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  NodeIdentity id = node_identity(s);
  EXPECT_EQ(id.persistence_mode, "on 7/8");
  EXPECT_EQ(id.nvidia_uvm, "loaded");
  EXPECT_EQ(id.persistenced, "running");
  EXPECT_EQ(id.cuda_device_order, "PCI_BUS_ID");
  EXPECT_EQ(id.cuda_version, "12.4");
  EXPECT_EQ(id.driver_library, "550.54.15");
  fixtures::remove_module(s, "nvidia_uvm");
  s.driver.open_kernel_module = false;
  id = node_identity(s);
  EXPECT_EQ(id.nvidia_uvm, "not loaded");
  EXPECT_EQ(id.kernel_module, "proprietary");
}

}  // namespace
}  // namespace gd
