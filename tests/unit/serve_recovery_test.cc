// serve's recovery gate (serve/recovery.h): when a GPU turns unhealthy, when
// its cause counts as cleared, and that only a passing re-probe of a cleared
// GPU makes it healthy again, counted once with the time it took.
#include <gtest/gtest.h>

#include <string>

#include "serve/recovery.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

constexpr int64_t kT0 = 1'800'000'000'000;  // ms
const std::string kBus = "0000:17:00.0";

NvmlGpu gpu(uint32_t index, const std::string& bus, bool lost = false) {
  NvmlGpu g;
  g.index = index;
  g.uuid = fixtures::nv_ok<std::string>("GPU-" + bus);
  g.pci_bus_id = fixtures::nv_ok<std::string>(bus);
  if (lost) g.health.temperature_c.rc = 15;  // NVML_ERROR_GPU_IS_LOST
  return g;
}

NvmlInfo nvml(bool lost) {
  NvmlInfo n;
  n.attempted = true;
  n.init_rc = 0;
  n.gpus = {gpu(0, kBus, lost), gpu(1, "0000:2a:00.0")};
  return n;
}

Snapshot snapshot(bool lost) {
  Snapshot s;
  s.nvml = nvml(lost);
  return s;
}

Report report_failing(const std::string& id, const std::string& bus) {
  Report r;
  Finding f;
  f.id = id;
  f.severity = Severity::kFail;
  f.gpus = {bus};
  r.findings.push_back(f);
  return r;
}

ReprobeResult reprobe(bool ok, const std::string& bus = kBus) {
  ReprobeResult r;
  r.bus_id = bus;
  r.ok = ok;
  if (!ok) r.failure = "CUDA: the context failed: CUDA_ERROR_ECC_UNCORRECTABLE (214)";
  return r;
}

const GpuHealth& at(const RecoveryGate& g, const std::string& bus) {
  static std::vector<GpuHealth> all;
  all = g.gpus();
  for (const GpuHealth& h : all) {
    if (h.bus_id == bus) return h;
  }
  ADD_FAILURE() << "no GPU " << bus;
  return all.front();
}

TEST(RecoveryGate, FailingCheckThenClearedThenReprobePassed) {
  RecoveryGate gate;
  EXPECT_TRUE(gate.on_check(Report{}, snapshot(false), kT0).empty());
  EXPECT_TRUE(at(gate, kBus).healthy);

  auto due = gate.on_check(report_failing("gpu.fallen-off-bus", kBus), snapshot(true), kT0 + 1000);
  EXPECT_TRUE(due.empty());
  EXPECT_FALSE(at(gate, kBus).healthy);
  EXPECT_EQ(at(gate, kBus).cause, "gpu.fallen-off-bus");
  EXPECT_TRUE(at(gate, "0000:2a:00.0").healthy);

  // A re-probe the gate did not ask for changes nothing.
  EXPECT_FALSE(gate.on_reprobe(reprobe(true), 0, kT0 + 1500));
  EXPECT_FALSE(at(gate, kBus).healthy);

  // The check passes and NVML answers: cleared, due a re-probe, still unhealthy.
  due = gate.on_check(Report{}, snapshot(false), kT0 + 2000);
  ASSERT_EQ(due, std::vector<std::string>{kBus});
  EXPECT_FALSE(at(gate, kBus).healthy);

  EXPECT_FALSE(gate.on_reprobe(reprobe(false), 0, kT0 + 2500));
  EXPECT_FALSE(at(gate, kBus).healthy);
  EXPECT_EQ(at(gate, kBus).reprobe_failures, 1u);
  EXPECT_EQ(at(gate, kBus).reprobe_passes, 1u);  // the unasked one ran: counted
  EXPECT_NE(at(gate, kBus).last_reprobe.find("re-probe failed on 0000:17:00.0: CUDA"),
            std::string::npos);

  // Still cleared at the next check: asked again, and this time it passes.
  ASSERT_EQ(gate.on_check(Report{}, snapshot(false), kT0 + 3000).size(), 1u);
  EXPECT_TRUE(gate.on_reprobe(reprobe(true), 0, kT0 + 3500));
  const GpuHealth& h = at(gate, kBus);
  EXPECT_TRUE(h.healthy);
  EXPECT_EQ(h.recovered, 1u);
  EXPECT_EQ(h.reprobe_passes, 2u);
  EXPECT_DOUBLE_EQ(h.last_recovery_s, 2.5);
  EXPECT_TRUE(h.cause.empty());
  EXPECT_TRUE(gate.on_check(Report{}, snapshot(false), kT0 + 4000).empty());
  EXPECT_EQ(at(gate, "0000:2a:00.0").recovered, 0u);
}

TEST(RecoveryGate, NotClearedWhileNvmlStillCannotAnswer) {
  RecoveryGate gate;
  gate.on_check(report_failing("gpu.reset-required", kBus), snapshot(false), kT0);
  // No failing finding any more, but NVML's fresh answer still says lost.
  EXPECT_TRUE(gate.on_check(Report{}, snapshot(true), kT0 + 1000).empty());
  // A check that fails again on it while cleared takes the clearance back.
  ASSERT_EQ(gate.on_check(Report{}, snapshot(false), kT0 + 2000).size(), 1u);
  gate.on_check(report_failing("xid.48", kBus), snapshot(false), kT0 + 3000);
  EXPECT_FALSE(gate.on_reprobe(reprobe(true), 0, kT0 + 3500));
  EXPECT_EQ(at(gate, kBus).cause, "xid.48");
  EXPECT_EQ(at(gate, kBus).unhealthy_since_ms, kT0);
}

TEST(RecoveryGate, TheOldSamplerChildIsNotTrustedAfterARecovery) {
  RecoveryGate gate;
  gate.on_sample(nvml(false), 0, kT0);
  EXPECT_TRUE(at(gate, kBus).healthy);
  gate.on_sample(nvml(true), 0, kT0 + 500);
  EXPECT_FALSE(at(gate, kBus).healthy);
  EXPECT_EQ(at(gate, kBus).cause, "NVML: the GPU does not answer (sampler)");

  ASSERT_EQ(gate.on_check(Report{}, snapshot(false), kT0 + 1000).size(), 1u);
  EXPECT_TRUE(gate.on_reprobe(reprobe(true), 0, kT0 + 1200));
  // The child of generation 0 still holds the lost handle: ignored.
  gate.on_sample(nvml(true), 0, kT0 + 1500);
  EXPECT_TRUE(at(gate, kBus).healthy);
  // A fresh child that finds it lost again is believed.
  gate.on_sample(nvml(true), 1, kT0 + 2000);
  EXPECT_FALSE(at(gate, kBus).healthy);
}

// The old sampler child keeps its lost handle and says "lost" while a slow
// re-probe runs (an ASan build, a busy node): that re-probe cannot admit
// the GPU, but from then on only a new child's samples count, and the next
// check's re-probe does.
TEST(RecoveryGate, AStaleSampleDuringTheReprobeDoesNotStallTheRecovery) {
  RecoveryGate gate;
  gate.on_sample(nvml(true), 0, kT0);
  ASSERT_EQ(gate.on_check(Report{}, snapshot(false), kT0 + 1000).size(), 1u);
  gate.on_sample(nvml(true), 0, kT0 + 1100);  // the old child, during the re-probe
  EXPECT_FALSE(gate.on_reprobe(reprobe(true), 0, kT0 + 1500));
  EXPECT_FALSE(at(gate, kBus).healthy);
  ASSERT_EQ(gate.on_check(Report{}, snapshot(false), kT0 + 2000).size(), 1u);
  gate.on_sample(nvml(true), 0, kT0 + 2100);   // the old child again: no longer counted
  gate.on_sample(nvml(false), 1, kT0 + 2200);  // the new one
  EXPECT_TRUE(gate.on_reprobe(reprobe(true), 1, kT0 + 2500));
  EXPECT_TRUE(at(gate, kBus).healthy);
}

TEST(RecoveryGate, ALostGpuWithoutBusIdIsKnownByItsIndex) {
  RecoveryGate gate;
  gate.on_sample(nvml(false), 0, kT0);
  NvmlInfo lost = nvml(false);
  lost.gpus[0] = NvmlGpu{};
  lost.gpus[0].index = 0;
  lost.gpus[0].handle_rc = 15;
  gate.on_sample(lost, 0, kT0 + 500);
  EXPECT_FALSE(at(gate, kBus).healthy);
  EXPECT_EQ(gate.gpus().size(), 2u);
}

// --- flapping (issue 33, item 5) ------------------------------------------------------

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;

// The sampler generation, as the daemon has it: restarted after each
// re-probe that passed (admitted or held), so the next loss is believed.
uint64_t generation = 0;

// One loss and return: lost by a sample, cleared by a check 2 s later and
// re-probed 1 s after that; true when the gate admitted it.
bool lose_and_return(RecoveryGate& gate, int64_t at_ms) {
  gate.on_sample(nvml(true), generation, at_ms);
  gate.on_check(Report{}, snapshot(false), at_ms + 2 * kSecond);
  bool admitted = gate.on_reprobe(reprobe(true), generation, at_ms + 3 * kSecond);
  ++generation;
  return admitted;
}

TEST(RecoveryGate, TheThirdReturnWithinTheWindowIsHeldAsFlapping) {
  RecoveryGate gate(FlapOptions{3, 10 * kMinute, 5 * kMinute, 60 * kMinute});
  gate.on_sample(nvml(false), 0, kT0);
  EXPECT_TRUE(lose_and_return(gate, kT0));
  EXPECT_TRUE(lose_and_return(gate, kT0 + 6 * kSecond));
  EXPECT_FALSE(lose_and_return(gate, kT0 + 12 * kSecond));
  const GpuHealth& h = at(gate, kBus);
  EXPECT_FALSE(h.healthy);
  EXPECT_TRUE(h.flapping);
  EXPECT_EQ(h.flaps, 1u);
  EXPECT_EQ(h.recovered, 2u);
  EXPECT_EQ(h.hold_ms, 5 * kMinute);
  EXPECT_EQ(h.held_until_ms, kT0 + 15 * kSecond + 5 * kMinute);
  EXPECT_EQ(h.cause, "flapping: back 3 times within 10m; held 5m without a loss");
  // The other GPU is untouched.
  EXPECT_TRUE(at(gate, "0000:2a:00.0").healthy);
}

TEST(RecoveryGate, ReturnsOutsideTheWindowDoNotCount) {
  RecoveryGate gate(FlapOptions{3, 10 * kMinute, 5 * kMinute, 60 * kMinute});
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(lose_and_return(gate, kT0 + i * 6 * kMinute)) << i;
  EXPECT_FALSE(at(gate, kBus).flapping);
  EXPECT_EQ(at(gate, kBus).recovered, 6u);
}

TEST(RecoveryGate, AFlappingGpuIsNotReprobedDuringItsHoldAndALossRestartsIt) {
  RecoveryGate gate(FlapOptions{3, 10 * kMinute, 5 * kMinute, 60 * kMinute});
  for (int i = 0; i < 3; ++i) lose_and_return(gate, kT0 + i * 6 * kSecond);
  const int64_t held_from = kT0 + 15 * kSecond;
  ASSERT_TRUE(at(gate, kBus).flapping);
  // Answering and no failing finding, but within the hold: no re-probe.
  EXPECT_TRUE(gate.on_check(Report{}, snapshot(false), held_from + kMinute).empty());
  EXPECT_FALSE(gate.on_reprobe(reprobe(true), 0, held_from + kMinute));
  // The sampler child of before the hold may hold the lost handle: not
  // believed, or the hold would never end.
  gate.on_sample(nvml(true), generation - 1, held_from + 2 * kMinute);
  EXPECT_EQ(at(gate, kBus).held_until_ms, held_from + 5 * kMinute);
  // Lost again at 4 min: the hold starts over from then.
  gate.on_sample(nvml(true), generation, held_from + 4 * kMinute);
  EXPECT_EQ(at(gate, kBus).held_until_ms, held_from + 9 * kMinute);
  EXPECT_EQ(at(gate, kBus).cause.rfind("flapping: ", 0), 0u) << at(gate, kBus).cause;
  // A check that finds it lost restarts it too.
  gate.on_check(Report{}, snapshot(true), held_from + 6 * kMinute);
  EXPECT_EQ(at(gate, kBus).held_until_ms, held_from + 11 * kMinute);
  EXPECT_TRUE(gate.on_check(Report{}, snapshot(false), held_from + 10 * kMinute).empty());
  // A whole hold without a loss, then a passing re-probe: admitted.
  ASSERT_EQ(gate.on_check(Report{}, snapshot(false), held_from + 11 * kMinute).size(), 1u);
  EXPECT_TRUE(gate.on_reprobe(reprobe(true), generation, held_from + 11 * kMinute + kSecond));
  const GpuHealth& h = at(gate, kBus);
  EXPECT_TRUE(h.healthy);
  EXPECT_FALSE(h.flapping);
  EXPECT_EQ(h.recovered, 3u);
  EXPECT_TRUE(h.cause.empty());
}

TEST(RecoveryGate, EachFurtherEpisodeHoldsTwiceAsLongUpToTheLongest) {
  RecoveryGate gate(FlapOptions{2, 10 * kMinute, 5 * kMinute, 15 * kMinute});
  int64_t t = kT0;
  std::vector<int64_t> holds;
  for (int episode = 0; episode < 4; ++episode) {
    EXPECT_TRUE(lose_and_return(gate, t));  // admitted: the first of two
    EXPECT_FALSE(lose_and_return(gate, t + 6 * kSecond));
    ASSERT_TRUE(at(gate, kBus).flapping);
    holds.push_back(at(gate, kBus).hold_ms);
    t = at(gate, kBus).held_until_ms;
    ASSERT_EQ(gate.on_check(Report{}, snapshot(false), t).size(), 1u);
    ASSERT_TRUE(gate.on_reprobe(reprobe(true), generation++, t));
    t += kMinute;  // lost again soon after: no calm to reset the doubling
  }
  EXPECT_EQ(holds, (std::vector<int64_t>{5 * kMinute, 10 * kMinute, 15 * kMinute, 15 * kMinute}));
  EXPECT_EQ(at(gate, kBus).flaps, 4u);
  // Healthy for the longest hold: the next episode holds the first hold again.
  t += 15 * kMinute;
  EXPECT_TRUE(lose_and_return(gate, t));
  EXPECT_FALSE(lose_and_return(gate, t + 6 * kSecond));
  EXPECT_EQ(at(gate, kBus).hold_ms, 5 * kMinute);
}

TEST(RecoveryGate, ZeroReturnsNeverHolds) {
  RecoveryGate gate(FlapOptions{0, 10 * kMinute, 5 * kMinute, 60 * kMinute});
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(lose_and_return(gate, kT0 + i * 6 * kSecond));
  EXPECT_EQ(at(gate, kBus).flaps, 0u);
}

}  // namespace
}  // namespace gd
