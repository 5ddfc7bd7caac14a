// run --watch's bookkeeping (job/watch.h): peaks, time throttled by reason,
// ECC and row-remap deltas, which kernel events are fatal, a lost GPU, the
// first fatal event taken once, and the summary and JSON built from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "job/watch.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using fixtures::nv_ok;

constexpr int64_t kT0 = 1'800'000'000'000;  // ms

NvmlInfo sample(int temperature_c, uint64_t reasons, uint64_t ecc_corrected, bool lost = false) {
  NvmlInfo n;
  n.attempted = true;
  n.init_rc = 0;
  NvmlGpu& g = n.gpus.emplace_back();
  g.index = 0;
  g.pci_bus_id = nv_ok<std::string>("0000:17:00.0");
  g.name = nv_ok<std::string>("NVIDIA H100 80GB HBM3");
  g.health.temperature_c = nv_ok(temperature_c);
  g.health.power_usage_mw = nv_ok<uint32_t>(500000);
  g.health.clock_event_reasons = nv_ok(reasons);
  g.health.ecc_corrected_volatile = nv_ok(ecc_corrected);
  g.health.ecc_uncorrected_volatile = nv_ok<uint64_t>(0);
  if (lost) g.health.temperature_c.rc = 15;  // NVML_ERROR_GPU_IS_LOST
  return n;
}

KernelEvent xid(int code, const std::string& message = "") {
  KernelEvent e;
  e.kind = "xid";
  e.code = code;
  e.gpu = "0000:17:00.0";
  e.message = message;
  return e;
}

TEST(JobWatch, PeaksThrottledTimeAndDeltas) {
  JobWatch w(kT0);
  w.on_sample(sample(60, 0x1, 10), true, kT0 + 1000);   // idle: not throttled
  w.on_sample(sample(85, 0x48, 10), true, kT0 + 6000);  // 5 s of HW slowdown + HW thermal
  w.on_sample(sample(70, 0x4, 13), true, kT0 + 11000);  // 5 s of SW power cap
  w.on_sample(NvmlInfo{}, false, kT0 + 16000,           // a failed sample counts nothing
              {"timeout after 2.0 s in nvmlDeviceGetTemperature (GPU 0)",
               "nvmlDeviceGetTemperature (GPU 0)", true});
  ASSERT_EQ(w.gpus().size(), 1u);
  const WatchGpu& g = w.gpus()[0];
  EXPECT_EQ(g.peak_temperature_c, 85);
  EXPECT_DOUBLE_EQ(g.peak_power_w, 500);
  EXPECT_DOUBLE_EQ(g.throttled_any_s, 10);
  EXPECT_DOUBLE_EQ(g.throttled_s.at("HW slowdown"), 5);
  EXPECT_DOUBLE_EQ(g.throttled_s.at("HW thermal slowdown"), 5);
  EXPECT_DOUBLE_EQ(g.throttled_s.at("SW power cap"), 5);
  EXPECT_EQ(g.throttled_s.count("GPU idle"), 0u);
  EXPECT_EQ(w.samples(), 4u);
  EXPECT_EQ(w.failed_samples(), 1u);
  EXPECT_FALSE(w.fatal());

  JobEnd end;
  end.command = "train.py";
  end.ended_ms = kT0 + 20000;
  end.exited = true;
  auto lines = watch_summary_lines(w, end);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "job summary: train.py exited with 0 after 20 s; 1 GPU watched, 4 NVML samples (1 "
            "failed)");
  EXPECT_EQ(lines[1],
            "  GPU 0000:17:00.0: peak 85 °C, power peak 500 W mean 500 W, throttled 10 s (HW "
            "slowdown 5 s, HW thermal slowdown 5 s, SW power cap 5 s), ECC +3 corrected +0 "
            "uncorrected");
  // Which GPU and which call, not only how many.
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "  NVML hung in nvmlDeviceGetTemperature on 0000:17:00.0 (1 sample)"),
            lines.end());
  auto j = nlohmann::json::parse(watch_json(w, &end, "train.py"));
  EXPECT_EQ(j["schema"], "gpudoctor.watch/v1");
  EXPECT_EQ(j["sample_failures"][0]["gpu"], "0000:17:00.0");
  EXPECT_EQ(j["sample_failures"][0]["call"], "nvmlDeviceGetTemperature");
  EXPECT_EQ(j["sample_failures"][0]["samples"], 1);
  EXPECT_EQ(j["gpus"][0]["ecc_corrected_delta"], 3);
  EXPECT_EQ(j["ended"]["exit_code"], 0);
  EXPECT_TRUE(j["fatal"].is_null());
}

TEST(JobWatch, WhichEventsAreFatal) {
  JobWatch w(kT0);
  w.on_event(xid(13), kT0 + 1);  // an application's own error
  w.on_event(xid(154, "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)"),
             kT0 + 2);
  EXPECT_FALSE(w.fatal());
  KernelEvent module;
  module.kind = "nvrm";
  module.type = "api-mismatch";
  w.on_event(module, kT0 + 3);  // not about the job: not kept
  EXPECT_EQ(w.events().size(), 2u);

  w.on_event(xid(48), kT0 + 4);  // double-bit ECC: reset the GPU
  ASSERT_TRUE(w.fatal());
  EXPECT_EQ(w.fatal()->gpu, "0000:17:00.0");
  EXPECT_NE(w.fatal()->what.find("Xid 48 on 0000:17:00.0"), std::string::npos);
  auto first = w.take_new_fatal();
  ASSERT_TRUE(first);
  EXPECT_FALSE(w.take_new_fatal());  // once

  w.on_event(xid(79), kT0 + 5);  // later fatal events follow from the first
  EXPECT_NE(w.fatal()->what.find("Xid 48"), std::string::npos);
  EXPECT_TRUE(w.events().back().fatal);

  KernelEvent sxid;
  sxid.kind = "sxid";
  sxid.code = 11009;  // the guide's fatal class
  JobWatch s(kT0);
  s.on_event(sxid, kT0 + 1);
  EXPECT_TRUE(s.fatal());
  KernelEvent aer;
  aer.kind = "aer";
  aer.type = "corrected";
  JobWatch a(kT0);
  a.on_event(aer, kT0 + 1);
  EXPECT_FALSE(a.fatal());
}

TEST(JobWatch, ALostGpuIsFatalOnceAndNamed) {
  JobWatch w(kT0);
  w.on_sample(sample(60, 0x1, 0), true, kT0 + 1000);
  w.on_sample(sample(60, 0x1, 0, true), true, kT0 + 2000);
  w.on_sample(sample(60, 0x1, 0, true), true, kT0 + 3000);
  ASSERT_TRUE(w.fatal());
  EXPECT_EQ(w.fatal()->what, "GPU 0000:17:00.0 lost: NVML no longer answers for it (GPU_IS_LOST)");
  EXPECT_TRUE(w.gpus()[0].lost);
  EXPECT_EQ(w.gpus()[0].lost_at_ms, kT0 + 2000);
  auto lines = watch_fatal_lines(*w.take_new_fatal(), "train.py", true);
  EXPECT_EQ(lines.back(),
            "stopping train.py (--stop-on-fatal): SIGTERM to its process group and every "
            "process it started, SIGKILL 10 s later");
  auto j = nlohmann::json::parse(watch_json(w, nullptr, "train.py"));
  EXPECT_TRUE(j["ended"].is_null());  // written while the job still runs
  EXPECT_TRUE(j["gpu_lost"]);
}

TEST(JobWatch, FailedSamplesByKindCallAndGpu) {
  JobWatch w(kT0);
  SampleFailure hung{"timeout after 1.0 s in nvmlDeviceGetPowerUsage (GPU 2)",
                     "nvmlDeviceGetPowerUsage (GPU 2)", true};
  // Before any good sample: the GPU is known by NVML's index only.
  w.on_sample(NvmlInfo{}, false, kT0 + 1000, hung);
  EXPECT_EQ(watch_failure_text(w, w.failures()[0]),
            "NVML hung in nvmlDeviceGetPowerUsage on NVML GPU 2");
  for (int i = 0; i < 6; ++i) w.on_sample(NvmlInfo{}, false, kT0 + 2000 + i, hung);
  w.on_sample(NvmlInfo{}, false, kT0 + 9000,
              {"crashed: SIGSEGV in nvmlDeviceGetTemperature (GPU 0)",
               "nvmlDeviceGetTemperature (GPU 0)", false});
  w.on_sample(NvmlInfo{}, false, kT0 + 9500,
              {"nvmlInit_v2 returned 9 (DRIVER_NOT_LOADED)", "", false});
  w.on_sample(sample(60, 0x1, 0), true, kT0 + 10000);  // names GPU 0
  auto f = w.failures();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].samples, 7u);  // most frequent first
  EXPECT_EQ(f[0].first_ms, kT0 + 1000);
  EXPECT_EQ(watch_failure_text(w, f[1]),
            "NVML crashed (SIGSEGV) in nvmlDeviceGetTemperature on "
            "0000:17:00.0");
  EXPECT_EQ(watch_failure_text(w, f[2]),
            "NVML sample failed: nvmlInit_v2 returned 9 (DRIVER_NOT_LOADED)");
  JobEnd end;
  end.command = "train.py";
  end.ended_ms = kT0 + 11000;
  end.exited = true;
  auto lines = watch_summary_lines(w, end);
  EXPECT_EQ(lines[0],
            "job summary: train.py exited with 0 after 11 s; 1 GPU watched, 10 NVML samples (9 "
            "failed)");
  EXPECT_EQ(lines[2], "  NVML hung in nvmlDeviceGetPowerUsage on NVML GPU 2 (7 samples)");
}

TEST(JobWatch, TheJobsOtherProcessesInTheSummary) {
  JobWatch w(kT0);
  JobEnd end;
  end.command = "sh";
  end.ended_ms = kT0 + 1000;
  end.exited = true;
  auto quiet = watch_summary_lines(w, end);
  EXPECT_EQ(quiet.back(), "  no GPU was lost");  // nothing left behind: nothing said
  end.others = {{101, "sleep", true, false, false},
                {102, "python3", true, true, false},
                {103, "python3", true, true, true}};
  auto lines = watch_summary_lines(w, end);
  std::vector<std::string> tail(lines.end() - 5, lines.end());
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "  3 processes of the job outlived sh: SIGTERM to each, SIGKILL 10 s later "
                      "to those still running:",
                      "    pid 101 (sleep): ended after SIGTERM",
                      "    pid 102 (python3): killed by SIGKILL",
                      "    pid 103 (python3): still running after SIGKILL (stuck in the kernel?)",
                      "  1 process of the job still running"}));
  end.stopped_by_us = true;
  end.exited = false;
  end.signal = 15;
  end.others = {{101, "sh", false, false, false}, {102, "sleep", true, true, false}};
  lines = watch_summary_lines(w, end);
  tail.assign(lines.end() - 4, lines.end());
  EXPECT_EQ(tail, (std::vector<std::string>{
                      "  --stop-on-fatal: SIGTERM to 2 other processes of the job, SIGKILL 10 s "
                      "later to those still running:",
                      "    pid 101 (sh): ended after SIGTERM",
                      "    pid 102 (sleep), outlived sh: killed by SIGKILL",
                      "  no process of the job is left"}));
  auto j = nlohmann::json::parse(watch_json(w, &end, "sh"));
  EXPECT_EQ(j["ended"]["other_processes"][1]["pid"], 102);
  EXPECT_TRUE(j["ended"]["other_processes"][1]["sigkill"]);
  EXPECT_TRUE(j["ended"]["other_processes_error"].is_null());
}

}  // namespace
}  // namespace gd
