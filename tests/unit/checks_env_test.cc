// Tests of the checks about the user's settings and other processes:
// visible-devices.*, device-order.mismatch, memory.*, compute-mode.exclusive,
// mps.unreachable, mig.no-instances, gpu.missing, persistence-mode.off and
// the advice.* findings. Each id: a snapshot where it fires and one where it
// does not, on the machines of MACHINES.md (tests/unit/snapshot_builders.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checks/checks.h"
#include "checks/compare.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

const std::vector<const CheckEntry*>& owned_checks() {
  static const std::vector<const CheckEntry*> kOwned = registry_entries({
      "visible-devices",
      "device-order",
      "memory-held",
      "address-space",
      "compute-mode",
      "mps",
      "mig",
      "gpu-count",
      "persistence-mode",
      "folk-remedies",
  });
  return kOwned;
}

#define EXPECT_SEVERITY(f, sev) \
  EXPECT_EQ(severity_name((f).severity), std::string(severity_name(sev))) << describe(f)

// The classic field report: ws-4x4090 under `ulimit -v 32 GiB`, CUDA start
// fails with out of memory in both runs; NVML sees all four GPUs.
Snapshot field_report() {
  Snapshot s = ws_4x4090();
  s.limits.rlimit_as_bytes = 32ULL << 30;
  fail_cuda(s, 2);
  return s;
}

TEST(EnvChecks, HealthyMachinesNeverWarnOrFailExceptTheKnownOrder) {
  for (auto [name, s] : {std::pair{"ws-4x4090", ws_4x4090()}, {"hgx-8xh100", hgx_8xh100()}}) {
    for (const auto& o : owned_checks()) {
      auto fs = o->fn(s, kConfig);
      ASSERT_EQ(fs.size(), o->ids.size()) << name << "\n" << describe(fs);
      for (const auto& f : fs) {
        EXPECT_FALSE(f.summary.empty()) << name << " " << f.id;
        bool known_warn = std::string(name) == "ws-4x4090" && f.id == "device-order.mismatch";
        if (!known_warn) {
          EXPECT_TRUE(f.severity != Severity::kWarn && f.severity != Severity::kFail)
              << name << "\n"
              << describe(f);
        }
      }
    }
  }
}

TEST(EnvChecks, SparseSnapshotsGiveOneNotApplicablePerIdAndNeverCrash) {
  std::vector<Snapshot> sparse = {no_nvidia_machine(), Snapshot{}};
  Snapshot unloaded = ws_4x4090();
  unload_driver(unloaded);
  sparse.push_back(unloaded);
  for (const auto& s : sparse) {
    for (const auto& o : owned_checks()) {
      auto fs = o->fn(s, kConfig);
      for (const auto& id : o->ids) EXPECT_EQ(count_id(fs, id), 1) << id << "\n" << describe(fs);
      for (const auto& f : fs) {
        if (f.id == "memory.address-space-limit" || f.id == "visible-devices.invalid" ||
            f.id == "visible-devices.hides-all" || f.id.rfind("advice.", 0) == 0) {
          continue;  // these still judge the limits / env / CUDA runs
        }
        EXPECT_SEVERITY(f, Severity::kNotApplicable);
      }
    }
  }
}

// --- visible-devices ----------------------------------------------------------------

TEST(EnvChecks, VisibleDevicesInvalidEntryDropsTheRest) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,2,-1,1";
  auto fs = check_visible_devices(s, kConfig);
  Finding f = only(fs, "visible-devices.invalid");
  // CUDA starts on the two GPUs before "-1": the job runs on fewer GPUs (warn),
  // CUDA's start does not fail.
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_NE(f.summary.find("\"-1\""), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("0000:41:00.0, 0000:01:00.0"), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find("drops \"1\""), std::string::npos) << f.summary;
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:61:00.0"});
  EXPECT_TRUE(evidence_has(f, "CUDA_VISIBLE_DEVICES=\"0,2,-1,1\"")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "entry 1 \"0\": CUDA 0 = 0000:41:00.0 (nvidia-smi 2)"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "entry 3 \"-1\": rejected: negative index")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "on its own it would select 0000:61:00.0")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "export CUDA_VISIBLE_DEVICES=0,2,1")) << describe(f);
  EXPECT_TRUE(remedy_has(f,
                         "export CUDA_VISIBLE_DEVICES=GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041,"
                         "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001,"
                         "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000061"))
      << describe(f);
  EXPECT_SEVERITY(only(fs, "visible-devices.hides-all"), Severity::kOk);
}

TEST(EnvChecks, VisibleDevicesTrailingGarbageWarnsAndCleanListIsOk) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,1,abc";
  Finding f = only(check_visible_devices(s, kConfig), "visible-devices.invalid");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_NE(f.summary.find("\"abc\""), std::string::npos);

  s.env.vars["CUDA_VISIBLE_DEVICES"] = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021,1";
  f = only(check_visible_devices(s, kConfig), "visible-devices.invalid");
  EXPECT_SEVERITY(f, Severity::kWarn);  // the index after a UUID is rejected, hides nothing else

  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,1";
  auto fs = check_visible_devices(s, kConfig);
  EXPECT_SEVERITY(only(fs, "visible-devices.invalid"), Severity::kOk);
  EXPECT_SEVERITY(only(fs, "visible-devices.hides-all"), Severity::kOk);

  s.env.vars.erase("CUDA_VISIBLE_DEVICES");
  fs = check_visible_devices(s, kConfig);
  EXPECT_SEVERITY(only(fs, "visible-devices.invalid"), Severity::kNotApplicable);
  EXPECT_SEVERITY(only(fs, "visible-devices.hides-all"), Severity::kNotApplicable);
}

TEST(EnvChecks, VisibleDevicesJunkIndexWarns) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "1b9a0c7e-0d3f-4c1e-9a52-000000000041";
  Finding f = only(check_visible_devices(s, kConfig), "visible-devices.invalid");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_NE(f.summary.find("is index 1"), std::string::npos) << f.summary;
}

TEST(EnvChecks, VisibleDevicesDuplicateEmptiesTheList) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,1,0";
  auto fs = check_visible_devices(s, kConfig);
  Finding inv = only(fs, "visible-devices.invalid");
  EXPECT_SEVERITY(inv, Severity::kFail);
  EXPECT_NE(inv.summary.find("repeats a GPU"), std::string::npos);
  Finding all = only(fs, "visible-devices.hides-all");
  EXPECT_SEVERITY(all, Severity::kFail);
  EXPECT_NE(all.summary.find("twice"), std::string::npos);
  EXPECT_TRUE(remedy_has(all, "export CUDA_VISIBLE_DEVICES=0,1")) << describe(all);
}

TEST(EnvChecks, VisibleDevicesHidesAll) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "";
  auto fs = check_visible_devices(s, kConfig);
  Finding f = only(fs, "visible-devices.hides-all");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_NE(f.summary.find("empty"), std::string::npos);
  EXPECT_EQ(f.gpus.size(), 4u);
  EXPECT_TRUE(remedy_has(f, "unset CUDA_VISIBLE_DEVICES")) << describe(f);
  EXPECT_SEVERITY(only(fs, "visible-devices.invalid"), Severity::kOk);

  s.env.vars["CUDA_VISIBLE_DEVICES"] = "-1";
  fs = check_visible_devices(s, kConfig);
  f = only(fs, "visible-devices.hides-all");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_NE(f.summary.find("CUDA_VISIBLE_DEVICES=-1 hides every GPU"), std::string::npos);
  EXPECT_SEVERITY(only(fs, "visible-devices.invalid"), Severity::kInfo);

  s.env.vars["CUDA_VISIBLE_DEVICES"] = "gpu0,1";
  fs = check_visible_devices(s, kConfig);
  EXPECT_SEVERITY(only(fs, "visible-devices.hides-all"), Severity::kFail);
  f = only(fs, "visible-devices.invalid");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_TRUE(remedy_has(f, "export CUDA_VISIBLE_DEVICES=1")) << describe(f);
}

TEST(EnvChecks, VisibleDevicesHidesAllSeenByCudaItself) {
  Snapshot s = ws_4x4090();
  // A prefix the prediction accepts, but CUDA's run found no device while the
  // clean run found four: CUDA's own word wins.
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041";
  CudaRun& u = user_run(s);
  u.init_rc = 100;
  u.cudart_rc = 100;
  u.devices.clear();
  u.device_count = 0;
  CudaRun clean = ws_4x4090().cuda.runs[0];
  clean.label = "clean";
  s.cuda.runs.push_back(clean);
  Finding f = only(check_visible_devices(s, kConfig), "visible-devices.hides-all");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_NO_DEVICE (100)")) << describe(f);
}

TEST(EnvChecks, NvidiaVisibleDevicesOutsideAContainerIsInfo) {
  Snapshot s = ws_4x4090();
  s.env.vars["NVIDIA_VISIBLE_DEVICES"] = "1";
  Finding f = only(check_visible_devices(s, kConfig), "visible-devices.invalid");
  EXPECT_SEVERITY(f, Severity::kInfo);
  EXPECT_TRUE(evidence_has(f, "CUDA reads only CUDA_VISIBLE_DEVICES")) << describe(f);
  s.container.in_container = true;
  EXPECT_SEVERITY(only(check_visible_devices(s, kConfig), "visible-devices.invalid"),
                  Severity::kNotApplicable);
}

// --- device-order ----------------------------------------------------------------------

TEST(EnvChecks, DeviceOrderMismatchObservedOnWs4x4090) {
  Snapshot s = ws_4x4090();
  Finding f = only(check_device_order(s, kConfig), "device-order.mismatch");
  // A note: nothing shows that a program here picks GPUs by index.
  EXPECT_SEVERITY(f, Severity::kInfo);
  EXPECT_NE(f.summary.find("CUDA device 0 is nvidia-smi's GPU 2 (0000:41:00.0)"), std::string::npos)
      << f.summary;
  EXPECT_TRUE(evidence_has(f, "observed")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA 0 = nvidia-smi 2 = 0000:41:00.0 (2640 MHz)")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA 1 = nvidia-smi 3 = 0000:61:00.0 (2580 MHz)")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA 2 = nvidia-smi 0 = 0000:01:00.0 (2520 MHz)")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA 3 = nvidia-smi 1 = 0000:21:00.0 (2520 MHz)")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "export CUDA_DEVICE_ORDER=PCI_BUS_ID")) << describe(f);
  EXPECT_EQ(f.gpus.size(), 4u);
  // GPUs picked by index: the order decides which card a job gets.
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "2,3";
  EXPECT_SEVERITY(only(check_device_order(s, kConfig), "device-order.mismatch"), Severity::kWarn);
  // By UUID: no order changes what it picks.
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041";
  EXPECT_SEVERITY(only(check_device_order(s, kConfig), "device-order.mismatch"), Severity::kInfo);
}

TEST(EnvChecks, DeviceOrderMismatchPredictedWhenCudaFails) {
  Snapshot s = field_report();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0";
  Finding f = only(check_device_order(s, kConfig), "device-order.mismatch");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f, "predicted from NVML")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA 0 = nvidia-smi 2 = 0000:41:00.0 (2640 MHz)")) << describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "entry \"0\" therefore selects 0000:41:00.0, which nvidia-smi "
                           "calls GPU 2"))
      << describe(f);
}

TEST(EnvChecks, DeviceOrderOkWhenPciBusIdOrSameOrder) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  EXPECT_SEVERITY(only(check_device_order(s, kConfig), "device-order.mismatch"), Severity::kOk);
  Finding f = only(check_device_order(hgx_8xh100(), kConfig), "device-order.mismatch");
  EXPECT_SEVERITY(f, Severity::kOk);
  s = ws_4x4090();
  s.nvml.gpus.resize(1);
  s.nvml.device_count = nv_ok<uint32_t>(1);
  EXPECT_SEVERITY(only(check_device_order(s, kConfig), "device-order.mismatch"),
                  Severity::kNotApplicable);
}

// --- memory.held-by-other-process ---------------------------------------------------------

Snapshot ws_gpu2_full() {
  Snapshot s = ws_4x4090();
  NvmlGpu& g = s.nvml.gpus[2];
  g.memory_used_bytes = nv_ok<uint64_t>(25000000000ULL);
  NvmlProcess p;
  p.pid = 4242;
  p.used_memory_bytes = 24000000000ULL;
  g.processes = nv_ok(std::vector<NvmlProcess>{p});
  s.processes.push_back({4242, "python3"});
  return s;
}

TEST(EnvChecks, MemoryHeldIsANoteNamingWhoAndFailsWhenCudaRanOutOfMemory) {
  Snapshot s = ws_gpu2_full();
  Finding f = only(check_memory_held(s, kConfig), "memory.held-by-other-process");
  // Asked by a person: a busy GPU is a note, not a fault (issue 34).
  EXPECT_SEVERITY(f, Severity::kInfo);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_NE(f.summary.find("97% full"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f, "pid 4242 (python3) uses 24000000000 bytes")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "nvidia-smi --query-compute-apps=pid,used_memory --format=csv"));
  // Not the user's own process (no owner known): never told to kill it.
  EXPECT_FALSE(remedy_has(f, "kill 4242")) << describe(f);
  // The free GPUs, all of them: 0, 1 and 3.
  EXPECT_TRUE(remedy_has(f,
                         "export CUDA_VISIBLE_DEVICES=GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001,"
                         "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021,"
                         "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000061"))
      << describe(f);

  for (auto& d : user_run(s).devices) {
    if (d.pci_bus_id == "0000:41:00.0") d.ctx_rc = 2;
  }
  f = only(check_memory_held(s, kConfig), "memory.held-by-other-process");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_OUT_OF_MEMORY (2)")) << describe(f);
}

// A Slurm job's process on GPU 2 (cgroup, slurmstepd seen), as the workload
// probe records it; `state` "running" or "ended".
Snapshot ws_gpu2_job(const std::string& state, uint32_t uid = 1000) {
  Snapshot s = ws_gpu2_full();
  s.workload.attempted = true;
  s.workload.managers = {"slurmd"};
  GpuProcess p;
  p.pid = 4242;
  p.gpus = {{"0000:41:00.0", "compute", 24000000000ULL}};
  p.visible = true;
  p.comm = "python3";
  p.uid = uid;
  p.user = "alice";
  p.cgroup = "/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0";
  p.state = "S";
  p.age_s = 7380;
  p.job_kind = "slurm";
  p.job_id = "4711";
  p.job_source = "cgroup";
  p.job_state = state;
  p.job_evidence = state == "running"
                       ? "slurmstepd [4711.0] pid 812 runs"
                       : "no slurmstepd for job 4711 on this node; slurmd pid 90 runs";
  if (state == "running") s.workload.slurm_jobs = {"4711"};
  s.workload.processes = {p};
  return s;
}

TEST(EnvChecks, MemoryHeldByARunningJobIsOkOnAJobNode) {
  Config fleet;
  fleet.fleet = true;
  Snapshot s = ws_gpu2_job("running");
  auto all = check_memory_held(s, fleet);
  Finding f = all.front();
  EXPECT_SEVERITY(f, Severity::kOk);
  EXPECT_NE(f.summary.find("held by slurm job 4711"), std::string::npos) << f.summary;
  EXPECT_TRUE(f.comparisons.empty()) << describe(f);  // an ok states only what it meets
  EXPECT_TRUE(evidence_has(f, "pid 4242 (python3, alice, slurm job 4711, running 2 h 3 min)"))
      << describe(f);
  // The other GPUs' ok finding comes with it.
  ASSERT_EQ(all.size(), 2u);
  EXPECT_SEVERITY(all[1], Severity::kOk);
  // Interactively: a note; the user's own process may be killed.
  s.limits.uid = 1000;
  f = only(check_memory_held(s, kConfig), "memory.held-by-other-process");
  EXPECT_SEVERITY(f, Severity::kInfo);
  EXPECT_TRUE(remedy_has(f, "kill 4242")) << describe(f);
}

TEST(EnvChecks, AnOrphanFailsOnAJobNodeAndWarnsWhenAsked) {
  Config fleet;
  fleet.fleet = true;
  Finding f = only(check_orphans(ws_gpu2_job("running"), fleet), "process.orphan");
  EXPECT_SEVERITY(f, Severity::kOk);
  f = only(check_orphans(ws_gpu2_job("ended"), fleet), "process.orphan");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_NE(f.summary.find("pid 4242 (python3, alice, slurm job 4711, running 2 h 3 min)"),
            std::string::npos)
      << f.summary;
  EXPECT_EQ(f.brief, "orphan pid 4242 (slurm job 4711 ended) holds 22.4 GiB on GPU 0000:41:00.0");
  EXPECT_TRUE(evidence_has(f, "cgroup /system.slice/slurmstepd.scope/job_4711")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "no slurmstepd for job 4711")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "kill 4242")) << describe(f);
  f = only(check_orphans(ws_gpu2_job("ended"), kConfig), "process.orphan");
  EXPECT_SEVERITY(f, Severity::kWarn);
  // Without the workload probe (an older snapshot) nothing is judged.
  EXPECT_SEVERITY(only(check_orphans(ws_gpu2_full(), fleet), "process.orphan"),
                  Severity::kNotApplicable);
}

TEST(EnvChecks, MemoryHeldOkBelowThresholdAndNotApplicableWithoutNvml) {
  Finding f = only(check_memory_held(ws_4x4090(), kConfig), "memory.held-by-other-process");
  EXPECT_SEVERITY(f, Severity::kOk);
  Config strict;
  strict.memory_held_fraction = 0.99;
  EXPECT_SEVERITY(only(check_memory_held(ws_gpu2_full(), strict), "memory.held-by-other-process"),
                  Severity::kOk);
  Snapshot s = ws_4x4090();
  s.nvml.init_rc = 9;
  f = only(check_memory_held(s, kConfig), "memory.held-by-other-process");
  EXPECT_SEVERITY(f, Severity::kNotApplicable);
  EXPECT_NE(f.summary.find("NVML_ERROR_DRIVER_NOT_LOADED (9)"), std::string::npos);
}

// --- memory.address-space-limit --------------------------------------------------------

constexpr const char* kAsId = "memory.address-space-limit";

TEST(EnvChecks, AddressSpaceLimitIsTheRootCauseOfOutOfMemory) {
  Finding f = only(check_address_space(field_report(), kConfig), "memory.address-space-limit");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_NE(f.summary.find("32.0 GiB"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f, "RLIMIT_AS (ulimit -v) = 34359738368 bytes (32.0 GiB)"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "`ulimit -v` shows 33554432")) << describe(f);
  // 4 x 25757220864 + 128 GiB + 8 GiB
  EXPECT_TRUE(evidence_has(f, "= 249057771520 bytes")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "cuInit returned CUDA_ERROR_OUT_OF_MEMORY (2)")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "cudaErrorMemoryAllocation (2): out of memory")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "failed the same way")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "NVML, which reserves no such address space, sees 4 GPUs"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "ulimit -v unlimited")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "/etc/security/limits.conf")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "--propagate=NONE")) << describe(f);
}

TEST(EnvChecks, AddressSpaceOkWhenUnlimitedOrCudaWorks) {
  Finding f = only(check_address_space(ws_4x4090(), kConfig), "memory.address-space-limit");
  EXPECT_SEVERITY(f, Severity::kOk);
  Snapshot s = ws_4x4090();
  s.limits.rlimit_as_bytes = 32ULL << 30;
  f = only(check_address_space(s, kConfig), "memory.address-space-limit");
  EXPECT_SEVERITY(f, Severity::kOk);
  EXPECT_TRUE(evidence_has(f, "34359738368 bytes")) << describe(f);
}

TEST(EnvChecks, AddressSpaceWarnsBeforeCudaIsTried) {
  Snapshot s = ws_4x4090();
  s.limits.rlimit_as_bytes = 32ULL << 30;
  s.cuda = CudaInfo{};
  Finding f = only(check_address_space(s, kConfig), "memory.address-space-limit");
  EXPECT_SEVERITY(f, Severity::kWarn);
  s.limits.rlimit_as_bytes = 1ULL << 40;  // above the ~232 GiB estimate
  EXPECT_SEVERITY(only(check_address_space(s, kConfig), "memory.address-space-limit"),
                  Severity::kOk);
}

// The H200 record's measurements (tests/device/recorded/h200-vm-580.159.04):
// a bare process took 22 MiB, 12,562 MiB after cuInit, 13,281 MiB after a
// context; PyTorch failed under ulimit -v 16000000 and worked from 18 GiB.
Snapshot measured_under(uint64_t limit_bytes) {
  constexpr uint64_t kMiB = 1ULL << 20;
  Snapshot s = ws_4x4090();
  s.limits.rlimit_as_bytes = limit_bytes;
  s.limits.rlimit_as_hard_bytes = limit_bytes;
  CudaRun& u = user_run(s);
  u.vm_start.size_bytes = 22 * kMiB;
  u.vm_init.size_bytes = 12562 * kMiB;
  u.vm_context.size_bytes = 13281 * kMiB;
  if (limit_bytes < u.vm_init.size_bytes) {
    u.init_rc = 2;
    u.cudart_rc = 2;
    u.device_count_rc = -1;
    u.devices.clear();
    u.vm_init = {};
    u.vm_context = {};
  }
  return s;
}

TEST(EnvChecks, AddressSpaceSweepFollowsTheMeasuredReservation) {
  const std::pair<uint64_t, Severity> sweep[] = {
      {4ULL << 30, Severity::kFail},         {8ULL << 30, Severity::kFail},
      {16000000ULL * 1024, Severity::kWarn}, {17ULL << 30, Severity::kWarn},
      {18ULL << 30, Severity::kOk},          {24ULL << 30, Severity::kOk},
      {32ULL << 30, Severity::kOk}};
  for (auto [limit, want] : sweep) {
    Finding f = only(check_address_space(measured_under(limit), kConfig), kAsId);
    EXPECT_SEVERITY(f, want) << limit;
    EXPECT_EQ(f.severity == Severity::kOk, all_met(f.comparisons)) << describe(f);
  }
  Finding warn = only(check_address_space(measured_under(16000000ULL * 1024), kConfig), kAsId);
  EXPECT_NE(warn.summary.find("CUDA took 13.0 GiB"), std::string::npos) << warn.summary;
  EXPECT_NE(warn.summary.find("PyTorch 2.11.0+cu130 needs about 17.1 GiB"), std::string::npos)
      << warn.summary;
  // 13,281 MiB + JAX's 7,180 MiB beyond its context + 1 GiB, in whole GiB.
  EXPECT_TRUE(remedy_has(warn, "ulimit -v 22020096   # 21.0 GiB")) << describe(warn);
  ASSERT_EQ(warn.comparisons.size(), 2u);
  EXPECT_TRUE(warn.comparisons[0].met);
  EXPECT_FALSE(warn.comparisons[1].met);
  EXPECT_EQ(warn.comparisons[1].required, std::to_string(17469ULL << 20));
}

TEST(EnvChecks, AddressSpaceLimitProvenByTheRaisedRun) {
  Snapshot s = measured_under(8ULL << 30);
  s.limits.rlimit_as_hard_bytes.reset();  // a soft limit the user may lift
  CudaRun raised = measured_under(32ULL << 30).cuda.runs.at(0);
  raised.label = kRaisedLimitLabel;
  raised.rlimit_as_bytes.reset();
  s.cuda.runs.push_back(raised);
  Finding f = only(check_address_space(s, kConfig), kAsId);
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_NE(f.summary.find("with the limit raised, CUDA started and took 13.0 GiB"),
            std::string::npos)
      << f.summary;
  EXPECT_TRUE(evidence_has(f, "measured with the soft limits raised to the hard ones"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "CUDA with the soft limit raised to the hard one (unlimited): "
                           "cuInit succeeded"))
      << describe(f);
  EXPECT_FALSE(all_met(f.comparisons));
  EXPECT_TRUE(remedy_has(f, "ulimit -v 22020096")) << describe(f);
}

TEST(EnvChecks, AddressSpaceDecidesWithoutMeminfo) {
  // issue 14: /proc/meminfo missing took the whole check to n/a, though
  // RLIMIT_AS, which decides it, was read.
  Snapshot s = field_report();
  s.limits.mem_total_bytes.reset();
  s.limits.commit_limit_bytes.reset();
  for (auto& p : s.probes) {
    if (p.name != "limits") continue;
    p.status = ProbeStatus::kUnavailable;
    p.gaps.push_back({"limits.mem_total_bytes", "no /proc/meminfo"});
  }
  Finding f = only(check_address_space(s, kConfig), kAsId);
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "host memory unknown (limits.mem_total_bytes: no /proc/meminfo)"))
      << describe(f);
  for (auto& p : s.probes) {
    if (p.name == "limits") p.gaps.push_back({"limits.rlimit_as_bytes", "unrecognised limits"});
  }
  f = only(check_address_space(s, kConfig), kAsId);
  EXPECT_SEVERITY(f, Severity::kNotApplicable);
  EXPECT_NE(f.summary.find("limits.rlimit_as_bytes"), std::string::npos) << f.summary;
}

TEST(EnvChecks, AddressSpaceStrictOvercommit) {
  Snapshot s = ws_4x4090();
  s.cuda = CudaInfo{};
  s.limits.overcommit_memory = 2;
  s.limits.commit_limit_bytes = 70ULL << 30;
  s.limits.cgroup_memory_limit_bytes = 64ULL << 30;
  Finding f = only(check_address_space(s, kConfig), "memory.address-space-limit");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_TRUE(remedy_has(f, "sudo sysctl vm.overcommit_memory=0")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "cgroup memory limit 68719476736 bytes")) << describe(f);
  s.limits.commit_limit_bytes = 1ULL << 40;
  EXPECT_SEVERITY(only(check_address_space(s, kConfig), "memory.address-space-limit"),
                  Severity::kOk);
}

// --- compute-mode.exclusive --------------------------------------------------------------

TEST(EnvChecks, ComputeModeExclusiveTaken) {
  Snapshot s = hgx_8xh100();
  NvmlGpu& g = s.nvml.gpus[3];
  g.compute_mode = nv_ok(3);
  NvmlProcess p;
  p.pid = 777;
  g.processes = nv_ok(std::vector<NvmlProcess>{p});
  Finding f = only(check_compute_mode(s, kConfig), "compute-mode.exclusive");
  // Inferred from NVML, not provoked: a note that a context would fail.
  EXPECT_SEVERITY(f, Severity::kInfo);
  EXPECT_NE(f.summary.find("would fail"), std::string::npos) << f.summary;
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:5d:00.0"});
  EXPECT_TRUE(evidence_has(f, "EXCLUSIVE_PROCESS (3)")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "export CUDA_VISIBLE_DEVICES=")) << describe(f);
  EXPECT_TRUE(remedy_has(f,
                         "sudo nvidia-smi -i 3 -c DEFAULT   # only if the mode is not your "
                         "site's policy"))
      << describe(f);
  // On a job node, the mode at work.
  Config fleet;
  fleet.fleet = true;
  auto all = check_compute_mode(s, fleet);
  EXPECT_SEVERITY(all.front(), Severity::kOk);
  EXPECT_TRUE(all.front().remedy.empty()) << describe(all.front());

  user_run(s).devices[3].ctx_rc = 46;
  f = only(check_compute_mode(s, kConfig), "compute-mode.exclusive");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_DEVICE_UNAVAILABLE (46)")) << describe(f);
}

TEST(EnvChecks, ComputeModeProhibitedFailsAndFreeExclusiveIsOk) {
  Snapshot s = hgx_8xh100();
  s.nvml.gpus[0].compute_mode = nv_ok(2);
  Finding f = only(check_compute_mode(s, kConfig), "compute-mode.exclusive");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -i 0 -c DEFAULT"));
  s = hgx_8xh100();
  s.nvml.gpus[0].compute_mode = nv_ok(3);  // nobody on it yet
  EXPECT_SEVERITY(only(check_compute_mode(s, kConfig), "compute-mode.exclusive"), Severity::kOk);
}

// --- mps.unreachable -------------------------------------------------------------------

TEST(EnvChecks, MpsUnreachable) {
  Snapshot s = hgx_8xh100();
  s.env.vars["CUDA_MPS_PIPE_DIRECTORY"] = "/tmp/mps-job";
  fail_cuda(s, 805);
  Finding f = only(check_mps(s, kConfig), "mps.unreachable");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_NE(f.summary.find("CUDA_ERROR_MPS_CONNECTION_FAILED (805)"), std::string::npos);
  EXPECT_TRUE(evidence_has(f, "CUDA_MPS_PIPE_DIRECTORY=\"/tmp/mps-job\"")) << describe(f);
  EXPECT_TRUE(remedy_has(f,
                         "export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-job; "
                         "nvidia-cuda-mps-control -d"))
      << describe(f);

  s = hgx_8xh100();
  s.env.vars["CUDA_MPS_PIPE_DIRECTORY"] = "/tmp/mps-job";
  s.cuda = CudaInfo{};
  EXPECT_SEVERITY(only(check_mps(s, kConfig), "mps.unreachable"), Severity::kFail);
}

TEST(EnvChecks, MpsNotInPlayOrReachable) {
  EXPECT_SEVERITY(only(check_mps(hgx_8xh100(), kConfig), "mps.unreachable"),
                  Severity::kNotApplicable);
  Snapshot s = hgx_8xh100();
  s.services.push_back({"nvidia-cuda-mps-control", true, {3100}, ""});
  s.processes.push_back({3100, "nvidia-cuda-mps"});
  Finding f = only(check_mps(s, kConfig), "mps.unreachable");
  EXPECT_SEVERITY(f, Severity::kOk);
  EXPECT_TRUE(evidence_has(f, "pid 3100")) << describe(f);
  // Pipe dir set, no daemon, CUDA works: only a warning (no MPS in effect).
  s = hgx_8xh100();
  s.env.vars["CUDA_MPS_PIPE_DIRECTORY"] = "/tmp/mps-job";
  EXPECT_SEVERITY(only(check_mps(s, kConfig), "mps.unreachable"), Severity::kWarn);
}

// --- mig.no-instances ------------------------------------------------------------------

TEST(EnvChecks, MigEnabledWithoutInstances) {
  Snapshot s = hgx_8xh100();
  s.nvml.gpus[1].mig_mode_current = nv_ok(1);
  s.nvml.gpus[1].mig_mode_pending = nv_ok(1);
  s.nvml.gpus[1].mig_instance_count = nv_ok<uint32_t>(0);
  auto fs = check_mig(s, kConfig);
  Finding f = only(fs, "mig.no-instances");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:2a:00.0"});
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi mig -i 1 -cgi <profile> -C")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi mig -i 1 -lgip")) << describe(f);

  s.nvml.gpus[1].mig_instance_count = nv_ok<uint32_t>(2);
  EXPECT_SEVERITY(only(check_mig(s, kConfig), "mig.no-instances"), Severity::kOk);
}

TEST(EnvChecks, MigPendingChangeWarns) {
  Snapshot s = hgx_8xh100();
  s.nvml.gpus[4].mig_mode_pending = nv_ok(1);
  Finding f = only(check_mig(s, kConfig), "mig.no-instances");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -i 4 -r")) << describe(f);
}

TEST(EnvChecks, MigNotApplicableWhenOffOrUnsupported) {
  EXPECT_SEVERITY(only(check_mig(hgx_8xh100(), kConfig), "mig.no-instances"),
                  Severity::kNotApplicable);
  EXPECT_SEVERITY(only(check_mig(ws_4x4090(), kConfig), "mig.no-instances"),
                  Severity::kNotApplicable);
}

// --- gpu.missing -------------------------------------------------------------------------

TEST(EnvChecks, GpuMissingFromNvmlAndCuda) {
  Snapshot s = ws_4x4090();
  s.nvml.gpus.erase(s.nvml.gpus.begin() + 2);
  s.nvml.device_count = nv_ok<uint32_t>(3);
  auto& devs = user_run(s).devices;
  std::erase_if(devs, [](const CudaDevice& d) { return d.pci_bus_id == "0000:41:00.0"; });
  user_run(s).device_count = 3;
  Finding f = only(check_gpu_missing(s, kConfig), "gpu.missing");
  EXPECT_SEVERITY(f, Severity::kFail);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_NE(f.summary.find("1 of the 4 GPUs on the PCI bus is not usable: 0000:41:00.0"),
            std::string::npos)
      << f.summary;
  EXPECT_TRUE(evidence_has(f, "0000:41:00.0 is missing from NVML and CUDA (PCI: driver nvidia)"))
      << describe(f);
}

TEST(EnvChecks, GpuMissingIgnoresExcludedPassthroughAndContainers) {
  EXPECT_SEVERITY(only(check_gpu_missing(hgx_8xh100(), kConfig), "gpu.missing"), Severity::kOk);
  Snapshot s = ws_4x4090();
  s.nvml.gpus.erase(s.nvml.gpus.begin() + 2);
  std::erase_if(user_run(s).devices,
                [](const CudaDevice& d) { return d.pci_bus_id == "0000:41:00.0"; });
  user_run(s).device_count = 3;
  Snapshot vfio = s;
  pci_at(vfio, "0000:41:00.0")->driver = "vfio-pci";
  Finding f = only(check_gpu_missing(vfio, kConfig), "gpu.missing");
  EXPECT_SEVERITY(f, Severity::kOk);
  EXPECT_TRUE(evidence_has(f, "vfio-pci (passthrough)")) << describe(f);
  Snapshot boxed = s;
  boxed.container.in_container = true;
  EXPECT_SEVERITY(only(check_gpu_missing(boxed, kConfig), "gpu.missing"), Severity::kOk);
}

// --- persistence-mode.off ----------------------------------------------------------------

TEST(EnvChecks, PersistenceModeOff) {
  Snapshot s = hgx_8xh100();
  for (auto& g : s.nvml.gpus) g.persistence_mode = nv_ok(0);
  service_at(s, "nvidia-persistenced")->running = false;
  Finding f = only(check_persistence(s, kConfig), "persistence-mode.off");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_EQ(f.gpus.size(), 8u);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -pm 1")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "systemctl enable --now nvidia-persistenced")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "nvidia-persistenced: not running")) << describe(f);

  Snapshot one_gpu = ws_4x4090();
  one_gpu.nvml.gpus.resize(1);
  one_gpu.nvml.gpus[0].persistence_mode = nv_ok(0);
  EXPECT_SEVERITY(only(check_persistence(one_gpu, kConfig), "persistence-mode.off"),
                  Severity::kInfo);
}

TEST(EnvChecks, PersistenceModeOnIsOk) {
  Finding f = only(check_persistence(ws_4x4090(), kConfig), "persistence-mode.off");
  EXPECT_SEVERITY(f, Severity::kOk);
  EXPECT_TRUE(evidence_has(f, "nvidia-persistenced: running (pid 1201)")) << describe(f);
}

// --- container.shm-too-small ----------------------------------------------------------------

TEST(EnvChecks, ShmSmallerThanNcclAsksWarnsOnlyWithPeers) {
  Snapshot s = hgx_8xh100();
  EXPECT_SEVERITY(only(check_shm_size(s, kConfig), "container.shm-too-small"),
                  Severity::kNotApplicable);  // /dev/shm not seen
  s.container.shm_mount = "tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0";
  EXPECT_SEVERITY(only(check_shm_size(s, kConfig), "container.shm-too-small"),
                  Severity::kOk);  // no size=: half of RAM
  s.container.in_container = true;
  s.container.shm_bytes = int64_t{64} << 20;
  Finding f = only(check_shm_size(s, kConfig), "container.shm-too-small");
  EXPECT_SEVERITY(f, Severity::kWarn);
  EXPECT_NE(f.summary.find("64.0 MiB, the container default"), std::string::npos) << f.summary;
  EXPECT_TRUE(remedy_has(f, "--shm-size=1g")) << describe(f);
  s.container.shm_bytes = int64_t{1} << 30;
  EXPECT_SEVERITY(only(check_shm_size(s, kConfig), "container.shm-too-small"), Severity::kOk);

  Snapshot one_gpu = ws_4x4090();
  one_gpu.nvml.gpus.resize(1);
  one_gpu.pci.clear();
  one_gpu.container.shm_mount = "shm /dev/shm tmpfs rw,size=65536k 0 0";
  one_gpu.container.shm_bytes = int64_t{64} << 20;
  EXPECT_SEVERITY(only(check_shm_size(one_gpu, kConfig), "container.shm-too-small"),
                  Severity::kInfo);
}

// --- advice.* --------------------------------------------------------------------------------

TEST(EnvChecks, AdviceOnTheFieldReportIsHonest) {
  Snapshot s = field_report();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0";
  auto fs = check_folk_remedies(s, kConfig);
  ASSERT_EQ(fs.size(), 3u) << describe(fs);
  for (const auto& f : fs) EXPECT_SEVERITY(f, Severity::kInfo);

  Finding order = only(fs, "advice.device-order");
  EXPECT_NE(order.summary.find("nvidia-smi's GPU 2, 0000:41:00.0"), std::string::npos)
      << order.summary;
  EXPECT_NE(order.summary.find("does not fix the failing CUDA start"), std::string::npos)
      << order.summary;
  EXPECT_TRUE(evidence_has(order, "CUDA's clean run")) << describe(order);

  Finding nvml = only(fs, "advice.nvml-based-check");
  EXPECT_NE(nvml.summary.find("say True here (NVML sees 1 GPU)"), std::string::npos)
      << nvml.summary;
  EXPECT_NE(nvml.summary.find("cudaErrorMemoryAllocation (2): out of memory"), std::string::npos)
      << nvml.summary;
  EXPECT_NE(nvml.summary.find("hides the cause"), std::string::npos) << nvml.summary;

  Finding vis = only(fs, "advice.visible-devices");
  EXPECT_NE(vis.summary.find("selects 0000:41:00.0"), std::string::npos) << vis.summary;
  EXPECT_NE(vis.summary.find("it is not the cause"), std::string::npos) << vis.summary;
}

TEST(EnvChecks, AdviceWhenTheVariableIsTheProblem) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "";
  CudaRun& u = user_run(s);
  u.init_rc = 100;
  u.cudart_rc = 100;
  u.devices.clear();
  u.device_count = 0;
  CudaRun clean = ws_4x4090().cuda.runs[0];
  clean.label = "clean";
  s.cuda.runs.push_back(clean);
  Finding vis = only(check_folk_remedies(s, kConfig), "advice.visible-devices");
  EXPECT_NE(vis.summary.find("selects no GPU"), std::string::npos) << vis.summary;
  EXPECT_NE(vis.summary.find("this variable is the problem"), std::string::npos) << vis.summary;
}

TEST(EnvChecks, AdviceOnHealthyMachines) {
  auto ws = check_folk_remedies(ws_4x4090(), kConfig);
  Finding order = only(ws, "advice.device-order");
  EXPECT_NE(order.summary.find("makes CUDA number the GPUs like nvidia-smi here"),
            std::string::npos)
      << order.summary;
  Finding nvml = only(ws, "advice.nvml-based-check");
  EXPECT_NE(nvml.summary.find("changes no answer"), std::string::npos) << nvml.summary;

  auto hgx = check_folk_remedies(hgx_8xh100(), kConfig);
  order = only(hgx, "advice.device-order");
  EXPECT_NE(order.summary.find("changes nothing here"), std::string::npos) << order.summary;
  Finding vis = only(hgx, "advice.visible-devices");
  EXPECT_NE(vis.summary.find("not set: CUDA sees every GPU (8)"), std::string::npos) << vis.summary;
}

}  // namespace
}  // namespace gd
