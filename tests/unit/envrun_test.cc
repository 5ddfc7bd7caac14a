// The model behind `gpudoctor env` and `gpudoctor run`: which GPUs are fit,
// the job's environment, the env fixes, the renderers, local rank and CPU
// lists (report/gpu_fitness.h, report/env_render.h).
#include <gtest/gtest.h>

#include "checks/runner.h"
#include "job/env_render.h"
#include "job/fitness.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using fixtures::ws_4x4090;

constexpr const char* kU01 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001";
constexpr const char* kU21 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021";
constexpr const char* kU41 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041";
constexpr const char* kU61 = "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000061";

Finding finding(std::string id, Severity sev, std::vector<std::string> gpus = {},
                std::string follows_from = "") {
  Finding f;
  f.id = std::move(id);
  f.severity = sev;
  f.gpus = std::move(gpus);
  f.follows_from = std::move(follows_from);
  f.summary = "summary of " + f.id;
  return f;
}

Report report_of(const Snapshot& s, std::vector<Finding> findings) {
  Report r;
  r.findings = std::move(findings);
  r.snapshot = &s;
  return r;
}

// The report the real checks make of `s`.
using testing_util::checked;

std::string value_of(const JobEnv& j, const std::string& name) {
  const EnvSetting* s = j.find(name);
  return s == nullptr ? "<unset>" : s->value;
}

TEST(GpuFitness, HealthyMachineListsEveryGpuInSmiOrderWithItsCpus) {
  Snapshot s = ws_4x4090();
  Report r = checked(s);
  Fitness f = assess_fitness(s, r);
  ASSERT_EQ(f.gpus.size(), 4u);
  EXPECT_EQ(f.healthy_count(), 4u);
  EXPECT_TRUE(f.machine_ids.empty());
  EXPECT_EQ(f.gpus[0].bus_id, "0000:01:00.0");
  EXPECT_EQ(f.gpus[0].uuid, kU01);
  EXPECT_EQ(f.gpus[0].smi_index, 0);
  EXPECT_EQ(f.gpus[0].cuda_pci_index, 0);
  EXPECT_EQ(f.gpus[2].bus_id, "0000:41:00.0");
  EXPECT_EQ(f.gpus[2].numa_node, 1);
  EXPECT_EQ(f.gpus[2].local_cpulist, "16-31,48-63");
  EXPECT_EQ(f.gpus[3].cuda_pci_index, 3);
  // The order mismatch of this machine is answered by the plan, not a GPU fault.
  EXPECT_NE(std::find(f.answered_ids.begin(), f.answered_ids.end(), "device-order.mismatch"),
            f.answered_ids.end());
}

TEST(GpuFitness, FailNamingAGpuMakesOnlyThatGpuUnfit) {
  Snapshot s = ws_4x4090();
  Report r = report_of(s, {finding("gpu.fallen-off-bus", Severity::kFail, {"00000000:41:00.0"}),
                           finding("xid.79", Severity::kFail, {"0000:41:00.0"}),
                           finding("persistence-mode.off", Severity::kWarn, {"0000:01:00.0"})});
  Fitness f = assess_fitness(s, r);
  EXPECT_EQ(f.healthy_count(), 3u);
  const GpuFitness* g = f.find("0000:41:00.0");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->healthy);
  EXPECT_EQ(g->unhealthy_ids, (std::vector<std::string>{"gpu.fallen-off-bus", "xid.79"}));
  EXPECT_TRUE(f.find("0000:01:00.0")->healthy);  // a warning is not unfit
  EXPECT_EQ(describe_unfit(f), "0000:41:00.0 (gpu.fallen-off-bus, xid.79)");
}

TEST(GpuFitness, FailNamingNoGpuMakesEveryGpuUnfit) {
  Snapshot s = ws_4x4090();
  Report r = report_of(
      s, {finding("memory.address-space-limit", Severity::kFail),
          finding("cuda.init-failed", Severity::kFail, {}, "memory.address-space-limit")});
  Fitness f = assess_fitness(s, r);
  EXPECT_EQ(f.healthy_count(), 0u);
  EXPECT_EQ(f.machine_ids,
            (std::vector<std::string>{"memory.address-space-limit", "cuda.init-failed"}));
  EXPECT_EQ(describe_unfit(f), "every GPU (memory.address-space-limit, cuda.init-failed)");
}

TEST(GpuFitness, SelectionFindingsDoNotCountAgainstGpus) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,0";
  Report r = checked(s);
  Fitness f = assess_fitness(s, r);
  EXPECT_EQ(f.healthy_count(), 4u) << describe_unfit(f);
}

TEST(GpuFitness, LostGpuOnTheBusOnlyIsListedUnfit) {
  Snapshot s = ws_4x4090();
  s.nvml.gpus[3].handle_rc = 15;  // GPU_IS_LOST
  s.nvml.gpus[3].pci_bus_id = fixtures::nv_rc<std::string>(-1);
  Report r = report_of(s, {});
  Fitness f = assess_fitness(s, r);
  ASSERT_EQ(f.gpus.size(), 4u);
  EXPECT_EQ(f.gpus[3].bus_id, "0000:61:00.0");
  EXPECT_FALSE(f.gpus[3].enumerable);
  EXPECT_FALSE(f.gpus[3].healthy);
  EXPECT_EQ(f.gpus[3].cuda_pci_index, -1);
  EXPECT_EQ(describe_unfit(f), "0000:61:00.0 (listed by neither NVML nor CUDA)");
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_EQ(value_of(j, "CUDA_VISIBLE_DEVICES"), std::string(kU01) + "," + kU21 + "," + kU41);
}

TEST(GpuFitness, StubDirectoryInLibraryPathIsAFixThatCuresTheStub) {
  Snapshot s = ws_4x4090();
  s.env.vars["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64/stubs/:/opt/extra/lib";
  Report r = report_of(s, {finding("cuda.stub-library", Severity::kFail),
                           finding("cuda.init-failed", Severity::kFail, {}, "cuda.stub-library")});
  Fitness f = assess_fitness(s, r);
  EXPECT_EQ(f.healthy_count(), 4u);
  ASSERT_EQ(f.fixes.size(), 1u);
  EXPECT_EQ(f.fixes[0].name, "LD_LIBRARY_PATH");
  EXPECT_EQ(f.fixes[0].value, "/opt/extra/lib");
  EXPECT_EQ(f.fixes[0].ids, std::vector<std::string>{"cuda.stub-library"});
}

TEST(GpuFitness, StubFromTheLinkerCacheHasNoEnvFixAndBlocksEveryGpu) {
  Snapshot s = ws_4x4090();  // LD_LIBRARY_PATH holds no stubs directory
  Report r = report_of(s, {finding("cuda.stub-library", Severity::kFail)});
  Fitness f = assess_fitness(s, r);
  EXPECT_TRUE(f.fixes.empty());
  EXPECT_EQ(f.healthy_count(), 0u);
}

TEST(GpuFitness, StubAndCompatBothLeaveOneLibraryPath) {
  Snapshot s = ws_4x4090();
  s.env.vars["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.8/compat:/x/stubs:/opt/lib";
  Report r = report_of(s, {finding("cuda.stub-library", Severity::kFail),
                           finding("cuda.compat-mismatch", Severity::kFail)});
  Fitness f = assess_fitness(s, r);
  ASSERT_EQ(f.fixes.size(), 1u);
  EXPECT_EQ(f.fixes[0].value, "/opt/lib");
  EXPECT_EQ(f.fixes[0].ids,
            (std::vector<std::string>{"cuda.stub-library", "cuda.compat-mismatch"}));
}

TEST(GpuFitness, ContainerCapabilitiesIsAContainerOnlyFix) {
  Snapshot s = ws_4x4090();
  s.env.vars["NVIDIA_DRIVER_CAPABILITIES"] = "utility";
  Report r = report_of(s, {finding("container.capabilities", Severity::kFail)});
  Fitness f = assess_fitness(s, r);
  ASSERT_EQ(f.fixes.size(), 1u);
  EXPECT_EQ(f.fixes[0].value, "utility,compute");
  EXPECT_TRUE(f.fixes[0].container_only);
  EXPECT_EQ(f.healthy_count(), 0u);  // the running container cannot be fixed from inside
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_EQ(render_env(j, EnvFormat::kSh, "h").find("NVIDIA_DRIVER_CAPABILITIES"),
            std::string::npos);
  EXPECT_NE(render_env(j, EnvFormat::kDocker, "h").find("-e NVIDIA_DRIVER_CAPABILITIES="),
            std::string::npos);
}

TEST(JobEnv, EnvListsTheFitGpusByUuidInPciOrder) {
  Snapshot s = ws_4x4090();
  Report r = report_of(s, {finding("xid.79", Severity::kFail, {"0000:21:00.0"})});
  Fitness f = assess_fitness(s, r);
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_EQ(value_of(j, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(value_of(j, "CUDA_VISIBLE_DEVICES"), std::string(kU01) + "," + kU41 + "," + kU61);
  ASSERT_EQ(j.excluded.size(), 1u);
  EXPECT_EQ(f.gpus[j.excluded[0]].bus_id, "0000:21:00.0");
  EXPECT_NE(j.find("CUDA_VISIBLE_DEVICES")->why.find("left out: 0000:21:00.0 (xid.79)"),
            std::string::npos);
}

TEST(JobEnv, RunWithoutExcludeKeepsUnfitGpusAndSetsNoVisibleDevices) {
  Snapshot s = ws_4x4090();
  Report r = report_of(s, {finding("xid.79", Severity::kFail, {"0000:21:00.0"})});
  Fitness f = assess_fitness(s, r);
  JobEnv j = plan_job_env(s, f, JobEnvOptions{false, false});
  EXPECT_EQ(value_of(j, "CUDA_VISIBLE_DEVICES"), "<unset>");
  EXPECT_EQ(j.visible.size(), 4u);
  EXPECT_EQ(j.visible_healthy(f), 3u);
  ASSERT_EQ(j.unhealthy_kept.size(), 1u);
}

TEST(JobEnv, UserIndicesAreTranslatedUnderTheirOwnOrderNeverWidened) {
  Snapshot s = ws_4x4090();
  // FASTEST_FIRST (unset): CUDA 0 = 0000:41, 1 = 0000:61, 2 = 0000:01.
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "2,0";
  Report r = report_of(s, {finding("xid.79", Severity::kFail, {"0000:41:00.0"})});
  Fitness f = assess_fitness(s, r);
  JobEnv excl = plan_job_env(s, f, JobEnvOptions{true, false});
  EXPECT_EQ(value_of(excl, "CUDA_VISIBLE_DEVICES"), kU01);
  JobEnv keep = plan_job_env(s, f, JobEnvOptions{false, false});
  EXPECT_EQ(value_of(keep, "CUDA_VISIBLE_DEVICES"), std::string(kU01) + "," + kU41);
  EXPECT_EQ(value_of(keep, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
}

TEST(JobEnv, UserIndicesUnderPciOrder) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "1";
  Fitness f = assess_fitness(s, report_of(s, {}));
  EXPECT_EQ(value_of(plan_job_env(s, f, JobEnvOptions{}), "CUDA_VISIBLE_DEVICES"), kU21);
}

TEST(JobEnv, EntriesAfterARejectedOneAreTheUsersToo) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,2,-1,1";
  Fitness f = assess_fitness(s, report_of(s, {}));
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_EQ(value_of(j, "CUDA_VISIBLE_DEVICES"), std::string(kU41) + "," + kU01 + "," + kU61);
  ASSERT_EQ(j.notes.size(), 1u);
  EXPECT_NE(j.notes[0].find("CUDA itself would use 0000:41:00.0, 0000:01:00.0"), std::string::npos);
}

TEST(JobEnv, MinusOneSelectsNothing) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "-1";
  Fitness f = assess_fitness(s, report_of(s, {}));
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_TRUE(j.visible_known);
  EXPECT_TRUE(j.visible.empty());
  EXPECT_EQ(value_of(j, "CUDA_VISIBLE_DEVICES"), "");
}

TEST(JobEnv, MigSelectionIsLeftAsSet) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "MIG-5c2f6a8e-0000-4000-8000-000000000001";
  Fitness f = assess_fitness(s, report_of(s, {}));
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_TRUE(j.kept_user_value);
  EXPECT_EQ(value_of(j, "CUDA_VISIBLE_DEVICES"), "<unset>");  // not touched
  EXPECT_EQ(value_of(j, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");  // a MIG id has no order
  EXPECT_FALSE(j.notes.empty());
}

TEST(JobEnv, UnpredictableOrderLeavesIndicesAndTheOrderAlone) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "1";
  s.cuda.runs.clear();
  for (auto& g : s.nvml.gpus) g.max_sm_clock_mhz = fixtures::nv_rc<uint32_t>(3);
  Fitness f = assess_fitness(s, report_of(s, {}));
  JobEnv j = plan_job_env(s, f, JobEnvOptions{});
  EXPECT_TRUE(j.kept_user_value);
  EXPECT_EQ(j.find("CUDA_DEVICE_ORDER"), nullptr);
  EXPECT_EQ(j.find("CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_FALSE(j.visible_known);
}

TEST(JobEnv, WithoutUuidsIndicesInPciOrder) {
  Snapshot s = ws_4x4090();
  for (auto& g : s.nvml.gpus) g.uuid = fixtures::nv_rc<std::string>(3);
  for (auto& d : s.cuda.runs[0].devices) d.uuid.clear();
  Report r = report_of(s, {finding("xid.79", Severity::kFail, {"0000:01:00.0"})});
  Fitness f = assess_fitness(s, r);
  EXPECT_EQ(value_of(plan_job_env(s, f, JobEnvOptions{}), "CUDA_VISIBLE_DEVICES"), "1,2,3");
}

TEST(EnvRender, EachFormat) {
  JobEnv j;
  j.settings.push_back({"CUDA_DEVICE_ORDER", "PCI_BUS_ID", "why one", {"device-order.mismatch"}});
  j.settings.push_back({"LD_LIBRARY_PATH", "/opt/it's here", "why two", {}});
  EXPECT_EQ(render_env(j, EnvFormat::kSh, "head"),
            "# head\n"
            "# why one [device-order.mismatch]\n"
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
            "# why two\n"
            "export LD_LIBRARY_PATH='/opt/it'\\''s here'\n");
  EXPECT_EQ(render_env(j, EnvFormat::kFish, "head"),
            "# head\n"
            "# why one [device-order.mismatch]\n"
            "set -gx CUDA_DEVICE_ORDER PCI_BUS_ID\n"
            "# why two\n"
            "set -gx LD_LIBRARY_PATH '/opt/it\\'s here'\n");
  EXPECT_EQ(render_env(j, EnvFormat::kDocker, "head"),
            "-e CUDA_DEVICE_ORDER=PCI_BUS_ID -e 'LD_LIBRARY_PATH=/opt/it'\\''s here'\n");
  EXPECT_EQ(render_env(j, EnvFormat::kK8s, "head"),
            "# head\n"
            "env:\n"
            "  # why one [device-order.mismatch]\n"
            "  - name: CUDA_DEVICE_ORDER\n"
            "    value: \"PCI_BUS_ID\"\n"
            "  # why two\n"
            "  - name: LD_LIBRARY_PATH\n"
            "    value: \"/opt/it's here\"\n");
}

TEST(EnvRender, CommentsStayOneLineAndEmptyValuesAreQuoted) {
  JobEnv j;
  j.settings.push_back({"CUDA_VISIBLE_DEVICES", "", "from CUDA_VISIBLE_DEVICES=0\nrm -rf /", {}});
  std::string sh = render_env(j, EnvFormat::kSh, "h");
  EXPECT_EQ(sh, "# h\n# from CUDA_VISIBLE_DEVICES=0?rm -rf /\nexport CUDA_VISIBLE_DEVICES=''\n");
  EXPECT_EQ(yaml_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\x0a\"");
  EXPECT_EQ(render_env(JobEnv{}, EnvFormat::kK8s, "h"), "# h\nenv: []\n");
}

TEST(EnvRender, FormatNames) {
  EXPECT_EQ(parse_env_format("sh"), EnvFormat::kSh);
  EXPECT_EQ(parse_env_format("k8s"), EnvFormat::kK8s);
  EXPECT_FALSE(parse_env_format("bash").has_value());
  EXPECT_FALSE(parse_env_format("").has_value());
}

TEST(LocalRank, FirstSetVariableWins) {
  EXPECT_FALSE(local_rank({}).found);
  EXPECT_EQ(local_rank({{"SLURM_LOCALID", "3"}}).rank, 3);
  LocalRank both = local_rank({{"SLURM_LOCALID", "3"}, {"LOCAL_RANK", "1"}});
  EXPECT_EQ(both.rank, 1);
  EXPECT_EQ(both.variable, "LOCAL_RANK");
  EXPECT_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}}).variable,
            "OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_FALSE(local_rank({{"LOCAL_RANK", "-1"}}).error.empty());
  EXPECT_FALSE(local_rank({{"LOCAL_RANK", ""}}).error.empty());
  EXPECT_FALSE(local_rank({{"LOCAL_RANK", "99999999999"}}).error.empty());
}

TEST(CpuList, ParseAndFormat) {
  auto a = parse_cpu_list("0-3,8,10-11\n");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(*a, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(format_cpu_list(*a), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_TRUE(parse_cpu_list("").ok());
  for (const char* bad : {"3-1", "a", "1,,2", "-4", "0-99999999", "1-"}) {
    EXPECT_FALSE(parse_cpu_list(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace gd
