// The CUDA probe against a libcuda without the _v2 memory symbols
// (build/fakes/libcuda-legacy.so.1, cmake/tests-abi.cmake): it falls back to
// the unversioned cuDeviceTotalMem and cuMemGetInfo, which count in unsigned
// int (cuda.h, CUDA 13.0), and still reads each device's memory and context.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "fake_probe.h"
#include "probe/probe.h"

namespace gd {
namespace {

using testing_fakes::fake_options;
using testing_fakes::ScopedEnv;
using testing_fakes::TempScenario;

CudaRun probe_with(const std::string& lib, const std::string& scenario_json) {
  TempScenario sc(scenario_json);
  ScopedEnv env("GPUDOCTOR_FAKE_SCENARIO", sc.path());
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", std::nullopt);
  ProbeOptions opt = fake_options();
  opt.cuda_lib = lib;
  Snapshot s;
  probe_hardware(opt, &s);
  return s.cuda.runs.empty() ? CudaRun{} : s.cuda.runs.front();
}

// 3 GiB fits the unversioned calls' 32 bits: the counts are exact.
constexpr const char* kSmallGpu = R"({"va_reserve_bytes": 1, "gpus": [
  {"bus_id": "0000:01:00.0", "name": "NVIDIA T400", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
   "memory_total_bytes": 3221225472, "memory_used_bytes": 0, "cc_major": 7, "cc_minor": 5}]})";

TEST(ProbeCudaLegacy, WithoutTheV2SymbolsTheUnversionedOnesAnswer) {
  CudaRun r = probe_with(GD_FAKES_DIR "/libcuda-legacy.so.1", kSmallGpu);
  ASSERT_EQ(r.child_error, "");
  ASSERT_EQ(r.init_rc, 0);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].total_memory_bytes, 3221225472u);  // cuDeviceTotalMem
  EXPECT_EQ(r.devices[0].ctx_rc, 0);                        // through cuMemGetInfo
}

TEST(ProbeCudaLegacy, TheCurrentLibraryAnswersTheSameThroughV2) {
  CudaRun r = probe_with(GD_FAKES_DIR "/libcuda.so.1", kSmallGpu);
  ASSERT_EQ(r.child_error, "");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].total_memory_bytes, 3221225472u);
  EXPECT_EQ(r.devices[0].ctx_rc, 0);
}

// A failing unversioned call is reported as it would be through _v2: the
// fake's errors keyed by the unversioned name reach the probe.
TEST(ProbeCudaLegacy, AnErrorOfTheUnversionedMemoryQueryIsTheContextsError) {
  std::string json = kSmallGpu;
  json.insert(1, R"("errors": {"cuMemGetInfo": 999}, )");
  CudaRun r = probe_with(GD_FAKES_DIR "/libcuda-legacy.so.1", json);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].ctx_rc, 999);
  EXPECT_EQ(r.devices[0].total_memory_bytes, 3221225472u);
}

}  // namespace
}  // namespace gd
