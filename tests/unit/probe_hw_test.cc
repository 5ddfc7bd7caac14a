// The NVML and CUDA probes end to end: probe_hardware() re-executes the
// gpudoctor binary as probe children, which dlopen the fake libraries
// (tests/fakes/) driven by the scenario files, or the CUDA toolkit's real
// stub libcuda.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "fake_probe.h"
#include "probe/probe.h"
#include "test_util.h"

namespace gd {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

constexpr uint64_t k4090MemoryBytes = 25757220864;

using testing_fakes::fake_options;
using testing_fakes::ScopedEnv;
using testing_util::kTimeScale;
using testing_util::tenths;

using testing_fakes::scenario_path;

// Each test starts from no CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER.
class ProbeHw : public ::testing::Test {
 protected:
  Snapshot probe(const std::string& scenario, const ProbeOptions& opt = fake_options()) {
    return testing_fakes::probe_scenario(scenario, opt);
  }
  ScopedEnv cvd_{"CUDA_VISIBLE_DEVICES", std::nullopt};
  ScopedEnv order_{"CUDA_DEVICE_ORDER", std::nullopt};
};

const ProbeRecord* record(const Snapshot& s, const std::string& name) {
  for (const auto& r : s.probes) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::vector<std::string> cuda_bus_ids(const CudaRun& r) {
  std::vector<std::string> ids;
  for (const auto& d : r.devices) ids.push_back(d.pci_bus_id);
  return ids;
}

TEST_F(ProbeHw, HealthyWorkstationNvmlValuesExactly) {
  Snapshot s = probe("ws-4x4090");
  const NvmlInfo& n = s.nvml;
  EXPECT_TRUE(n.attempted);
  EXPECT_EQ(n.child_error, "");
  EXPECT_EQ(n.library_loaded, fs::canonical(GD_FAKES_DIR "/libnvidia-ml.so.1").string());
  EXPECT_EQ(n.init_rc, 0);
  EXPECT_EQ(n.init_symbol, "nvmlInit_v2");
  EXPECT_EQ(n.driver_version.value, "550.54.14");
  EXPECT_EQ(n.nvml_version.value, "12.550.54.14");
  EXPECT_EQ(n.cuda_driver_version.value, 12040);
  EXPECT_EQ(n.device_count.value, 4u);
  ASSERT_EQ(n.gpus.size(), 4u);
  const char* bus[] = {"0000:01:00.0", "0000:21:00.0", "0000:41:00.0", "0000:61:00.0"};
  const uint32_t clock[] = {2520, 2520, 2640, 2580};
  for (uint32_t i = 0; i < 4; ++i) {
    const NvmlGpu& g = n.gpus[i];
    SCOPED_TRACE(bus[i]);
    EXPECT_EQ(g.index, i);
    EXPECT_EQ(g.handle_rc, 0);
    EXPECT_EQ(g.name.value, "NVIDIA GeForce RTX 4090");
    EXPECT_EQ(g.pci_bus_id.value, bus[i]);  // PCI order; "00000000:01:00.0" normalized
    EXPECT_EQ(g.uuid.value, "GPU-1b9a0c7e-0d3f-4c1e-9a52-0000000000" + std::string(bus[i] + 5, 2));
    EXPECT_EQ(g.pci_device_id.value, 0x268410DEu);
    EXPECT_EQ(g.minor_number.value, i);
    EXPECT_EQ(g.memory_total_bytes.value, k4090MemoryBytes);
    EXPECT_EQ(g.memory_used_bytes.value, 4u << 20);
    EXPECT_EQ(g.memory_free_bytes.value, k4090MemoryBytes - (4u << 20));
    EXPECT_EQ(g.persistence_mode.value, 1);
    EXPECT_EQ(g.compute_mode.value, 0);
    EXPECT_EQ(g.mig_mode_current.rc, 3);  // NOT_SUPPORTED on a GeForce
    EXPECT_EQ(g.cc_major.value, 8);
    EXPECT_EQ(g.cc_minor.value, 9);
    EXPECT_EQ(g.architecture.value, 8);
    EXPECT_EQ(g.max_sm_clock_mhz.value, clock[i]);
    EXPECT_EQ(g.processes.rc, 0);
    EXPECT_TRUE(g.processes.value.empty());
    EXPECT_EQ(g.fabric_state.rc, 3);
    EXPECT_EQ(g.mig_instance_count.rc, -1);  // not asked without MIG
  }
  ASSERT_NE(record(s, "nvml"), nullptr);
  EXPECT_EQ(record(s, "nvml")->status, ProbeStatus::kOk);
}

TEST_F(ProbeHw, HealthyWorkstationCudaInDefaultOrderAndNoCleanRun) {
  Snapshot s = probe("ws-4x4090");
  ASSERT_EQ(s.cuda.runs.size(), 1u);  // the user's run worked: no clean run
  const CudaRun& r = s.cuda.runs[0];
  EXPECT_EQ(r.label, "user");
  EXPECT_EQ(r.child_error, "");
  EXPECT_EQ(r.library_loaded, fs::canonical(GD_FAKES_DIR "/libcuda.so.1").string());
  EXPECT_EQ(r.driver_version, 12040);
  EXPECT_EQ(r.init_rc, 0);
  EXPECT_EQ(r.device_count, 4);
  // FASTEST_FIRST: equal cc, so higher clock first, then bus order.
  EXPECT_THAT(cuda_bus_ids(r),
              ElementsAre("0000:41:00.0", "0000:61:00.0", "0000:01:00.0", "0000:21:00.0"));
  const CudaDevice& d = r.devices[0];
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_EQ(d.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(d.uuid, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041");
  EXPECT_EQ(d.total_memory_bytes, k4090MemoryBytes);
  EXPECT_EQ(d.cc_major, 8);
  EXPECT_EQ(d.cc_minor, 9);
  EXPECT_EQ(d.multiprocessors, 128);
  EXPECT_EQ(d.clock_khz, 2640000);
  for (const auto& dev : r.devices) EXPECT_EQ(dev.ctx_rc, 0) << dev.pci_bus_id;
  EXPECT_EQ(r.cudart_loaded, fs::canonical(GD_FAKES_DIR "/libcudart.so.13").string());
  EXPECT_EQ(r.cudart_runtime_version, 12040);
  EXPECT_EQ(r.cudart_rc, 0);
  EXPECT_EQ(r.cudart_device_count, 4);
  EXPECT_EQ(record(s, "cuda")->status, ProbeStatus::kOk);
}

TEST_F(ProbeHw, PciBusIdOrderMatchesNvml) {
  ScopedEnv order("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  Snapshot s = probe("ws-4x4090");
  EXPECT_THAT(cuda_bus_ids(s.cuda.runs.at(0)),
              ElementsAre("0000:01:00.0", "0000:21:00.0", "0000:41:00.0", "0000:61:00.0"));
}

TEST_F(ProbeHw, VisibleDevicesStopAtTheFirstInvalidEntry) {
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "1,x,0");
  Snapshot s = probe("ws-4x4090");
  ASSERT_EQ(s.cuda.runs.size(), 1u);
  const CudaRun& r = s.cuda.runs[0];
  EXPECT_EQ(r.device_count, 1);
  EXPECT_THAT(cuda_bus_ids(r), ElementsAre("0000:61:00.0"));  // index 1 in FASTEST_FIRST order
  EXPECT_EQ(s.nvml.gpus.size(), 4u);                          // NVML ignores CUDA_VISIBLE_DEVICES
}

TEST_F(ProbeHw, VisibleDevicesByUniqueUuidPrefix) {
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "GPU-1b9a0c7e-0d3f-4c1e-9a52-00000000002,GPU-1b9a");
  Snapshot s = probe("ws-4x4090");
  // The second entry is ambiguous: it and everything after it are dropped.
  EXPECT_THAT(cuda_bus_ids(s.cuda.runs.at(0)), ElementsAre("0000:21:00.0"));
}

TEST_F(ProbeHw, CleanRunOnlyAfterAFailingUserRun) {
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "");
  Snapshot s = probe("ws-4x4090");
  ASSERT_EQ(s.cuda.runs.size(), 2u);
  const CudaRun& user = s.cuda.runs[0];
  const CudaRun& clean = s.cuda.runs[1];
  EXPECT_EQ(user.label, "user");
  EXPECT_EQ(user.init_rc, 100);
  EXPECT_EQ(user.cudart_rc, 100);
  EXPECT_EQ(clean.label, "clean");
  EXPECT_EQ(clean.init_rc, 0);
  EXPECT_EQ(clean.device_count, 4);
  EXPECT_THAT(cuda_bus_ids(clean),
              ElementsAre("0000:01:00.0", "0000:21:00.0", "0000:41:00.0", "0000:61:00.0"));
  EXPECT_EQ(clean.env_changes.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(clean.env_changes.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  const ProbeRecord* rec = record(s, "cuda");
  EXPECT_EQ(rec->status, ProbeStatus::kFailed);
  EXPECT_THAT(rec->detail, HasSubstr("CUDA_ERROR_NO_DEVICE"));
  EXPECT_THAT(rec->detail, HasSubstr("clean environment: 4 device(s)"));
}

TEST_F(ProbeHw, HangingCuInitTimesOutWithinTheDeadline) {
  const double deadline_s = 1.5 * kTimeScale;
  auto start = std::chrono::steady_clock::now();
  Snapshot s = probe("cuda-hang", fake_options(deadline_s));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, deadline_s + 1.0 * kTimeScale);
  ASSERT_EQ(s.cuda.runs.size(), 1u);  // no time left for a clean run
  EXPECT_EQ(s.cuda.runs[0].child_error, "timeout after " + tenths(deadline_s) + " s in cuInit");
  EXPECT_EQ(record(s, "cuda")->status, ProbeStatus::kTimedOut);
  EXPECT_EQ(s.nvml.init_rc, 0);  // NVML ran alongside and finished
  EXPECT_EQ(s.nvml.gpus.size(), 4u);
  EXPECT_EQ(record(s, "nvml")->status, ProbeStatus::kOk);
}

TEST_F(ProbeHw, HangingNvmlInitTimesOutAndCudaStillAnswers) {
  const double deadline_s = 1.0 * kTimeScale;
  auto start = std::chrono::steady_clock::now();
  Snapshot s = probe("nvml-hang", fake_options(deadline_s));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, deadline_s + 1.0 * kTimeScale);
  EXPECT_THAT(s.nvml.child_error, StartsWith("timeout after " + tenths(deadline_s).substr(0, 2)));
  EXPECT_THAT(s.nvml.child_error, EndsWith(" in nvmlInit_v2"));
  EXPECT_EQ(record(s, "nvml")->status, ProbeStatus::kTimedOut);
  EXPECT_EQ(s.cuda.runs.at(0).device_count, 4);
}

TEST_F(ProbeHw, CrashingCuInitIsRecordedAndTheParentLives) {
  Snapshot s = probe("cuda-crash");
  ASSERT_EQ(s.cuda.runs.size(), 2u);  // a crash is a failure: the clean run crashes too
  EXPECT_EQ(s.cuda.runs[0].child_error, "crashed: SIGSEGV in cuInit");
  EXPECT_EQ(s.cuda.runs[1].child_error, "crashed: SIGSEGV in cuInit");
  // What the child learned before the crash (its last checkpoint) is kept.
  EXPECT_EQ(s.cuda.runs[0].driver_version_rc, 0);
  EXPECT_EQ(s.cuda.runs[0].driver_version, 12040);
  EXPECT_EQ(s.cuda.runs[0].init_rc, -1);
  EXPECT_EQ(record(s, "cuda")->status, ProbeStatus::kFailed);
}

TEST_F(ProbeHw, CrashingNvmlKeepsWhatItReadBeforeTheCrash) {
  Snapshot s = probe("nvml-crash");
  EXPECT_EQ(s.nvml.child_error, "crashed: SIGSEGV in nvmlDeviceGetCount_v2");
  EXPECT_EQ(s.nvml.init_rc, 0);  // from the child's last checkpoint
  EXPECT_EQ(s.nvml.driver_version.value, "550.54.14");
  EXPECT_EQ(record(s, "nvml")->status, ProbeStatus::kFailed);
  EXPECT_EQ(s.cuda.runs.at(0).device_count, 4);
}

TEST_F(ProbeHw, MissingLibrariesRecordTheDlopenError) {
  ProbeOptions opt = fake_options();
  opt.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  opt.cuda_lib = "/nonexistent/libcuda.so.1";
  opt.cudart_lib = "/nonexistent/libcudart.so.13";
  Snapshot s = probe("ws-4x4090", opt);
  EXPECT_THAT(s.nvml.dlopen_error, HasSubstr("No such file or directory"));
  EXPECT_EQ(s.nvml.library_loaded, "");
  EXPECT_EQ(s.nvml.child_error, "");
  EXPECT_EQ(record(s, "nvml")->status, ProbeStatus::kUnavailable);
  EXPECT_THAT(record(s, "nvml")->detail, HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  ASSERT_EQ(s.cuda.runs.size(), 1u);  // a clean environment would not find it either
  EXPECT_THAT(s.cuda.runs[0].dlopen_error, HasSubstr("No such file or directory"));
  EXPECT_THAT(s.cuda.runs[0].cudart_error, HasSubstr("/nonexistent/libcudart.so.13"));
  EXPECT_EQ(record(s, "cuda")->status, ProbeStatus::kUnavailable);
}

// The toolkit's stub libcuda, reached the way users reach it: a directory on
// LD_LIBRARY_PATH holding it under the soname libcuda.so.1.
TEST_F(ProbeHw, RealToolkitStubLibraryGives34) {
  const char* home = std::getenv("CUDA_HOME");
  fs::path stub = fs::path(home && *home ? home : "/usr/local/cuda") / "lib64/stubs/libcuda.so";
  if (!fs::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  fs::path dir = fs::temp_directory_path() / ("gd-stub-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::create_symlink(stub, dir / "libcuda.so.1");
  Snapshot s;
  {
    ScopedEnv ld("LD_LIBRARY_PATH", dir.string());
    ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", std::nullopt);
    ProbeOptions opt = fake_options();
    opt.cuda_lib = "libcuda.so.1";
    opt.cudart_lib = "";
    probe_hardware(opt, &s);
  }
  fs::remove_all(dir);
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(r.library_requested, "libcuda.so.1");
  EXPECT_THAT(r.library_loaded, EndsWith("stubs/libcuda.so"));
  EXPECT_EQ(r.init_rc, 34);  // CUDA_ERROR_STUB_LIBRARY
  EXPECT_EQ(record(s, "cuda")->status, ProbeStatus::kFailed);
  EXPECT_THAT(record(s, "cuda")->detail, HasSubstr("CUDA_ERROR_STUB_LIBRARY"));
}

TEST_F(ProbeHw, AddressSpaceLimitFailsCuInitWithOutOfMemory) {
#ifdef GD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer needs more address space than the limit under test";
#endif
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < (64ull << 30)) {
    GTEST_SKIP() << "hard RLIMIT_AS already set";
  }
  rlimit limited = old;
  limited.rlim_cur = 32ull << 30;  // ulimit -v 33554432: below the 4 GPUs' 96 GiB + 16 GiB
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  Snapshot s = probe("ws-4x4090-ulimit");
  setrlimit(RLIMIT_AS, &old);
  ASSERT_EQ(s.cuda.runs.size(), 3u);
  EXPECT_EQ(s.cuda.runs[0].init_rc, 2);  // CUDA_ERROR_OUT_OF_MEMORY
  EXPECT_EQ(s.cuda.runs[0].cudart_rc, 2);
  EXPECT_EQ(s.cuda.runs[0].rlimit_as_bytes, std::optional<uint64_t>(32ull << 30));
  EXPECT_GT(s.cuda.runs[0].vm_start.size_bytes, 0u);
  EXPECT_EQ(s.cuda.runs[0].vm_init.size_bytes, 0u);  // cuInit never returned success
  EXPECT_EQ(s.cuda.runs[1].init_rc, 2);              // the folk remedies do not lift a ulimit
  // The hard limit is above the soft one: the proof run lifts it, and CUDA
  // starts, its reservation (4 x 24 GB + 16 GiB in this fake) measured.
  const CudaRun& raised = s.cuda.runs[2];
  EXPECT_EQ(raised.label, kRaisedLimitLabel);
  EXPECT_EQ(raised.init_rc, 0);
  EXPECT_GT(raised.vm_init.size_bytes, 100ull << 30);
  EXPECT_GE(raised.vm_context.size_bytes, raised.vm_init.size_bytes);
  EXPECT_EQ(s.nvml.gpus.size(), 4u);  // NVML sees all four
}

TEST_F(ProbeHw, AddressSpaceLimitAtTheHardLimitIsNotRaised) {
#ifdef GD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer needs more address space than the limit under test";
#endif
  // `ulimit -v N` in bash sets soft and hard: nothing may lift it, so no
  // proof run. The limit is set in a child: a lowered hard limit is for good.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit limited{32ull << 30, 32ull << 30};
    if (setrlimit(RLIMIT_AS, &limited) != 0) _exit(3);
    Snapshot s = probe("ws-4x4090-ulimit");
    bool ok =
        s.cuda.runs.size() == 2 && s.cuda.runs[0].init_rc == 2 && s.cuda.runs[1].label == "clean";
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(ProbeHw, CudaProbeMeasuresItsAddressSpace) {
  Snapshot s = probe("ws-4x4090");
  const CudaRun& r = s.cuda.runs.at(0);
  ASSERT_EQ(r.init_rc, 0);
  // The fake reserves 4 x 24 GB + 16 GiB at cuInit, as a driver reserves
  // its unified address range: VmSize shows it.
  EXPECT_GT(r.vm_start.size_bytes, 0u);
  EXPECT_GE(r.vm_init.size_bytes - r.vm_start.size_bytes, 100ull << 30);
  EXPECT_GE(r.vm_context.size_bytes, r.vm_init.size_bytes);
  EXPECT_GT(r.vm_init.data_bytes, 0u);
}

TEST_F(ProbeHw, FabricManagerMissing) {
  Snapshot s = probe("hgx-8xh100-no-fm");
  EXPECT_EQ(s.cuda.runs.at(0).init_rc, 802);
  ASSERT_EQ(s.nvml.gpus.size(), 8u);
  for (const auto& g : s.nvml.gpus) {
    EXPECT_EQ(g.fabric_state.rc, 0);
    EXPECT_EQ(g.fabric_state.value, 1);  // NOT_STARTED
  }
  EXPECT_EQ(s.nvml.gpus[1].pci_bus_id.value, "0000:2a:00.0");
  EXPECT_EQ(s.nvml.gpus[1].uuid.value, "GPU-5f2e81a4-7b6c-4d8e-8f10-00000000002a");
}

TEST_F(ProbeHw, HealthyHgxFabricCompleted) {
  Snapshot s = probe("hgx-8xh100");
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(r.device_count, 8);
  EXPECT_EQ(r.devices.at(7).pci_bus_id, "0000:db:00.0");  // equal GPUs: bus order
  EXPECT_EQ(s.nvml.gpus.at(0).fabric_state.value, 3);
  EXPECT_EQ(s.nvml.gpus.at(0).mig_mode_current.value, 0);
  EXPECT_EQ(s.nvml.gpus.at(0).name.value, "NVIDIA H100 80GB HBM3");
}

TEST_F(ProbeHw, MigWithoutInstances) {
  Snapshot s = probe("mig-no-instances");
  ASSERT_EQ(s.cuda.runs.size(), 2u);
  EXPECT_EQ(s.cuda.runs[0].init_rc, 0);
  EXPECT_EQ(s.cuda.runs[0].device_count, 0);
  EXPECT_EQ(s.cuda.runs[0].cudart_rc, 100);
  const NvmlGpu& g = s.nvml.gpus.at(0);
  EXPECT_EQ(g.mig_mode_current.value, 1);
  EXPECT_EQ(g.mig_instance_count.rc, 0);
  EXPECT_EQ(g.mig_instance_count.value, 0u);
}

// The taken exclusive GPU gets no context from us (it would fail with 46,
// and could take the GPU from the job): context_gate_test has the details.
TEST_F(ProbeHw, ExclusiveProcessGpuIsLeftAlone) {
  Snapshot s = probe("exclusive");
  const CudaRun& r = s.cuda.runs.at(0);
  for (const auto& d : r.devices) {
    bool taken = d.pci_bus_id == "0000:01:00.0";
    EXPECT_EQ(d.ctx_rc, taken ? -1 : 0) << d.pci_bus_id;
    // (a real pid 4242 on this machine would add its user)
    EXPECT_THAT(d.ctx_skipped, StartsWith(taken ? "busy: 1 process (pid 4242" : ""))
        << d.pci_bus_id;
    if (!taken) {
      EXPECT_EQ(d.ctx_skipped, "");
    }
  }
  const NvmlGpu& g = s.nvml.gpus.at(0);
  EXPECT_EQ(g.compute_mode.value, 3);
  ASSERT_EQ(g.processes.value.size(), 1u);
  EXPECT_EQ(g.processes.value[0].pid, 4242u);
  EXPECT_EQ(g.processes.value[0].used_memory_bytes, 20ull << 30);
}

TEST_F(ProbeHw, MemoryHeldByAnotherProcess) {
  Snapshot s = probe("memory-held");
  const NvmlGpu& g = s.nvml.gpus.at(0);
  EXPECT_EQ(g.memory_used_bytes.value, (23ull << 30) + (4u << 20));
  EXPECT_EQ(g.processes.value.at(0).pid, 31337u);
  EXPECT_EQ(s.cuda.runs.size(), 1u);  // CUDA itself starts
}

TEST_F(ProbeHw, DriverTooOldForTheRuntime) {
  Snapshot s = probe("too-old-driver");
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(r.init_rc, 0);
  EXPECT_EQ(r.driver_version, 12020);
  EXPECT_EQ(r.cudart_runtime_version, 13000);
  EXPECT_EQ(r.cudart_rc, 35);
  EXPECT_EQ(r.cudart_device_count, 0);
  EXPECT_EQ(s.nvml.driver_version.value, "535.54.03");
}

TEST_F(ProbeHw, ForwardCompatOnGeForce) {
  Snapshot s = probe("compat-unsupported");
  EXPECT_EQ(s.cuda.runs.at(0).init_rc, 804);
  EXPECT_EQ(s.cuda.runs.at(0).driver_version, 12080);  // the compat libcuda
  EXPECT_EQ(s.nvml.cuda_driver_version.value, 12040);  // the system driver
}

TEST_F(ProbeHw, LibraryMismatch) {
  Snapshot s = probe("library-mismatch");
  EXPECT_EQ(s.nvml.init_rc, 18);
  EXPECT_EQ(record(s, "nvml")->status, ProbeStatus::kFailed);
  EXPECT_THAT(record(s, "nvml")->detail, HasSubstr("(18)"));
  EXPECT_EQ(s.cuda.runs.at(0).init_rc, 803);
}

TEST_F(ProbeHw, ContainerWithoutGpusAndUvmMissing) {
  Snapshot none = probe("no-devices");
  EXPECT_EQ(none.nvml.init_rc, 0);
  EXPECT_EQ(none.nvml.device_count.value, 0u);
  EXPECT_EQ(none.cuda.runs.at(0).init_rc, 100);
  Snapshot uvm = probe("uvm-missing");
  EXPECT_EQ(uvm.cuda.runs.at(0).init_rc, 999);
  EXPECT_EQ(uvm.nvml.gpus.size(), 4u);
}

TEST_F(ProbeHw, LostGpu) {
  Snapshot s = probe("gpu-lost");
  EXPECT_EQ(s.nvml.device_count.value, 4u);
  EXPECT_EQ(s.nvml.gpus.at(3).handle_rc, 15);  // GPU_IS_LOST
  EXPECT_EQ(s.nvml.gpus.at(3).name.rc, -1);
  EXPECT_EQ(s.cuda.runs.at(0).device_count, 3);
}

}  // namespace
}  // namespace gd
