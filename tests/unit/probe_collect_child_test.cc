// collect_snapshot_in_child: the exporter's check round probes in a
// `gpudoctor snapshot` child; the snapshot it reads back is the one the
// probes would have made in process, and a child that fails is a failed
// "snapshot" probe record, never a crash or an empty verdict without a reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_probe.h"
#include "probe/child.h"
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"

namespace gd {
namespace {

using ::testing::HasSubstr;
using testing_fakes::fake_options;
using testing_fakes::ScopedEnv;

ProbeOptions hgx_options() {
  ProbeOptions opt = fake_options();
  opt.root = GD_SOURCE_DIR "/tests/roots/hgx-8xh100";
  return opt;
}

// The snapshot's JSON without its clock readings (taken_at, every duration_ms).
nlohmann::json without_times(const Snapshot& s) {
  std::function<void(nlohmann::json&)> strip = [&](nlohmann::json& j) {
    if (j.is_object()) {
      j.erase("taken_at");
      j.erase("duration_ms");
    }
    if (j.is_structured()) {
      for (auto& v : j) strip(v);
    }
  };
  nlohmann::json j = nlohmann::json::parse(snapshot_to_string(s));
  strip(j);
  return j;
}

std::vector<std::string> names(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& r : s.probes) out.push_back(r.name);
  return out;
}

TEST(CollectInChild, ReadsBackWhatTheProbesMakeInProcess) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", GD_SOURCE_DIR "/tests/fakes/scenarios/hgx-8xh100.json");
  const ProbeOptions opt = hgx_options();
  Snapshot child = collect_snapshot_in_child(opt, current_environment());
  Snapshot here = collect_snapshot(opt);
  EXPECT_EQ(names(child), names(here));
  ASSERT_EQ(child.nvml.gpus.size(), 8u);
  EXPECT_EQ(child.nvml.gpus.size(), here.nvml.gpus.size());
  EXPECT_EQ(child.root, opt.root);
  // Everything but the times and durations is the same.
  EXPECT_EQ(without_times(child), without_times(here));
}

TEST(CollectInChild, AFailingChildIsAFailedSnapshotRecord) {
  ProbeOptions opt = hgx_options();
  opt.self_exe = "/bin/false";
  Snapshot s = collect_snapshot_in_child(opt, current_environment());
  ASSERT_EQ(s.probes.size(), 1u);
  EXPECT_EQ(s.probes[0].name, "snapshot");
  EXPECT_EQ(s.probes[0].status, ProbeStatus::kFailed);
  EXPECT_THAT(s.probes[0].detail,
              HasSubstr("the probe child (/bin/false snapshot) failed: it exited 1"));
  EXPECT_TRUE(s.nvml.gpus.empty());
  EXPECT_EQ(s.root, opt.root);

  opt.self_exe = "/nonexistent/gpudoctor";
  s = collect_snapshot_in_child(opt, current_environment());
  ASSERT_EQ(s.probes.size(), 1u);
  EXPECT_THAT(s.probes[0].detail, HasSubstr("/nonexistent/gpudoctor"));

  // Output that is no snapshot.
  opt.self_exe = "/bin/echo";
  s = collect_snapshot_in_child(opt, current_environment());
  ASSERT_EQ(s.probes.size(), 1u);
  EXPECT_THAT(s.probes[0].detail, HasSubstr("its snapshot does not parse"));
}

TEST(CollectInChild, OptionsWithoutACommandLineFormProbeInProcess) {
  ProbeOptions opt = hgx_options();
  opt.hardware = false;
  opt.self_exe = "/bin/false";  // never run
  Snapshot s = collect_snapshot_in_child(opt, current_environment());
  EXPECT_FALSE(s.probes.empty());
  EXPECT_NE(s.probes[0].name, "snapshot");
}

}  // namespace
}  // namespace gd
