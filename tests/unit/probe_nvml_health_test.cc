// The NVML probe's health readings and GPU-pair topology end to end: the
// real probe child (this build's gpudoctor, re-executed) loads the fake
// libnvidia-ml.so.1 (tests/fakes/fake_nvml_health.cc) driven by a scenario
// file, and its answer comes back through the JSON protocol.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "fake_probe.h"
#include "probe/probe.h"
#include "test_util.h"

namespace gd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kNotSupported = 3;
constexpr int kGpuIsLost = 15;

using testing_fakes::fake_options;
using testing_fakes::ScopedEnv;
using testing_fakes::TempScenario;

NvmlInfo probe_file(const std::string& path, double deadline_s = 10) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", path);
  Snapshot s;
  probe_hardware(fake_options(deadline_s), &s);
  return s.nvml;
}

NvmlInfo probe(const std::string& scenario) {
  return probe_file(GD_SOURCE_DIR "/tests/fakes/scenarios/" + scenario + ".json");
}

// A value read with SUCCESS.
template <class T>
::testing::AssertionResult is(const NvmlValue<T>& v, const T& want) {
  if (v.rc != 0) return ::testing::AssertionFailure() << "rc " << v.rc;
  if (!(v.value == want)) return ::testing::AssertionFailure() << "value " << v.value;
  return ::testing::AssertionSuccess();
}

const NvmlTopoPair* pair(const NvmlInfo& n, uint32_t a, uint32_t b) {
  for (const auto& p : n.topology) {
    if (p.a == a && p.b == b) return &p;
  }
  return nullptr;
}

// --- the healthy recorded machines ---------------------------------------------

TEST(ProbeNvmlHealth, GeForceWorkstationSupportedAndNotSupported) {
  NvmlInfo n = probe("ws-4x4090");
  ASSERT_EQ(n.child_error, "");
  ASSERT_EQ(n.gpus.size(), 4u);
  const NvmlHealth& h = n.gpus[0].health;
  EXPECT_TRUE(is(h.temperature_c, 36));
  EXPECT_TRUE(is(h.temp_shutdown_c, 95u));
  EXPECT_TRUE(is(h.temp_slowdown_c, 92u));
  EXPECT_TRUE(is(h.temp_gpu_max_c, 90u));
  EXPECT_EQ(h.temp_mem_max_c.rc, kNotSupported);
  EXPECT_EQ(h.memory_temperature_c.rc, kNotSupported);  // GDDR6X: the field entry fails
  EXPECT_TRUE(is(h.power_usage_mw, 21840u));
  EXPECT_TRUE(is(h.power_limit_mw, 450000u));
  EXPECT_TRUE(is(h.power_max_limit_mw, 600000u));
  EXPECT_TRUE(is(h.sm_clock_mhz, 210u));
  EXPECT_TRUE(is(h.mem_clock_mhz, 405u));
  EXPECT_TRUE(is(h.max_mem_clock_mhz, 10501u));
  EXPECT_TRUE(is(h.clock_event_reasons, uint64_t{1}));  // GpuIdle
  EXPECT_TRUE(is(h.pstate, 8));
  EXPECT_TRUE(is(h.utilization_gpu_pct, 0u));
  EXPECT_TRUE(is(h.utilization_memory_pct, 0u));
  EXPECT_TRUE(is(h.fan_speed_pct, 30u));
  EXPECT_TRUE(is(h.pcie_link_gen, 1u));  // idle: Gen1
  EXPECT_TRUE(is(h.pcie_link_gen_max, 4u));
  EXPECT_TRUE(is(h.pcie_link_width, 16u));
  EXPECT_TRUE(is(h.pcie_link_width_max, 16u));
  EXPECT_TRUE(is(h.pcie_replay_count, 0u));
  // No ECC, page retirement, row remapping or NVLink on a GeForce.
  for (int rc :
       {h.ecc_mode_current.rc, h.ecc_mode_pending.rc, h.ecc_corrected_volatile.rc,
        h.ecc_uncorrected_volatile.rc, h.ecc_corrected_aggregate.rc, h.ecc_uncorrected_aggregate.rc,
        h.retired_pages_sbe.rc, h.retired_pages_dbe.rc, h.retired_pages_pending.rc,
        h.remapped_rows_correctable.rc, h.remapped_rows_uncorrectable.rc, h.remap_pending.rc,
        h.remap_failure.rc, h.nvlinks.rc}) {
    EXPECT_EQ(rc, kNotSupported);
  }
  EXPECT_TRUE(h.nvlinks.value.empty());
  EXPECT_TRUE(is(n.gpus[2].health.temperature_c, 41));
  EXPECT_TRUE(is(n.gpus[2].health.fan_speed_pct, 32u));
}

TEST(ProbeNvmlHealth, GeForceWorkstationTopologyByNumaNode) {
  NvmlInfo n = probe("ws-4x4090");
  ASSERT_EQ(n.topology.size(), 6u);  // every pair a < b
  for (const auto& p : n.topology) EXPECT_LT(p.a, p.b);
  // 01 and 21 on node 0, 41 and 61 on node 1, each on a root bus of its own.
  EXPECT_TRUE(is(pair(n, 0, 1)->level, 40));
  EXPECT_TRUE(is(pair(n, 2, 3)->level, 40));
  EXPECT_TRUE(is(pair(n, 0, 2)->level, 50));
  EXPECT_TRUE(is(pair(n, 1, 3)->level, 50));
}

TEST(ProbeNvmlHealth, HgxNvLinksToTheFourNvSwitches) {
  NvmlInfo n = probe("hgx-8xh100");
  ASSERT_EQ(n.child_error, "");
  ASSERT_EQ(n.gpus.size(), 8u);
  for (const auto& g : n.gpus) {
    SCOPED_TRACE(g.pci_bus_id.value);
    const NvmlHealth& h = g.health;
    EXPECT_EQ(h.nvlinks.rc, 0);
    ASSERT_EQ(h.nvlinks.value.size(), 18u);  // link 18: INVALID_ARGUMENT ends the walk
    std::map<std::string, int> per_switch;
    for (uint32_t l = 0; l < 18; ++l) {
      const NvmlNvLink& link = h.nvlinks.value[l];
      EXPECT_EQ(link.link, l);
      EXPECT_TRUE(is(link.active, 1));
      EXPECT_EQ(link.remote_bus_id.rc, 0);
      ++per_switch[link.remote_bus_id.value];
    }
    EXPECT_EQ(
        per_switch,
        (std::map<std::string, int>{
            {"0000:05:00.0", 5}, {"0000:06:00.0", 4}, {"0000:07:00.0", 4}, {"0000:08:00.0", 5}}));
    EXPECT_TRUE(is(h.ecc_mode_current, 1));
    EXPECT_TRUE(is(h.ecc_uncorrected_volatile, uint64_t{0}));
    EXPECT_TRUE(is(h.remap_pending, 0));
    EXPECT_TRUE(is(h.remap_failure, 0));
    EXPECT_EQ(h.retired_pages_sbe.rc, kNotSupported);  // Hopper remaps rows instead
    EXPECT_EQ(h.fan_speed_pct.rc, kNotSupported);      // passive SXM board
    EXPECT_TRUE(is(h.pcie_link_gen, 5u));
    EXPECT_TRUE(is(h.pcie_link_width, 16u));
    EXPECT_TRUE(is(h.temp_mem_max_c, 95u));
    EXPECT_TRUE(is(h.power_limit_mw, 700000u));
  }
  EXPECT_TRUE(is(n.gpus[0].health.memory_temperature_c, 39));
  EXPECT_TRUE(is(n.gpus[4].health.temperature_c, 34));
  ASSERT_EQ(n.topology.size(), 28u);
  EXPECT_TRUE(is(pair(n, 0, 3)->level, 40));
  EXPECT_TRUE(is(pair(n, 3, 4)->level, 50));
}

// --- the unit-test node: one GPU each for what can go wrong ---------------------

class NvmlHealthNode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { node_ = new NvmlInfo(probe("nvml-health")); }
  static void TearDownTestSuite() { delete node_; }
  const NvmlHealth& health(size_t i) { return node_->gpus.at(i).health; }
  static NvmlInfo* node_;
};
NvmlInfo* NvmlHealthNode::node_ = nullptr;

TEST_F(NvmlHealthNode, AllGpusRead) {
  ASSERT_EQ(node_->child_error, "");
  ASSERT_EQ(node_->gpus.size(), 4u);
  EXPECT_EQ(node_->gpus[0].name.value, "Tesla V100-PCIE-32GB");
  EXPECT_EQ(node_->gpus[3].pci_bus_id.value, "0000:ca:00.0");
}

TEST_F(NvmlHealthNode, RetiredPagesCountedThroughInsufficientSize) {
  const NvmlHealth& h = health(0);
  EXPECT_TRUE(is(h.retired_pages_sbe, 2u));
  EXPECT_TRUE(is(h.retired_pages_dbe, 1u));
  EXPECT_TRUE(is(h.retired_pages_pending, 1));
  EXPECT_EQ(h.remap_pending.rc, kNotSupported);  // "remapped_rows": null drops the default
  EXPECT_TRUE(is(h.ecc_corrected_aggregate, uint64_t{12}));
  EXPECT_TRUE(is(h.ecc_uncorrected_aggregate, uint64_t{1}));
  EXPECT_TRUE(is(h.ecc_uncorrected_volatile, uint64_t{0}));
  EXPECT_TRUE(is(h.pcie_link_gen_max, 3u));
  EXPECT_TRUE(is(h.pcie_link_width_max, 16u));  // the default's, merged under the GPU's
  EXPECT_EQ(health(1).retired_pages_sbe.rc, kNotSupported);  // Ampere remaps rows instead
}

TEST_F(NvmlHealthNode, RemapPending) {
  const NvmlHealth& h = health(1);
  EXPECT_TRUE(is(h.remap_pending, 1));
  EXPECT_TRUE(is(h.remap_failure, 0));
  EXPECT_TRUE(is(h.remapped_rows_uncorrectable, 1u));
  EXPECT_TRUE(is(h.remapped_rows_correctable, 0u));
  EXPECT_TRUE(is(h.ecc_uncorrected_volatile, uint64_t{1}));
  EXPECT_TRUE(is(h.ecc_corrected_volatile, uint64_t{3}));
  EXPECT_TRUE(is(h.ecc_mode_current, 1));
  EXPECT_TRUE(is(h.ecc_mode_pending, 1));
  EXPECT_TRUE(is(health(2).remap_pending, 0));
}

TEST_F(NvmlHealthNode, X4LinkInAnX16Slot) {
  const NvmlHealth& h = health(2);
  EXPECT_TRUE(is(h.pcie_link_width, 4u));
  EXPECT_TRUE(is(h.pcie_link_width_max, 16u));
  EXPECT_TRUE(is(h.pcie_link_gen, 4u));
  EXPECT_TRUE(is(h.pcie_link_gen_max, 4u));
  EXPECT_TRUE(is(h.pcie_replay_count, 37u));
}

TEST_F(NvmlHealthNode, InjectedErrorOnOneCallLeavesTheOthers) {
  const NvmlHealth& h = health(2);
  EXPECT_EQ(h.power_usage_mw.rc, kGpuIsLost);
  EXPECT_TRUE(is(h.power_limit_mw, 300000u));
  EXPECT_TRUE(is(h.temperature_c, 33));
  EXPECT_TRUE(is(health(3).power_usage_mw, 298500u));  // only GPU 2 was told to fail
}

TEST_F(NvmlHealthNode, HotGpuOverItsSlowdownThreshold) {
  const NvmlHealth& h = health(3);
  EXPECT_TRUE(is(h.temperature_c, 91));
  EXPECT_TRUE(is(h.temp_slowdown_c, 89u));
  EXPECT_TRUE(is(h.temp_shutdown_c, 92u));
  EXPECT_TRUE(is(h.memory_temperature_c, 97));
  EXPECT_TRUE(is(h.temp_mem_max_c, 95u));
  // HwSlowdown 0x8 | SwThermalSlowdown 0x20 | HwThermalSlowdown 0x40.
  EXPECT_TRUE(is(h.clock_event_reasons, uint64_t{0x68}));
  EXPECT_TRUE(is(h.sm_clock_mhz, 1005u));
  EXPECT_TRUE(is(h.utilization_gpu_pct, 100u));
  EXPECT_TRUE(is(h.utilization_memory_pct, 46u));
  EXPECT_TRUE(is(h.pstate, 0));
}

TEST_F(NvmlHealthNode, NvLinkBridgesActiveAndInactiveLinks) {
  const NvmlHealth& h = health(3);
  EXPECT_EQ(h.nvlinks.rc, 0);
  ASSERT_EQ(h.nvlinks.value.size(), 12u);
  for (uint32_t l = 0; l < 12; ++l) {
    const NvmlNvLink& link = h.nvlinks.value[l];
    SCOPED_TRACE(l);
    if (l < 4) {
      EXPECT_TRUE(is(link.active, 1));
      EXPECT_TRUE(is(link.remote_bus_id, std::string("0000:b1:00.0")));  // the other A100
    } else {
      EXPECT_TRUE(is(link.active, 0));
      EXPECT_EQ(link.remote_bus_id.rc, -1);  // an inactive link's peer is not asked
    }
  }
  EXPECT_EQ(health(0).nvlinks.rc, kNotSupported);
}

TEST_F(NvmlHealthNode, TopologyListedPairsAndTheNumaRule) {
  ASSERT_EQ(node_->topology.size(), 6u);
  EXPECT_TRUE(is(pair(*node_, 0, 1)->level, 20));  // listed: MULTIPLE switches
  EXPECT_TRUE(is(pair(*node_, 2, 3)->level, 10));  // listed: one switch
  EXPECT_TRUE(is(pair(*node_, 0, 2)->level, 50));  // NUMA 0 and 1: SYSTEM
  EXPECT_TRUE(is(pair(*node_, 1, 3)->level, 50));
}

// --- failures ------------------------------------------------------------------

constexpr const char* kTwoGpus = R"("gpus": [
  {"bus_id": "0000:01:00.0", "name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-00000000-0000-0000-0000-000000000001"},
  {"bus_id": "0000:21:00.0", "name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-00000000-0000-0000-0000-000000000021"}])";

TEST(ProbeNvmlHealth, HangInAHealthCallKeepsTheIdentity) {
  TempScenario sc(std::string("{") + kTwoGpus + R"(, "hang": ["nvmlDeviceGetPowerUsage"]})");
  NvmlInfo n = probe_file(sc.path(), 1.0 * testing_util::kTimeScale);
  EXPECT_THAT(n.child_error, StartsWith("timeout after"));
  EXPECT_THAT(n.child_error, HasSubstr("in nvmlDeviceGetPowerUsage (GPU 0)"));
  ASSERT_EQ(n.gpus.size(), 1u);  // the checkpoint after GPU 0's identity
  EXPECT_TRUE(is(n.gpus[0].name, std::string("NVIDIA GeForce RTX 4090")));
  EXPECT_TRUE(is(n.gpus[0].pci_bus_id, std::string("0000:01:00.0")));
  EXPECT_EQ(n.gpus[0].health.power_usage_mw.rc, -1);
}

// What the crashing health pass read is lost with the child; the
// identity, checkpointed before it, is not.
TEST(ProbeNvmlHealth, CrashInAHealthCallKeepsTheIdentity) {
  TempScenario sc(std::string("{") + kTwoGpus + R"(, "crash": ["nvmlDeviceGetNvLinkState"]})");
  NvmlInfo n = probe_file(sc.path());
  EXPECT_EQ(n.child_error, "crashed: SIGSEGV in nvmlDeviceGetNvLinkState (GPU 0) link 0");
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_TRUE(is(n.gpus[0].uuid, std::string("GPU-00000000-0000-0000-0000-000000000001")));
  EXPECT_EQ(n.gpus[0].health.temperature_c.rc, -1);
}

TEST(ProbeNvmlHealth, LostGpuHasNoHealthAndNoTopologyPairs) {
  NvmlInfo n = probe("gpu-lost");
  ASSERT_EQ(n.gpus.size(), 4u);
  EXPECT_EQ(n.gpus[3].handle_rc, kGpuIsLost);
  EXPECT_EQ(n.gpus[3].health.temperature_c.rc, -1);
  EXPECT_TRUE(is(n.gpus[2].health.temperature_c, 40));  // the fake's default
  ASSERT_EQ(n.topology.size(), 6u);
  EXPECT_EQ(pair(n, 2, 3)->level.rc, -1);  // no handle: never asked
  EXPECT_EQ(pair(n, 0, 1)->level.rc, 0);
}

TEST(ProbeNvmlHealth, LostAfterTheHandleEveryHealthCallSaysSo) {
  // Per-GPU errors keyed by the new functions' names reach every one of them.
  TempScenario lost(R"({"gpus": [{"bus_id": "0000:01:00.0", "errors": {
      "nvmlDeviceGetTemperature": 15, "nvmlDeviceGetTemperatureThreshold": 15,
      "nvmlDeviceGetFieldValues": 15, "nvmlDeviceGetEccMode": 15,
      "nvmlDeviceGetRetiredPages": 15, "nvmlDeviceGetRemappedRows": 15,
      "nvmlDeviceGetCurrPcieLinkWidth": 15, "nvmlDeviceGetNvLinkState": 15,
      "nvmlDeviceGetCurrentClocksEventReasons": 15}}]})");
  NvmlInfo n = probe_file(lost.path());
  ASSERT_EQ(n.gpus.size(), 1u);
  const NvmlHealth& h = n.gpus[0].health;
  for (int rc : {h.temperature_c.rc, h.memory_temperature_c.rc, h.temp_slowdown_c.rc,
                 h.ecc_mode_current.rc, h.retired_pages_sbe.rc, h.remap_pending.rc,
                 h.pcie_link_width.rc, h.nvlinks.rc, h.clock_event_reasons.rc}) {
    EXPECT_EQ(rc, kGpuIsLost);
  }
  EXPECT_TRUE(h.nvlinks.value.empty());
  EXPECT_TRUE(is(h.pcie_link_gen, 4u));  // not told to fail
}

// Checkpoints repeat all that was read, so 64 GPUs of 36 NVLinks would
// overflow the 4 MiB the parent keeps of a child's output without their
// budget, and the final result would be cut off.
TEST(ProbeNvmlHealth, SixtyFourGpusWithAllTheirLinksFitTheOutputLimit) {
  std::string links;
  for (int l = 0; l < 36; ++l) {
    links += std::string(l ? "," : "") + R"({"active": true, "remote_bus_id": "0000:05:00.0"})";
  }
  std::string gpus;
  for (int i = 0; i < 64; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
    gpus += std::string(i ? "," : "") + R"({"bus_id": ")" + bus + R"("})";
  }
  TempScenario sc(R"({"gpu_defaults": {"name": "NVIDIA B200", "health": {"nvlinks": [)" + links +
                  R"(]}}, "gpus": [)" + gpus + "]}");
  NvmlInfo n = probe_file(sc.path());
  EXPECT_EQ(n.child_error, "");
  ASSERT_EQ(n.gpus.size(), 64u);
  EXPECT_EQ(n.gpus[63].health.nvlinks.value.size(), 36u);
  EXPECT_EQ(n.topology.size(), 64u * 63 / 2);
}

TEST(ProbeNvmlHealth, NoPagesRetiredIsSuccessAndZeroAndMissingThresholdsAreNotSupported) {
  TempScenario sc(R"({"gpus": [{"bus_id": "0000:01:00.0", "health": {
      "retired_pages": {"sbe": 0, "dbe": 0}, "temp_thresholds": {"slowdown": 87}}}]})");
  NvmlInfo n = probe_file(sc.path());
  ASSERT_EQ(n.gpus.size(), 1u);
  const NvmlHealth& h = n.gpus[0].health;
  EXPECT_TRUE(is(h.retired_pages_sbe, 0u));
  EXPECT_TRUE(is(h.retired_pages_dbe, 0u));
  EXPECT_TRUE(is(h.retired_pages_pending, 0));
  EXPECT_TRUE(is(h.temp_slowdown_c, 87u));
  EXPECT_EQ(h.temp_shutdown_c.rc, kNotSupported);
  EXPECT_EQ(h.temp_gpu_max_c.rc, kNotSupported);
  EXPECT_TRUE(n.topology.empty());  // one GPU: no pairs
}

// --- the fabric struct version -------------------------------------------------

// nvmlDeviceGetGpuFabricInfoV takes v3 (nvml.h, NVML API 13) first; v2, now
// deprecated, only from a driver that rejects v3 as an unknown version.
constexpr const char* kFabricGpu = R"("gpus": [{"bus_id": "0000:18:00.0",
    "name": "NVIDIA H100 80GB HBM3", "fabric": {"state": 3, "status": 0}}])";
constexpr int kArgumentVersionMismatch = 25;

TEST(ProbeNvmlFabric, TheCurrentStructVersionAnswers) {
  TempScenario sc(std::string("{") + kFabricGpu + "}");
  NvmlInfo n = probe_file(sc.path());
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_TRUE(is(n.gpus[0].fabric_state, 3));
  EXPECT_TRUE(is(n.gpus[0].fabric_status, 0));
}

// The fake answers v3 requests alone with this error: that the probe sees
// it proves v3 was asked, and no other error than a version mismatch
// sends the probe to v2.
TEST(ProbeNvmlFabric, V3IsAskedFirstAndOnlyAVersionMismatchFallsBack) {
  TempScenario sc(std::string("{") + kFabricGpu +
                  R"j(, "errors": {"nvmlDeviceGetGpuFabricInfoV(v3)": 15}})j");
  NvmlInfo n = probe_file(sc.path());
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_EQ(n.gpus[0].fabric_state.rc, kGpuIsLost);
  EXPECT_EQ(n.gpus[0].fabric_status.rc, kGpuIsLost);
}

TEST(ProbeNvmlFabric, ADriverWithoutV3AnswersV2) {
  TempScenario sc(std::string("{") + kFabricGpu +
                  R"j(, "errors": {"nvmlDeviceGetGpuFabricInfoV(v3)": )j" +
                  std::to_string(kArgumentVersionMismatch) + "}}");
  NvmlInfo n = probe_file(sc.path());
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_TRUE(is(n.gpus[0].fabric_state, 3));
  EXPECT_TRUE(is(n.gpus[0].fabric_status, 0));
}

// A GPU without a fabric answers NOT_SUPPORTED to either version.
TEST(ProbeNvmlFabric, NoFabricIsNotSupported) {
  TempScenario sc(R"({"gpus": [{"bus_id": "0000:01:00.0"}]})");
  NvmlInfo n = probe_file(sc.path());
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_EQ(n.gpus[0].fabric_state.rc, kNotSupported);
}

}  // namespace
}  // namespace gd
