// serve's NVML sampler against the real child (this build's gpudoctor as
// `__probe-nvml-sampler`) and the fake NVML: values arrive, a hang is killed
// within the deadline and the next call starts a fresh child, a crash is
// replaced, a failed nvmlInit is retried, no child is left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "probe/sampler.h"
#include "test_util.h"

namespace gd {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A temporary directory with a scenario file, removed at the end.
class SamplerTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }

  // Two GPUs with distinct temperatures and power; `extra` is spliced into
  // the top-level object (fault keys).
  SamplerOptions options(const std::string& extra = "", double deadline_s = 5) {
    std::string scenario = R"({
      "driver_version": "550.54.15",
      "gpu_defaults": {"name": "NVIDIA H100 80GB HBM3", "memory_total_bytes": 85520809984,
                       "memory_used_bytes": 1048576, "cc_major": 9},
      "gpus": [
        {"bus_id": "0000:17:00.0", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
         "health": {"temperature_c": 41, "power_usage_mw": 123000}},
        {"bus_id": "0000:2a:00.0", "uuid": "GPU-00000000-0000-0000-0000-000000000002",
         "health": {"temperature_c": 77, "power_usage_mw": 456000}}
      ])" + extra + "}";
    std::ofstream(path("scenario.json")) << scenario;
    SamplerOptions o;
    o.exe = GD_BINARY;
    o.nvml_lib = GD_FAKES_DIR "/libnvidia-ml.so.1";
    o.env = {"PATH=/usr/bin:/bin", "GPUDOCTOR_FAKE_SCENARIO=" + path("scenario.json")};
    o.deadline_s = deadline_s;
    return o;
  }

  void touch(const std::string& name) { std::ofstream(path(name)) << "x"; }
  void remove(const std::string& name) { fs::remove(path(name)); }

  testing_util::TempDir dir_{"sampler"};
};

// Whether pid is still a process (a zombie counts: it was not reaped).
bool exists(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

TEST_F(SamplerTest, HealthySampleCarriesTheScenarioValues) {
  NvmlSampler s(options());
  SampleResult r = s.sample();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.error, "");
  ASSERT_EQ(r.nvml.gpus.size(), 2u);
  EXPECT_EQ(r.nvml.driver_version.value, "550.54.15");
  EXPECT_EQ(r.nvml.gpus[0].pci_bus_id.value, "0000:17:00.0");
  EXPECT_EQ(r.nvml.gpus[0].health.temperature_c.value, 41);
  EXPECT_EQ(r.nvml.gpus[1].health.temperature_c.value, 77);
  EXPECT_EQ(r.nvml.gpus[1].health.power_usage_mw.value, 456000u);
  EXPECT_EQ(r.nvml.gpus[0].memory_used_bytes.value, 1048576u);
  pid_t first = s.child_pid();
  EXPECT_GT(first, 0);
  // The same child answers again: one nvmlInit for many samples.
  SampleResult again = s.sample();
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_EQ(s.child_pid(), first);
  EXPECT_EQ(again.nvml.gpus[1].health.temperature_c.value, 77);
  EXPECT_EQ(s.attempts(), 2u);
  EXPECT_EQ(s.failures(), 0u);
  EXPECT_EQ(s.restarts(), 0u);
}

TEST_F(SamplerTest, AHangIsKilledWithinTheDeadlineAndTheNextCallRestarts) {
  NvmlSampler s(
      options(R"(, "hang_when_file": {"nvmlDeviceGetTemperature": ")" + path("hang") + "\"}", 1.0));
  ASSERT_TRUE(s.sample().ok);
  pid_t first = s.child_pid();
  touch("hang");
  auto t0 = Clock::now();
  SampleResult r = s.sample();
  double took_s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("timeout after 1.0 s in nvmlDeviceGetTemperature (GPU 0)"),
            std::string::npos)
      << r.error;
  EXPECT_LT(took_s, 1.0 + 0.8);  // the deadline plus the kill grace at most
  EXPECT_EQ(s.child_pid(), -1);
  EXPECT_FALSE(exists(first)) << "the hung child was not killed and reaped";
  EXPECT_EQ(s.stuck_children(), 0u);

  remove("hang");
  SampleResult next = s.sample();
  ASSERT_TRUE(next.ok) << next.error;
  EXPECT_NE(s.child_pid(), first);
  EXPECT_EQ(s.restarts(), 1u);
  EXPECT_EQ(s.failures(), 1u);
  EXPECT_EQ(s.attempts(), 3u);
}

TEST_F(SamplerTest, ACrashIsReportedAndReplacedOnTheNextCall) {
  NvmlSampler s(
      options(R"(, "crash_when_file": {"nvmlDeviceGetPowerUsage": ")" + path("crash") + "\"}"));
  ASSERT_TRUE(s.sample().ok);
  pid_t first = s.child_pid();
  touch("crash");
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "crashed: SIGSEGV in nvmlDeviceGetPowerUsage (GPU 0)");
  EXPECT_FALSE(exists(first));
  remove("crash");
  SampleResult next = s.sample();
  ASSERT_TRUE(next.ok) << next.error;
  EXPECT_EQ(next.nvml.gpus[0].health.power_usage_mw.value, 123000u);
  EXPECT_EQ(s.restarts(), 1u);
}

TEST_F(SamplerTest, AFailedInitIsAFailureAndIsRetriedWithAFreshChild) {
  NvmlSampler s(options(R"(, "errors": {"nvmlInit_v2": 9})"));
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("nvmlInit_v2 returned"), std::string::npos) << r.error;
  EXPECT_EQ(s.child_pid(), -1);  // it exited after answering
  SampleResult again = s.sample();
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(s.restarts(), 1u);
  EXPECT_EQ(s.failures(), 2u);
}

TEST_F(SamplerTest, AMissingLibraryIsAFailureNamingIt) {
  SamplerOptions o = options();
  o.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  NvmlSampler s(o);
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << r.error;
}

TEST_F(SamplerTest, AnExecutableThatCannotStartIsAFailure) {
  SamplerOptions o = options();
  o.exe = "/nonexistent/gpudoctor";
  NvmlSampler s(o);
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("could not start"), std::string::npos) << r.error;
}

TEST_F(SamplerTest, AProgramThatAnswersGarbageIsReplaced) {
  std::ofstream(path("garbage.sh")) << "#!/bin/sh\nread request\necho '{not json'\nsleep 30\n";
  fs::permissions(path("garbage.sh"), fs::perms::owner_all);
  SamplerOptions o = options("", 5);
  o.exe = path("garbage.sh");
  NvmlSampler s(o);
  auto t0 = Clock::now();
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("bad output", 0), 0u) << r.error;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 3.0);
  EXPECT_EQ(s.child_pid(), -1);  // killed, its `sleep` too (the process group)
}

TEST_F(SamplerTest, AProgramThatSaysNothingTimesOut) {
  std::ofstream(path("silent.sh")) << "#!/bin/sh\nexec sleep 30\n";
  fs::permissions(path("silent.sh"), fs::perms::owner_all);
  SamplerOptions o = options("", 0.5);
  o.exe = path("silent.sh");
  NvmlSampler s(o);
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("timeout after 0.", 0), 0u) << r.error;
  EXPECT_EQ(s.child_pid(), -1);
}

TEST_F(SamplerTest, AProgramThatExitsIsReportedWithItsLastStderrLine) {
  // /bin/cat refuses the child's arguments.
  SamplerOptions o = options();
  o.exe = "/bin/cat";
  NvmlSampler s(o);
  SampleResult r = s.sample();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("exited with code 1: ", 0), 0u) << r.error;
  EXPECT_NE(r.error.find("cat"), std::string::npos) << r.error;
}

TEST_F(SamplerTest, CancelEndsASampleInProgressAtOnce) {
  NvmlSampler s(options(R"(, "hang": ["nvmlDeviceGetTemperature"])", 30));
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    s.cancel();
  });
  auto t0 = Clock::now();
  SampleResult r = s.sample();
  canceller.join();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
  EXPECT_EQ(s.sample().error, "cancelled");  // stays cancelled
}

TEST_F(SamplerTest, DestroyingTheSamplerEndsItsChild) {
  pid_t pid = -1;
  {
    NvmlSampler s(options());
    ASSERT_TRUE(s.sample().ok);
    pid = s.child_pid();
    ASSERT_TRUE(exists(pid));
  }
  EXPECT_FALSE(exists(pid));
}

TEST(NvmlSampleProblem, NamesWhyAnAnswerIsNoSample) {
  NvmlInfo n;
  EXPECT_EQ(nvml_sample_problem(n), "NVML was not probed");
  n.attempted = true;
  n.init_rc = 0;
  EXPECT_EQ(nvml_sample_problem(n), "");
  n.child_error = "timeout after 10.0 s in nvmlInit_v2";
  EXPECT_EQ(nvml_sample_problem(n), "timeout after 10.0 s in nvmlInit_v2");
}

}  // namespace
}  // namespace gd
