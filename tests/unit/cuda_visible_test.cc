// Tests of CUDA's device numbering and CUDA_VISIBLE_DEVICES rules as
// checks/cuda_visible.h predicts them, on the test machines of MACHINES.md.
#include "facts/cuda_visible.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const char* kU01 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001";
const char* kU21 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021";
const char* kU41 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041";

std::vector<std::string> bdfs(const std::vector<GpuIdentity>& gpus,
                              const std::vector<size_t>& positions) {
  std::vector<std::string> out;
  for (size_t p : positions) out.push_back(gpus[p].bdf);
  return out;
}

const std::vector<GpuIdentity>& ws_gpus() {
  static const std::vector<GpuIdentity> kGpus = gpu_inventory(ws_4x4090()).gpus;
  return kGpus;
}

TEST(CudaVisibleOrder, InventoryComesFromNvmlInNvidiaSmiOrder) {
  GpuInventory inv = gpu_inventory(ws_4x4090());
  EXPECT_EQ(inv.source, GpuSource::kNvml);
  ASSERT_EQ(inv.gpus.size(), 4u);
  EXPECT_EQ(inv.gpus[2].bdf, "0000:41:00.0");
  EXPECT_EQ(inv.gpus[2].smi_index, 2);
  EXPECT_EQ(inv.gpus[2].max_sm_clock_mhz, 2640u);
  EXPECT_EQ(inv.gpus[2].cc_major, 8);
  EXPECT_EQ(inv.gpus[2].cc_minor, 9);
  EXPECT_EQ(inv.gpus[2].uuid, kU41);
  EXPECT_EQ(inv.gpus[2].memory_total_bytes, 25757220864ULL);
}

TEST(CudaVisibleOrder, FastestFirstOnWs4x4090Is41_61_01_21) {
  std::vector<std::string> want = {"0000:41:00.0", "0000:61:00.0", "0000:01:00.0", "0000:21:00.0"};
  EXPECT_EQ(bdfs(ws_gpus(), fastest_first_order(ws_gpus())), want);
  EXPECT_EQ(bdfs(ws_gpus(), cuda_order(ws_gpus(), DeviceOrder::kFastestFirst)), want);
  EXPECT_TRUE(fastest_first_predictable(ws_gpus()));
}

TEST(CudaVisibleOrder, PciBusIdOrderOnWs4x4090Is01_21_41_61) {
  std::vector<std::string> want = {"0000:01:00.0", "0000:21:00.0", "0000:41:00.0", "0000:61:00.0"};
  EXPECT_EQ(bdfs(ws_gpus(), pci_bus_order(ws_gpus())), want);
  EXPECT_EQ(bdfs(ws_gpus(), cuda_order(ws_gpus(), DeviceOrder::kPciBusId)), want);
}

TEST(CudaVisibleOrder, HigherComputeCapabilityBeatsHigherClock) {
  std::vector<GpuIdentity> g(3);
  g[0] = {"0000:01:00.0", "", "", 8, 6, 2100, 0, 0, {}};  // faster clock, older arch
  g[1] = {"0000:02:00.0", "", "", 8, 9, 1800, 0, 1, {}};
  g[2] = {"0000:03:00.0", "", "", 8, 9, 1800, 0, 2, {}};  // tie: lower bus id first
  EXPECT_EQ(bdfs(g, fastest_first_order(g)),
            (std::vector<std::string>{"0000:02:00.0", "0000:03:00.0", "0000:01:00.0"}));
  g[1].max_sm_clock_mhz = 0;
  EXPECT_FALSE(fastest_first_predictable(g));
}

TEST(CudaVisibleOrder, HgxOrderIsTheSameEitherWay) {
  auto gpus = gpu_inventory(hgx_8xh100()).gpus;
  EXPECT_EQ(fastest_first_order(gpus), pci_bus_order(gpus));
}

TEST(CudaVisibleOrder, DeviceOrderValues) {
  EXPECT_FALSE(parse_device_order(nullptr).set);
  EXPECT_EQ(parse_device_order(nullptr).order, DeviceOrder::kFastestFirst);
  std::string pci = "PCI_BUS_ID";
  EXPECT_EQ(parse_device_order(&pci).order, DeviceOrder::kPciBusId);
  std::string lower = "pci_bus_id";
  DeviceOrderSetting d = parse_device_order(&lower);
  EXPECT_FALSE(d.recognized);
  EXPECT_EQ(d.order, DeviceOrder::kFastestFirst);
}

TEST(CudaVisibleOrder, DefaultOrderIsObservedFromTheUserRun) {
  Snapshot s = ws_4x4090();
  GpuInventory inv = gpu_inventory(s);
  DefaultOrder d = default_cuda_order(s, inv);
  ASSERT_TRUE(d.known);
  EXPECT_TRUE(d.observed);
  EXPECT_EQ(bdfs(inv.gpus, d.order)[0], "0000:41:00.0");
  std::vector<size_t> observed = d.order;
  s.cuda.runs.clear();
  d = default_cuda_order(s, inv);
  ASSERT_TRUE(d.known);
  EXPECT_FALSE(d.observed);
  EXPECT_EQ(d.order, observed);  // the prediction agrees with what CUDA did
  // A user run under CUDA_DEVICE_ORDER=PCI_BUS_ID says nothing about the default.
  s = ws_4x4090();
  s.env.vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  EXPECT_FALSE(default_cuda_order(s, inv).observed);
}

TEST(CudaVisibleOrder, InventoryFallsBackToCudaThenPci) {
  Snapshot s = ws_4x4090();
  s.nvml.init_rc = 9;
  GpuInventory inv = gpu_inventory(s);
  EXPECT_EQ(inv.source, GpuSource::kCudaRun);
  ASSERT_EQ(inv.gpus.size(), 4u);
  EXPECT_EQ(inv.gpus[0].bdf, "0000:01:00.0");  // re-sorted into bus order
  EXPECT_EQ(inv.gpus[2].max_sm_clock_mhz, 2640u);
  s.cuda.runs.clear();
  inv = gpu_inventory(s);
  EXPECT_EQ(inv.source, GpuSource::kPci);
  ASSERT_EQ(inv.gpus.size(), 4u);  // audio functions are not GPUs
  EXPECT_EQ(inv.gpus[3].uuid, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000061");
  EXPECT_FALSE(fastest_first_predictable(inv.gpus));
  s.pci.clear();
  EXPECT_EQ(gpu_inventory(s).source, GpuSource::kNone);
}

// --- CUDA_VISIBLE_DEVICES table ---------------------------------------------------

struct Case {
  const char* value;
  std::vector<std::string> visible;  // bus ids, CUDA 0 first
  std::optional<size_t> stop;        // entry index where CUDA stops
  bool duplicate = false;
  DeviceOrder order = DeviceOrder::kFastestFirst;
};

TEST(CudaVisibleParse, Table) {
  const std::string a = "0000:01:00.0", b = "0000:21:00.0", c = "0000:41:00.0", d = "0000:61:00.0";
  const std::vector<Case> cases = {
      // indices count in FASTEST_FIRST order: 0=41 1=61 2=01 3=21
      {"0", {c}, std::nullopt},
      {"0,1,2,3", {c, d, a, b}, std::nullopt},
      {"3,2", {b, a}, std::nullopt},
      {"0,2,-1,1", {c, a}, 2},
      {"0,2,-1,1", {a, c}, 2, false, DeviceOrder::kPciBusId},
      {"0,1,2,3", {a, b, c, d}, std::nullopt, false, DeviceOrder::kPciBusId},
      {"", {}, std::nullopt},
      {"-1", {}, 0},
      {"-1,0", {}, 0},
      {"abc", {}, 0},
      {"1,abc,2", {d}, 1},
      {"4", {}, 0},
      {"0,4,1", {c}, 1},
      {"99999999999999999999999", {}, 0},
      {"18446744073709551616", {}, 0},
      // a repeated device empties the whole list
      {"0,0", {}, 1, true},
      {"1,2,1", {}, 2, true},
      {"0,-1,0", {c}, 1},  // stops at -1 before it reaches the repeat
      // strtoul-like reading of indices
      {" 1", {d}, std::nullopt},
      {"1 ", {d}, std::nullopt},
      {"0, 1", {c, d}, std::nullopt},
      {"1gpu2,2ampere", {d, a}, std::nullopt},
      {"0x2", {c}, std::nullopt},
      {"+1", {d}, std::nullopt},
      {"-0", {c}, std::nullopt},
      {"0,,1", {c}, 1},
      {"0,1,", {c, d}, 2},
      {" ", {}, 0},
      // UUIDs: full, unique prefix, ambiguous, unknown, case, blanks
      {kU21, {b}, std::nullopt},
      {"GPU-1b9a0c7e-0d3f-4c1e-9a52-00000000004", {c}, std::nullopt},
      {"GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041,GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001",
       {c, a},
       std::nullopt},
      {"GPU-1b9a", {}, 0},
      {"GPU-deadbeef", {}, 0},
      {"GPU-1B9A0C7E-0D3F-4C1E-9A52-000000000041", {}, 0},
      {"GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041,0", {c}, 1},
      {"0,GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021", {c}, 1},
      {" GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041", {}, 0},
      {"GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041, GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021",
       {c},
       1},
      {"GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041 ", {}, 0},
      {"GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041,GPU-1b9a0c7e-0d3f-4c1e-9a52-00000000004",
       {},
       1,
       true},
  };
  for (const auto& t : cases) {
    std::string v = t.value;
    CvdResult r = parse_cuda_visible_devices(&v, ws_gpus(), t.order);
    SCOPED_TRACE("CUDA_VISIBLE_DEVICES=\"" + v + "\" order " + device_order_name(t.order));
    EXPECT_TRUE(r.set);
    EXPECT_TRUE(r.inventory_known);
    EXPECT_EQ(bdfs(ws_gpus(), r.visible), t.visible);
    EXPECT_EQ(r.unverified_visible, 0u);
    EXPECT_EQ(r.stop, t.stop);
    EXPECT_EQ(r.duplicate, t.duplicate);
  }
}

TEST(CudaVisibleParse, UnsetShowsEveryGpuInCudaOrder) {
  CvdResult r = parse_cuda_visible_devices(nullptr, ws_gpus(), DeviceOrder::kFastestFirst);
  EXPECT_FALSE(r.set);
  EXPECT_EQ(r.visible_count(), 4u);
  EXPECT_EQ(ws_gpus()[r.visible[0]].bdf, "0000:41:00.0");
}

TEST(CudaVisibleParse, EntriesAfterTheStopSayWhatTheyWouldHaveSelected) {
  std::string v = "0,2,-1,1";
  CvdResult r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
  ASSERT_EQ(r.entries.size(), 4u);
  EXPECT_EQ(r.entries[2].state, CvdState::kInvalid);
  EXPECT_NE(r.entries[2].reason.find("negative"), std::string::npos);
  EXPECT_EQ(r.entries[3].state, CvdState::kIgnored);
  ASSERT_TRUE(r.entries[3].gpu.has_value());
  EXPECT_EQ(ws_gpus()[*r.entries[3].gpu].bdf, "0000:61:00.0");
  EXPECT_EQ(r.hidden_valid_entries(), std::vector<size_t>{3});
  // Trailing garbage hides nothing valid.
  v = "0,1,abc";
  r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
  EXPECT_TRUE(r.hidden_valid_entries().empty());
  // A repeat throws away the entries before it too.
  v = "0,1,0";
  r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.hidden_valid_entries(), (std::vector<size_t>{0, 1}));
}

TEST(CudaVisibleParse, ReasonsNameTheProblem) {
  auto reason = [](const std::string& value, size_t entry) {
    std::string v = value;
    CvdResult r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
    return entry < r.entries.size() ? r.entries[entry].reason : std::string("<none>");
  };
  EXPECT_NE(reason("4", 0).find("past the last GPU"), std::string::npos);
  EXPECT_NE(reason("4", 0).find("0-3"), std::string::npos);
  EXPECT_NE(reason("GPU-1b9a", 0).find("ambiguous"), std::string::npos);
  EXPECT_NE(reason("GPU-deadbeef", 0).find("no GPU's UUID starts with"), std::string::npos);
  EXPECT_NE(reason("GPU-1B9A0C7E-0D3F-4C1E-9A52-000000000041", 0).find("letter case"),
            std::string::npos);
  EXPECT_NE(reason(" GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041", 0).find("blank"),
            std::string::npos);
  EXPECT_NE(reason("0,1,", 2).find("empty entry"), std::string::npos);
  EXPECT_NE(reason("abc", 0).find("not a number"), std::string::npos);
}

TEST(CudaVisibleParse, LenientIndexReadingsAreNoted) {
  std::string v = "1gpu";
  CvdResult r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_TRUE(r.entries[0].note_is_junk);
  EXPECT_NE(r.entries[0].note.find("index 1"), std::string::npos);
  // A UUID without its GPU- prefix is read as the index in its leading digits.
  v = "1b9a0c7e-0d3f-4c1e-9a52-000000000041";
  r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
  EXPECT_EQ(bdfs(ws_gpus(), r.visible), std::vector<std::string>{"0000:61:00.0"});
  EXPECT_TRUE(r.entries[0].note_is_junk);
  v = " 1 ";
  r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
  EXPECT_FALSE(r.entries[0].note_is_junk);
  EXPECT_NE(r.entries[0].note.find("blanks"), std::string::npos);
}

TEST(CudaVisibleParse, MigIds) {
  Snapshot s = hgx_8xh100();
  s.nvml.gpus[0].mig_mode_current = nv_ok(1);
  auto gpus = gpu_inventory(s).gpus;
  std::string v = "MIG-GPU-5f2e81a4-7b6c-4d8e-8f10-000000000018/1/0";
  CvdResult r = parse_cuda_visible_devices(&v, gpus, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.visible_count(), 1u);
  EXPECT_EQ(r.entries[0].state, CvdState::kUnverified);
  ASSERT_TRUE(r.entries[0].gpu.has_value());
  EXPECT_EQ(gpus[*r.entries[0].gpu].bdf, "0000:18:00.0");
  // GPU 2a has MIG off.
  v = "MIG-GPU-5f2e81a4-7b6c-4d8e-8f10-00000000002a/1/0";
  r = parse_cuda_visible_devices(&v, gpus, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.visible_count(), 0u);
  EXPECT_NE(r.entries[0].reason.find("does not have MIG mode enabled"), std::string::npos);
  // Malformed.
  v = "MIG-GPU-5f2e81a4-7b6c-4d8e-8f10-000000000018/x";
  r = parse_cuda_visible_devices(&v, gpus, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.stop, std::optional<size_t>(0));
  // MIG device UUIDs cannot be checked; only one instance is enumerated.
  v = "MIG-3b1d5e0a-1111-2222-3333-444444444444,MIG-3b1d5e0a-1111-2222-3333-555555555555";
  r = parse_cuda_visible_devices(&v, gpus, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.visible_count(), 1u);
  EXPECT_EQ(r.entries[1].state, CvdState::kIgnored);
  EXPECT_NE(r.entries[1].reason.find("one MIG instance"), std::string::npos);
  // No GPU has MIG on: a MIG id cannot select anything.
  auto plain = gpu_inventory(hgx_8xh100()).gpus;
  v = "MIG-3b1d5e0a-1111-2222-3333-444444444444";
  r = parse_cuda_visible_devices(&v, plain, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.visible_count(), 0u);
  EXPECT_EQ(r.stop, std::optional<size_t>(0));
}

TEST(CudaVisibleParse, WithoutAnInventoryOnlySyntaxIsJudged) {
  std::vector<GpuIdentity> none;
  std::string v = "0,1";
  CvdResult r = parse_cuda_visible_devices(&v, none, DeviceOrder::kFastestFirst);
  EXPECT_FALSE(r.inventory_known);
  EXPECT_EQ(r.visible_count(), 2u);
  EXPECT_EQ(r.unverified_visible, 2u);
  v = "7,7";
  r = parse_cuda_visible_devices(&v, none, DeviceOrder::kFastestFirst);
  EXPECT_TRUE(r.duplicate);
  EXPECT_EQ(r.visible_count(), 0u);
  v = "-1";
  r = parse_cuda_visible_devices(&v, none, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.visible_count(), 0u);
  v = std::string(kU01);
  r = parse_cuda_visible_devices(&v, none, DeviceOrder::kFastestFirst);
  EXPECT_EQ(r.unverified_visible, 1u);
}

TEST(CudaVisibleParse, GarbledValuesNeverCrash) {
  const std::vector<std::string> weird = {",",
                                          ",,,",
                                          "\t",
                                          "\n0",
                                          "GPU-",
                                          "MIG-",
                                          "MIG-GPU-",
                                          "MIG-GPU-/1/2",
                                          "0,0,0,0",
                                          std::string(1000, '9'),
                                          std::string("0\0"
                                                      "1",
                                                      3),
                                          "\xff\xfe",
                                          "-",
                                          "+"};
  for (const auto& v : weird) {
    CvdResult r = parse_cuda_visible_devices(&v, ws_gpus(), DeviceOrder::kFastestFirst);
    EXPECT_LE(r.visible_count(), 4u) << v;
  }
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

TEST(CudaVisibleOrder, BusIdsAreNormalized) {
  EXPECT_EQ(normalize_bdf("00000000:41:00.0"), "0000:41:00.0");
  EXPECT_EQ(normalize_bdf("0000:AB:00.0"), "0000:ab:00.0");
  EXPECT_EQ(normalize_bdf("0000:41:00.0"), "0000:41:00.0");
  EXPECT_EQ(normalize_bdf("garbage"), "garbage");
  Snapshot s = fixtures::ws_4x4090();
  for (auto& g : s.nvml.gpus) g.pci_bus_id.value = "0000" + g.pci_bus_id.value;
  GpuInventory inv = gpu_inventory(s);
  ASSERT_EQ(inv.gpus.size(), 4u);
  EXPECT_EQ(inv.gpus[2].bdf, "0000:41:00.0");
  EXPECT_TRUE(default_cuda_order(s, inv).observed);
}

}  // namespace
}  // namespace gd
