// Running the GPU helper: the deadline formula, its command line and
// environment, which GPUs --gpus names, and run_diag_helper() end to end
// against tests/fakes/fake_diag_helper.py (a healthy run, a hang killed at
// the deadline, a crash, an exit with the loader's error on stderr, a
// helper that is not there) with NVML sampled from the fake NVML meanwhile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diag/run_helper.h"
#include "probe/child.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* kFake = GD_SOURCE_DIR "/tests/fakes/fake_diag_helper.py";
const char* kGpu0 = "0000:18:00.0";  // hgx-8xh100's first two GPUs
const char* kGpu1 = "0000:2a:00.0";

// --- deadline, environment, arguments ----------------------------------------

TEST(DiagDeadline, FollowsTheDocumentedFormula) {
  EXPECT_DOUBLE_EQ(diag_deadline_s(1, 20, 1), 95);    // 60 + 30 + 5
  EXPECT_DOUBLE_EQ(diag_deadline_s(1, 20, 8), 130);   // level 1 ignores --duration
  EXPECT_DOUBLE_EQ(diag_deadline_s(2, 20, 1), 345);   // + (12 x 20 + 10)
  EXPECT_DOUBLE_EQ(diag_deadline_s(2, 20, 8), 2130);  // GPUs one after another
  EXPECT_DOUBLE_EQ(diag_deadline_s(3, 20, 2), 696);   // + 3x2x1 + 40 + 50
  EXPECT_DOUBLE_EQ(diag_deadline_s(2, 0, 1), 105);    // --duration 0: set-up only
  EXPECT_DOUBLE_EQ(diag_deadline_s(1, 20, 0), 95);    // no GPU counts as one
  EXPECT_DOUBLE_EQ(diag_deadline_s(2, std::nan(""), 1), 105);
  EXPECT_DOUBLE_EQ(diag_deadline_s(2, -5, 1), 105);
  // Longer with more work, at every level.
  for (int level : {1, 2, 3}) {
    EXPECT_LE(diag_deadline_s(level, 10, 2), diag_deadline_s(level, 10, 4));
    EXPECT_LE(diag_deadline_s(level, 10, 2), diag_deadline_s(level, 30, 2));
    if (level < 3) {
      EXPECT_LT(diag_deadline_s(level, 10, 2), diag_deadline_s(level + 1, 10, 2));
    }
  }
  EXPECT_LT(diag_deadline_s(2, 10, 2), diag_deadline_s(2, 10, 3));
  EXPECT_LT(diag_deadline_s(3, 10, 2), diag_deadline_s(3, 10, 3));
}

TEST(DiagEnvironment, DropsVisibleDevicesAndOrdersByBus) {
  std::vector<std::string> env = diag_environment(
      {"PATH=/usr/bin", "CUDA_VISIBLE_DEVICES=3", "CUDA_DEVICE_ORDER=FASTEST_FIRST",
       "CUDA_VISIBLE_DEVICES_NOT=1", "NCCL_DEBUG=INFO"});
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "CUDA_VISIBLE_DEVICES_NOT=1",
                                           "NCCL_DEBUG=INFO", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}));
  EXPECT_EQ(diag_environment({}), (std::vector<std::string>{"CUDA_DEVICE_ORDER=PCI_BUS_ID"}));
}

TEST(DiagHelperArgs, CarryEveryOption) {
  DiagOptions o;
  o.level = 3;
  o.bus_ids = {kGpu1, kGpu0};
  o.gpu_cpus = {{kGpu0, "0-55,112-167"}, {kGpu1, ""}};
  o.duration_s = 2.5;
  o.seed = 42;
  o.plant_fault = "gemm";
  EXPECT_EQ(diag_helper_args(o),
            (std::vector<std::string>{"--level", "3", "--gpu", "0000:2a:00.0", "--gpu",
                                      "0000:18:00.0@0-55,112-167", "--duration", "2.5", "--seed",
                                      "42", "--plant-fault", "gemm"}));
  DiagOptions d;
  d.bus_ids = {kGpu0};
  d.duration_s = 1e-3;
  EXPECT_EQ(diag_helper_args(d)[5], "0.001");
  d.duration_s = 20;
  EXPECT_EQ(diag_helper_args(d), (std::vector<std::string>{"--level", "1", "--gpu", "0000:18:00.0",
                                                           "--duration", "20", "--seed", "1"}));
}

TEST(DiagHelper, FoundBesideThisBinaryOrNot) {
  std::string h = find_diag_helper();
  if (!h.empty()) {
    EXPECT_TRUE(h.ends_with("/gpudoctor-diag")) << h;
    EXPECT_EQ(access(h.c_str(), X_OK), 0);
  }
}

// --- GPU selection ------------------------------------------------------------

TEST(DiagGpus, EmptyListIsEveryNvmlGpuInIndexOrder) {
  Snapshot s = fixtures::hgx_8xh100();
  Result<std::vector<std::string>> r = resolve_diag_gpus(s, "");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 8u);
  EXPECT_EQ((*r)[0], kGpu0);
  EXPECT_EQ((*r)[7], "0000:db:00.0");
}

TEST(DiagGpus, IndexBusIdAndUuidInAnySpelling) {
  Snapshot s = fixtures::hgx_8xh100();
  Result<std::vector<std::string>> r = resolve_diag_gpus(
      s, " 3, 0000:2A:00.0,9a:00.0 ,00000000:ab:00.0,GPU-5F2E81A4-7B6C-4D8E-8F10-0000000000BA,07");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{"0000:5d:00.0", "0000:2a:00.0", "0000:9a:00.0",
                                          "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"}));
}

TEST(DiagGpus, ErrorsAreOneLineNamingTheItem) {
  Snapshot s = fixtures::hgx_8xh100();
  Result<std::vector<std::string>> unknown = resolve_diag_gpus(s, "0,8");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("--gpus: \"8\" names no GPU NVML lists (0000:18:00.0, "),
            std::string::npos)
      << unknown.error();
  Result<std::vector<std::string>> dup = resolve_diag_gpus(s, "0,0000:18:00.0");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error(), "--gpus: 0000:18:00.0 is named twice");
  Result<std::vector<std::string>> junk = resolve_diag_gpus(s, "GPU-x\n\x1b");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().find('\n'), std::string::npos);
  EXPECT_NE(junk.error().find("\\x1b"), std::string::npos) << junk.error();
  Result<std::vector<std::string>> none = resolve_diag_gpus(s, ",,");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("names no GPU"), std::string::npos);
}

TEST(DiagGpus, WithoutNvmlThePciDisplayControllers) {
  Snapshot s = fixtures::ws_4x4090();  // GPUs 0x030000 and their audio functions 0x040300
  s.nvml.gpus.clear();
  Result<std::vector<std::string>> r = resolve_diag_gpus(s, "");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, (std::vector<std::string>{"0000:01:00.0", "0000:21:00.0", "0000:41:00.0",
                                          "0000:61:00.0"}));
  Result<std::vector<std::string>> idx = resolve_diag_gpus(s, "1,41:00.0");
  ASSERT_TRUE(idx.ok()) << idx.error();
  EXPECT_EQ(*idx, (std::vector<std::string>{"0000:21:00.0", "0000:41:00.0"}));

  Snapshot hgx = fixtures::hgx_8xh100();  // NVSwitches (0x068000) are no GPU
  hgx.nvml.gpus.clear();
  Result<std::vector<std::string>> all = resolve_diag_gpus(hgx, "");
  ASSERT_TRUE(all.ok()) << all.error();
  EXPECT_EQ(all->size(), 8u);
  EXPECT_EQ(all->front(), kGpu0);
}

TEST(DiagGpus, NoGpuAtAllIsAnError) {
  Result<std::vector<std::string>> r = resolve_diag_gpus(fixtures::no_nvidia_machine(), "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "no NVIDIA GPU found: NVML lists none and the PCI bus shows none");
}

TEST(DiagGpus, CpusAreEachGpusNumaLocalList) {
  Snapshot s = fixtures::hgx_8xh100();
  std::map<std::string, std::string> cpus =
      diag_gpu_cpus(s, {kGpu0, "0000:9a:00.0", "0000:99:00.0"});
  EXPECT_EQ(cpus[kGpu0], "0-55,112-167");
  EXPECT_EQ(cpus["0000:9a:00.0"], "56-111,168-223");
  EXPECT_EQ(cpus["0000:99:00.0"], "");  // not in the snapshot
  EXPECT_EQ(cpus.size(), 3u);
}

// --- run_diag_helper against the fake helper ---------------------------------

class DiagRunTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }

  // tests/diag/scenarios/<name>.json with `extra` merged in, written to the
  // temporary directory; options that run the fake on it.
  DiagOptions options(const std::string& name, const json& extra = json::object()) {
    std::ifstream in(std::string(GD_SOURCE_DIR) + "/tests/diag/scenarios/" + name + ".json");
    json scenario = json::parse(in);
    scenario.merge_patch(extra);
    std::ofstream(path("diag.json")) << scenario.dump();
    DiagOptions o;
    o.level = 2;
    o.bus_ids = {kGpu0, kGpu1};
    o.duration_s = 1;
    o.helper = kFake;
    o.env =
        diag_environment({"PATH=" + std::string(std::getenv("PATH")),
                          "GPUDOCTOR_FAKE_DIAG=" + path("diag.json"), "CUDA_VISIBLE_DEVICES=1"});
    o.deadline_s = 20;
    return o;
  }

  testing_util::TempDir dir_{"diagrun"};
};

TEST_F(DiagRunTest, AHealthyRunIsCompleteAndGotItsArgumentsAndEnvironment) {
  DiagOptions o = options("healthy-2gpu-l2", {{"args_to", path("args.json")}});
  o.gpu_cpus = {{kGpu0, "0-3"}};
  o.seed = 9;
  DiagRun run = run_diag_helper(o);
  EXPECT_EQ(run.incomplete, "");
  EXPECT_EQ(run.last_started, "");
  EXPECT_TRUE(run.errors.empty());
  EXPECT_EQ(run.level, 2);
  EXPECT_EQ(run.seed, 9u);
  EXPECT_EQ(run.duration_s, 1);
  EXPECT_EQ(run.helper, kFake);
  EXPECT_EQ(run.started_at.size(), 20u) << run.started_at;  // 2026-12-03T10:00:00Z
  EXPECT_EQ(run.started_at.back(), 'Z');
  EXPECT_GT(run.wall_ms, 0);
  EXPECT_EQ(run.cuda_runtime_version, 13000);
  ASSERT_EQ(run.devices.size(), 2u);
  EXPECT_EQ(run.devices[0].bus_id, kGpu0);  // $GPU0 became the first --gpu
  EXPECT_EQ(run.gemms.size(), 8u);
  EXPECT_EQ(run.memtests.size(), 2u);
  EXPECT_EQ(run.copies.size(), 12u);
  EXPECT_EQ(run.tests.size(), 4u);
  EXPECT_TRUE(run.samples.empty());  // no sampler asked for

  std::ifstream in(path("args.json"));
  json got = json::parse(in);
  EXPECT_EQ(got["argv"], json(diag_helper_args(o)));
  EXPECT_EQ(got["argv"][3], "0000:18:00.0@0-3");
  EXPECT_FALSE(got["env"].contains("CUDA_VISIBLE_DEVICES"));
  EXPECT_EQ(got["env"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
}

TEST_F(DiagRunTest, AHangIsKilledAtTheDeadlineAndNamesTheTest) {
  DiagOptions o = options("hang");
  o.deadline_s = 1.5 * testing_util::kTimeScale;
  auto t0 = Clock::now();
  DiagRun run = run_diag_helper(o);
  double took_s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(run.incomplete, "timeout after " + testing_util::tenths(o.deadline_s) +
                                " s in memtest on 0000:18:00.0");
  EXPECT_EQ(run.last_started, "memtest 0000:18:00.0");
  EXPECT_LT(took_s, o.deadline_s + 1.5 * testing_util::kTimeScale);
  EXPECT_GE(run.wall_ms, o.deadline_s * 1000 - 100);
  // What it said before the hang stands.
  EXPECT_EQ(run.devices.size(), 2u);
  EXPECT_EQ(run.copies.size(), 6u);
}

TEST_F(DiagRunTest, ACrashNamesTheSignalAndTheTest) {
  DiagRun run = run_diag_helper(options("crash"));
  EXPECT_EQ(run.incomplete, "crashed: SIGSEGV in gemm bf16 on 0000:18:00.0");
  EXPECT_EQ(run.memtests.size(), 1u);
}

TEST_F(DiagRunTest, TheLoadersErrorEndsUpInTheStderrTail) {
  DiagRun run = run_diag_helper(options("missing-cublas"));
  EXPECT_EQ(run.incomplete, "exit 127");
  EXPECT_NE(run.stderr_tail.find("error while loading shared libraries: libcublas.so.13: cannot "
                                 "open shared object file"),
            std::string::npos)
      << run.stderr_tail;
}

TEST_F(DiagRunTest, AnExitMidLineKeepsTheResultsAndSaysSo) {
  DiagRun run = run_diag_helper(options(
      "cut-off", {{"stderr", {"warming up", "", "\x1b[31mgpudoctor-diag: out of memory\t!"}}}));
  EXPECT_EQ(run.incomplete, "exit 1");
  EXPECT_EQ(run.copies.size(), 3u);
  ASSERT_EQ(run.errors.size(), 1u);
  EXPECT_NE(run.errors[0].message.find("cut off"), std::string::npos);
  // Blank lines dropped, control characters escaped.
  EXPECT_EQ(run.stderr_tail, "warming up\n\\x1b[31mgpudoctor-diag: out of memory !");
}

TEST_F(DiagRunTest, StderrTailKeepsTheLastLines) {
  std::vector<std::string> lines;
  for (int i = 0; i < 50; ++i) lines.push_back("line " + std::to_string(i));
  DiagRun run = run_diag_helper(options("missing-cublas", {{"stderr", lines}}));
  EXPECT_EQ(run.stderr_tail.rfind("line 42\n", 0), 0u) << run.stderr_tail;
  EXPECT_TRUE(run.stderr_tail.ends_with("\nline 49")) << run.stderr_tail;
}

TEST_F(DiagRunTest, DoneWithExitTwoIsCompleteAndExitZeroWithoutDoneIsNot) {
  DiagRun none = run_diag_helper(options("no-gpu"));
  EXPECT_EQ(none.incomplete, "");
  ASSERT_EQ(none.errors.size(), 1u);
  EXPECT_NE(none.errors[0].message.find("no CUDA-capable device"), std::string::npos);

  DiagRun early = run_diag_helper(options("healthy-2gpu-l1", {{"then", "exit:0"}}));
  EXPECT_EQ(early.incomplete, "exit 0 without a done line");
  DiagRun failed = run_diag_helper(options("healthy-2gpu-l1", {{"then", "done:1"}}));
  EXPECT_EQ(failed.incomplete, "exit 1");
}

TEST_F(DiagRunTest, AHelperThatIsNotThereCouldNotStart) {
  DiagOptions o = options("healthy-2gpu-l1");
  o.helper = path("no-such-helper");
  DiagRun run = run_diag_helper(o);
  EXPECT_EQ(run.incomplete.rfind("could not start: ", 0), 0u) << run.incomplete;
  EXPECT_NE(run.incomplete.find("No such file or directory"), std::string::npos) << run.incomplete;
  EXPECT_TRUE(run.devices.empty());

  o.helper = "";
  EXPECT_EQ(run_diag_helper(o).incomplete,
            "could not start: no gpudoctor-diag helper beside this binary");
}

TEST_F(DiagRunTest, NvmlIsSampledWhileTheHelperRuns) {
  std::ofstream(path("nvml.json")) << R"({
    "driver_version": "570.86.15",
    "gpu_defaults": {"name": "NVIDIA H100 80GB HBM3", "memory_total_bytes": 85520809984},
    "gpus": [
      {"bus_id": "0000:18:00.0", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
       "health": {"temperature_c": 61, "power_usage_mw": 650000, "sm_clock_mhz": 1980,
                  "clock_event_reasons": 0, "utilization_gpu_pct": 100}},
      {"bus_id": "0000:2a:00.0", "uuid": "GPU-00000000-0000-0000-0000-000000000002",
       "health": {"temperature_c": 83, "power_usage_mw": 700000, "sm_clock_mhz": 1410,
                  "clock_event_reasons": 32, "utilization_gpu_pct": 99}},
      {"bus_id": "0000:3a:00.0", "uuid": "GPU-00000000-0000-0000-0000-000000000003"}
    ]})";
  DiagOptions o = options("healthy-2gpu-l1", {{"delay_ms", 100}});  // 23 lines: about 2.3 s
  o.env.push_back("GPUDOCTOR_FAKE_SCENARIO=" + path("nvml.json"));
  o.sampler_exe = GD_BINARY;
  o.nvml_lib = GD_FAKES_DIR "/libnvidia-ml.so.1";
  o.sample_interval_s = 0.1;
  auto t0 = Clock::now();
  DiagRun run = run_diag_helper(o);
  double took_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_EQ(run.incomplete, "");
  size_t n0 = 0, n1 = 0;
  double last_t = -1;
  for (const DiagSample& s : run.samples) {
    EXPECT_GE(s.t_ms, last_t);
    last_t = s.t_ms;
    EXPECT_LE(s.t_ms, took_ms);
    if (s.bus_id == kGpu0) {
      ++n0;
      EXPECT_EQ(s.temperature_c, 61);
      EXPECT_EQ(s.power_mw, 650000u);
      EXPECT_EQ(s.sm_clock_mhz, 1980u);
      EXPECT_EQ(s.clock_event_reasons, 0u);
      EXPECT_EQ(s.utilization_pct, 100u);
    } else if (s.bus_id == kGpu1) {
      ++n1;
      EXPECT_EQ(s.temperature_c, 83);
      EXPECT_EQ(s.sm_clock_mhz, 1410u);
      EXPECT_EQ(s.clock_event_reasons, 32u);
    } else {
      ADD_FAILURE() << "a sample of a GPU not under test: " << s.bus_id;
    }
  }
  EXPECT_GE(n0, 3u);
  EXPECT_EQ(n0, n1);
  // The sampler stops with the helper: the run does not wait out an interval.
  EXPECT_LT(took_ms, run.wall_ms + 1000);
}

TEST_F(DiagRunTest, AHungNvmlDoesNotHoldTheRunPastTheHelper) {
  std::ofstream(path("nvml.json")) << R"({"gpus": [{"bus_id": "0000:18:00.0"}],
                                          "hang": ["nvmlDeviceGetTemperature"]})";
  DiagOptions o = options("healthy-2gpu-l1");
  o.env.push_back("GPUDOCTOR_FAKE_SCENARIO=" + path("nvml.json"));
  o.sampler_exe = GD_BINARY;
  o.nvml_lib = GD_FAKES_DIR "/libnvidia-ml.so.1";
  auto t0 = Clock::now();
  DiagRun run = run_diag_helper(o);
  double took_s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(run.incomplete, "");
  EXPECT_TRUE(run.samples.empty());
  EXPECT_LT(took_s, 3.0);  // the sampler's own deadline is 10 s
}

}  // namespace
}  // namespace gd
