// The context gate (probe/context_policy.h): which GPUs the CUDA probe may
// open a context on, from NVML's answer, and the line that carries it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "probe/context_policy.h"

namespace gd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

NvmlGpu idle_gpu(uint32_t index, const std::string& bus) {
  NvmlGpu g;
  g.index = index;
  g.handle_rc = 0;
  g.pci_bus_id = {bus, 0};
  g.compute_mode = {0, 0};
  g.processes = {{}, 0};
  // graphics_processes left at rc -1: a driver without the symbol.
  return g;
}

NvmlInfo answered(std::vector<NvmlGpu> gpus) {
  NvmlInfo n;
  n.attempted = true;
  n.init_rc = 0;
  n.init_symbol = "nvmlInit_v2";
  n.device_count = {static_cast<uint32_t>(gpus.size()), 0};
  n.gpus = std::move(gpus);
  return n;
}

NvmlProcess proc(uint32_t pid) {
  NvmlProcess p;
  p.pid = pid;
  p.used_memory_bytes = 1u << 30;
  return p;
}

const WorkloadInfo kNoWorkload;

TEST(ContextPolicy, IdleGpusInDefaultModeAreAllowed) {
  ContextGate g = context_gate(answered({idle_gpu(0, "0000:17:00.0"), idle_gpu(1, "0000:41:00.0")}),
                               kNoWorkload);
  EXPECT_THAT(g.allow, ElementsAre("0000:17:00.0", "0000:41:00.0"));
  EXPECT_THAT(g.deny, IsEmpty());
  EXPECT_EQ(context_denied(g, "0000:17:00.0"), "");
  EXPECT_EQ(context_denied(g, "0000:41:00.0"), "");
  // A bus NVML did not list, and a device whose bus CUDA could not read.
  EXPECT_EQ(context_denied(g, "0000:99:00.0"),
            "NVML lists no GPU at this bus id: whether it is busy is unknown");
  EXPECT_EQ(context_denied(g, ""), g.other);
}

TEST(ContextPolicy, ABusyGpuNamesItsProcessJobAndUser) {
  NvmlGpu busy = idle_gpu(0, "0000:17:00.0");
  busy.processes.value = {proc(4711)};
  WorkloadInfo w;
  w.attempted = true;
  GpuProcess p;
  p.pid = 4711;
  p.user = "alice";
  p.job_kind = "slurm";
  p.job_id = "4711";
  w.processes.push_back(p);
  ContextGate g = context_gate(answered({busy, idle_gpu(1, "0000:41:00.0")}), w);
  EXPECT_THAT(g.allow, ElementsAre("0000:41:00.0"));
  EXPECT_EQ(context_denied(g, "0000:17:00.0"), "busy: 1 process (pid 4711, slurm job 4711, alice)");
}

TEST(ContextPolicy, BusyWithoutAWorkloadNamesThePids) {
  NvmlGpu busy = idle_gpu(0, "0000:17:00.0");
  busy.processes.value = {proc(10), proc(11), proc(12), proc(13), proc(14), proc(15)};
  ContextGate g = context_gate(answered({busy}), kNoWorkload);
  EXPECT_EQ(context_denied(g, "0000:17:00.0"),
            "busy: 6 processes (pid 10; pid 11; pid 12; pid 13; and 2 more)");
}

TEST(ContextPolicy, KubernetesContainerAndUidOnlyProcesses) {
  NvmlGpu busy = idle_gpu(0, "0000:17:00.0");
  busy.processes.value = {proc(1), proc(2)};
  WorkloadInfo w;
  GpuProcess pod;
  pod.pid = 1;
  pod.job_kind = "kubernetes";
  pod.job_id = "5c1d2e3f";
  pod.uid = 1000;
  GpuProcess ctr;
  ctr.pid = 2;
  ctr.job_kind = "container";
  ctr.job_id = "0123456789abcdef0123";
  w.processes = {pod, ctr};
  ContextGate g = context_gate(answered({busy}), w);
  EXPECT_EQ(context_denied(g, "0000:17:00.0"),
            "busy: 2 processes (pid 1, kubernetes pod 5c1d2e3f, uid 1000; pid 2, container "
            "0123456789ab)");
}

TEST(ContextPolicy, AGraphicsProcessMakesItBusyToo) {
  NvmlGpu g0 = idle_gpu(0, "0000:17:00.0");
  g0.graphics_processes = {{proc(900)}, 0};
  NvmlGpu g1 = idle_gpu(1, "0000:41:00.0");
  g1.graphics_processes = {{}, 0};  // asked, none
  ContextGate g = context_gate(answered({g0, g1}), kNoWorkload);
  EXPECT_EQ(context_denied(g, "0000:17:00.0"), "busy: 1 process (pid 900)");
  EXPECT_EQ(context_denied(g, "0000:41:00.0"), "");
}

TEST(ContextPolicy, AProcessListedAsComputeAndGraphicsCountsOnce) {
  NvmlGpu g0 = idle_gpu(0, "0000:17:00.0");
  g0.processes.value = {proc(7)};
  g0.graphics_processes = {{proc(7)}, 0};
  EXPECT_EQ(context_denied(context_gate(answered({g0}), kNoWorkload), "0000:17:00.0"),
            "busy: 1 process (pid 7)");
}

TEST(ContextPolicy, ComputeModesOtherThanDefaultAreDenied) {
  NvmlGpu excl = idle_gpu(0, "0000:17:00.0");
  excl.compute_mode.value = 3;
  NvmlGpu prohibited = idle_gpu(1, "0000:41:00.0");
  prohibited.compute_mode.value = 2;
  NvmlGpu unknown_mode = idle_gpu(2, "0000:61:00.0");
  unknown_mode.compute_mode = {0, 3};  // NVML_ERROR_NOT_SUPPORTED
  ContextGate g = context_gate(answered({excl, prohibited, unknown_mode}), kNoWorkload);
  EXPECT_THAT(g.allow, IsEmpty());
  EXPECT_EQ(context_denied(g, "0000:17:00.0"),
            "compute mode EXCLUSIVE_PROCESS (3): a context here could take the GPU from a job");
  EXPECT_EQ(context_denied(g, "0000:41:00.0"),
            "compute mode PROHIBITED (2): no process may create a context here");
  EXPECT_THAT(context_denied(g, "0000:61:00.0"),
              HasSubstr("NVML could not read its compute mode: NVML_ERROR_NOT_SUPPORTED (3)"));
}

// An exclusive GPU with a process: the process is the more telling reason.
TEST(ContextPolicy, BusyIsSaidBeforeTheComputeMode) {
  NvmlGpu g0 = idle_gpu(0, "0000:01:00.0");
  g0.compute_mode.value = 3;
  g0.processes.value = {proc(4242)};
  EXPECT_EQ(context_denied(context_gate(answered({g0}), kNoWorkload), "0000:01:00.0"),
            "busy: 1 process (pid 4242)");
}

TEST(ContextPolicy, ProcessesNvmlCouldNotListDeny) {
  NvmlGpu g0 = idle_gpu(0, "0000:17:00.0");
  g0.processes = {{}, 15};  // NVML_ERROR_GPU_IS_LOST
  NvmlGpu g1 = idle_gpu(1, "0000:41:00.0");
  g1.processes = {{}, -1};  // never asked (an earlier call failed)
  NvmlGpu g2 = idle_gpu(2, "0000:61:00.0");
  g2.graphics_processes = {{}, 3};  // asked and refused: unknown, not "never asked"
  ContextGate g = context_gate(answered({g0, g1, g2}), kNoWorkload);
  EXPECT_THAT(g.allow, IsEmpty());
  EXPECT_EQ(context_denied(g, "0000:17:00.0"),
            "NVML could not list its processes: NVML_ERROR_GPU_IS_LOST (15)");
  EXPECT_THAT(context_denied(g, "0000:41:00.0"), HasSubstr("NVML could not list its processes"));
  EXPECT_THAT(context_denied(g, "0000:61:00.0"),
              HasSubstr("NVML could not list its graphics processes"));
}

TEST(ContextPolicy, AGpuWithoutHandleOrBusIdFallsToOther) {
  NvmlGpu no_handle = idle_gpu(0, "0000:17:00.0");
  no_handle.handle_rc = 15;
  NvmlGpu no_bus = idle_gpu(1, "");
  no_bus.pci_bus_id = {"", 999};
  ContextGate g =
      context_gate(answered({no_handle, no_bus, idle_gpu(2, "0000:61:00.0")}), kNoWorkload);
  EXPECT_THAT(g.allow, ElementsAre("0000:61:00.0"));
  EXPECT_EQ(context_denied(g, "0000:17:00.0"),
            "NVML lists no GPU at this bus id (2 of its 3 GPUs gave no handle or bus id): whether "
            "it is busy is unknown");
}

TEST(ContextPolicy, NvmlNotAnsweringDeniesEverything) {
  NvmlInfo hung = answered({idle_gpu(0, "0000:17:00.0")});
  hung.child_error = "timeout after 10.0 s in nvmlInit_v2";
  ContextGate g = context_gate(hung, kNoWorkload);
  EXPECT_THAT(g.allow, IsEmpty());
  EXPECT_EQ(context_denied(g, "0000:17:00.0"),
            "NVML did not answer (the NVML child timeout after 10.0 s in nvmlInit_v2): whether "
            "it is busy is unknown");

  NvmlInfo no_lib;
  no_lib.attempted = true;
  no_lib.dlopen_error = "libnvidia-ml.so.1: cannot open shared object file";
  EXPECT_THAT(context_denied(context_gate(no_lib, kNoWorkload), "0000:17:00.0"),
              HasSubstr("(libnvidia-ml.so.1: cannot open shared object file)"));

  NvmlInfo init_failed = answered({});
  init_failed.init_rc = 9;
  EXPECT_THAT(context_denied(context_gate(init_failed, kNoWorkload), "0000:17:00.0"),
              HasSubstr("nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9)"));

  NvmlInfo count_failed = answered({});
  count_failed.device_count.rc = 999;
  EXPECT_THAT(context_denied(context_gate(count_failed, kNoWorkload), "0000:17:00.0"),
              HasSubstr("nvmlDeviceGetCount returned"));

  NvmlInfo never;  // not attempted
  EXPECT_THAT(context_gate(never, kNoWorkload).allow, IsEmpty());
}

TEST(ContextPolicy, DenyAllSaysWhy) {
  ContextGate g = deny_all_contexts("NVML did not answer within 6.0 s");
  EXPECT_EQ(context_denied(g, "0000:17:00.0"), "NVML did not answer within 6.0 s");
}

TEST(ContextGateLine, RoundTripsAsOneLine) {
  ContextGate g;
  g.allow = {"0000:17:00.0", "0000:41:00.0"};
  g.deny["0000:01:00.0"] = "busy: 1 process (pid 4711, slurm job 4711, alice)";
  g.other = "NVML lists no GPU at this bus id: whether it is busy is unknown";
  std::string line = context_gate_line(g);
  EXPECT_EQ(line,
            "{\"allow\":[\"0000:17:00.0\",\"0000:41:00.0\"],\"deny\":{\"0000:01:00.0\":\"busy: 1 "
            "process (pid 4711, slurm job 4711, alice)\"},\"other\":\"NVML lists no GPU at this "
            "bus id: whether it is busy is unknown\"}\n");
  auto back = parse_context_gate(line.substr(0, line.size() - 1));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->allow, g.allow);
  EXPECT_EQ(back->deny, g.deny);
  EXPECT_EQ(back->other, g.other);
}

TEST(ContextGateLine, InvalidUtf8InAReasonIsReplacedNotThrown) {
  ContextGate g = deny_all_contexts("busy: 1 process (pid 1, \xff\xfe)");
  std::string line = context_gate_line(g);
  EXPECT_TRUE(parse_context_gate(line.substr(0, line.size() - 1)).ok()) << line;
}

TEST(ContextGateLine, DenyWinsOverAllow) {
  auto g = parse_context_gate(
      R"({"allow": ["0000:17:00.0"], "deny": {"0000:17:00.0": "busy"}, "other": "x"})");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(context_denied(*g, "0000:17:00.0"), "busy");
}

TEST(ContextGateLine, AnEmptyObjectAllowsNothing) {
  auto g = parse_context_gate("{}");
  ASSERT_TRUE(g.ok());
  EXPECT_THAT(g->allow, IsEmpty());
  EXPECT_NE(context_denied(*g, "0000:17:00.0"), "");
}

TEST(ContextGateLine, RejectsGarbageAndWrongTypes) {
  EXPECT_EQ(parse_context_gate("").error(), "the gate line is not JSON");
  EXPECT_EQ(parse_context_gate("{\"allow\": [").error(), "the gate line is not JSON");
  EXPECT_EQ(parse_context_gate("[\"0000:17:00.0\"]").error(), "the gate line is not a JSON object");
  EXPECT_EQ(parse_context_gate(R"({"allow": "0000:17:00.0"})").error(), "\"allow\" is not a list");
  EXPECT_EQ(parse_context_gate(R"({"allow": [17]})").error(),
            "\"allow\" holds a value that is not a string");
  EXPECT_EQ(parse_context_gate(R"({"deny": []})").error(), "\"deny\" is not an object");
  EXPECT_EQ(parse_context_gate(R"({"deny": {"0000:17:00.0": 1}})").error(),
            "\"deny\" holds a reason that is not a string");
  EXPECT_EQ(parse_context_gate(R"({"other": null})").error(), "\"other\" is not a string");
  std::string huge = "{\"other\": \"" + std::string(kMaxContextGateBytes, 'x') + "\"}";
  EXPECT_EQ(parse_context_gate(huge).error(), "the gate line is over 64 KiB");
}

}  // namespace
}  // namespace gd
