// "A running job is sacred" through the real children: probe_hardware and
// probe_cuda_order re-execute gpudoctor as the NVML and CUDA probe children
// over the fake libraries, and the fake libcuda logs every context asked for
// ($GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG, tests/fakes/scenario.h). A GPU with a
// process, in a compute mode other than DEFAULT, or that NVML did not answer
// for gets no context; the others get exactly one per CUDA run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fake_probe.h"
#include "probe/child.h"
#include "probe/context_policy.h"
#include "probe/hw_common.h"
#include "probe/probe.h"
#include "test_util.h"

namespace gd {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using testing_fakes::fake_options;
using testing_fakes::ScopedEnv;
using testing_util::kTimeScale;

using testing_fakes::scenario_path;

// The fake libcuda's context log for one test: one "<pid> <bus> <rc>" line
// per cuDevicePrimaryCtxRetain.
class ContextLog {
 public:
  ContextLog() {
    char tmpl[] = "/tmp/gd-contexts-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) close(fd);
    path_ = tmpl;
  }
  ~ContextLog() { unlink(path_.c_str()); }
  ContextLog(const ContextLog&) = delete;
  ContextLog& operator=(const ContextLog&) = delete;
  const std::string& path() const { return path_; }

  struct Line {
    std::string pid, bus;
    int rc = 0;
  };
  std::vector<Line> lines() const {
    std::vector<Line> out;
    std::ifstream in(path_);
    Line l;
    while (in >> l.pid >> l.bus >> l.rc) out.push_back(l);
    return out;
  }
  // Contexts asked for per bus id.
  std::map<std::string, int> per_bus() const {
    std::map<std::string, int> n;
    for (const Line& l : lines()) ++n[l.bus];
    return n;
  }

 private:
  std::string path_;
};

class ContextGateProbe : public ::testing::Test {
 protected:
  Snapshot probe(const std::string& scenario, const ProbeOptions& opt = fake_options()) {
    return testing_fakes::probe_scenario(scenario, opt);
  }
  ContextLog log_;
  ScopedEnv log_env_{"GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG", log_.path()};
  ScopedEnv cvd_{"CUDA_VISIBLE_DEVICES", std::nullopt};
  ScopedEnv order_{"CUDA_DEVICE_ORDER", std::nullopt};
};

const CudaDevice& device_at(const CudaRun& r, const std::string& bus) {
  for (const CudaDevice& d : r.devices) {
    if (d.pci_bus_id == bus) return d;
  }
  static const CudaDevice none;
  ADD_FAILURE() << "no CUDA device at " << bus;
  return none;
}

TEST_F(ContextGateProbe, AnIdleMachineGetsOneContextPerGpu) {
  Snapshot s = probe("ws-4x4090");
  ASSERT_EQ(s.cuda.runs.size(), 1u);
  for (const CudaDevice& d : s.cuda.runs[0].devices) {
    EXPECT_EQ(d.ctx_rc, 0) << d.pci_bus_id;
    EXPECT_EQ(d.ctx_skipped, "") << d.pci_bus_id;
  }
  std::map<std::string, int> want = {
      {"0000:01:00.0", 1}, {"0000:21:00.0", 1}, {"0000:41:00.0", 1}, {"0000:61:00.0", 1}};
  EXPECT_EQ(log_.per_bus(), want);
  for (const auto& l : log_.lines()) EXPECT_EQ(l.rc, 0);
}

TEST_F(ContextGateProbe, AnExclusiveGpuAJobHoldsGetsNoContext) {
  Snapshot s = probe("exclusive");
  const CudaRun& r = s.cuda.runs.at(0);
  const CudaDevice& taken = device_at(r, "0000:01:00.0");
  EXPECT_EQ(taken.ctx_rc, -1);
  EXPECT_THAT(taken.ctx_skipped, StartsWith("busy: 1 process (pid 4242"));
  auto n = log_.per_bus();
  EXPECT_EQ(n.count("0000:01:00.0"), 0u);
  EXPECT_EQ(n["0000:21:00.0"], 1);
  EXPECT_EQ(n["0000:41:00.0"], 1);
  EXPECT_EQ(n["0000:61:00.0"], 1);
  // The workload probe ran between NVML and the gate, and all three records
  // are there in order.
  std::vector<std::string> names;
  for (const auto& p : s.probes) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"nvml", "workload", "cuda"}));
}

TEST_F(ContextGateProbe, MemoryHeldByAProcessGetsNoContext) {
  Snapshot s = probe("memory-held");
  EXPECT_THAT(device_at(s.cuda.runs.at(0), "0000:01:00.0").ctx_skipped,
              StartsWith("busy: 1 process (pid 31337"));
  EXPECT_EQ(log_.per_bus().count("0000:01:00.0"), 0u);
  EXPECT_EQ(log_.lines().size(), 3u);
}

// The address space is measured at the first context made, wherever it is
// in CUDA's order: here CUDA device 0 is the taken GPU.
TEST_F(ContextGateProbe, TheAddressSpaceIsMeasuredAtTheFirstContextMade) {
  ScopedEnv order("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  Snapshot s = probe("exclusive");
  const CudaRun& r = s.cuda.runs.at(0);
  ASSERT_EQ(r.devices.at(0).pci_bus_id, "0000:01:00.0");
  EXPECT_EQ(r.devices.at(0).ctx_rc, -1);
  EXPECT_EQ(r.devices.at(1).ctx_rc, 0);
  EXPECT_GT(r.vm_context.size_bytes, 0u);
  EXPECT_GE(r.vm_context.size_bytes, r.vm_init.size_bytes);
}

TEST_F(ContextGateProbe, AHungNvmlLeavesEveryGpuAloneAndCudaStillAnswers) {
  const double deadline_s = 1.5 * kTimeScale;
  auto start = std::chrono::steady_clock::now();
  Snapshot s = probe("nvml-hang", fake_options(deadline_s));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, deadline_s + 1.0 * kTimeScale);
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(r.child_error, "");
  EXPECT_EQ(r.init_rc, 0);
  EXPECT_EQ(r.device_count, 4);
  EXPECT_EQ(r.cudart_rc, 0);
  ASSERT_EQ(r.devices.size(), 4u);
  for (const CudaDevice& d : r.devices) {
    EXPECT_EQ(d.ctx_rc, -1);
    EXPECT_THAT(d.ctx_skipped, StartsWith("NVML did not answer within "));
    EXPECT_THAT(d.ctx_skipped, HasSubstr(" s: whether it is busy is unknown"));
  }
  EXPECT_EQ(r.vm_context.size_bytes, 0u);
  EXPECT_THAT(log_.lines(), IsEmpty());
  EXPECT_THAT(s.nvml.child_error, StartsWith("timeout after"));
}

TEST_F(ContextGateProbe, ACrashedNvmlLeavesEveryGpuAlone) {
  Snapshot s = probe("nvml-crash");
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(r.device_count, 4);
  for (const CudaDevice& d : r.devices) {
    EXPECT_EQ(d.ctx_skipped,
              "NVML did not answer (the NVML child crashed: SIGSEGV in nvmlDeviceGetCount_v2): "
              "whether it is busy is unknown");
  }
  EXPECT_THAT(log_.lines(), IsEmpty());
}

// The clean run gets the same gate as the user's.
TEST_F(ContextGateProbe, TheCleanRunGetsTheSameGate) {
  ScopedEnv cvd("CUDA_VISIBLE_DEVICES", "");
  Snapshot s = probe("exclusive");
  ASSERT_EQ(s.cuda.runs.size(), 2u);
  EXPECT_EQ(s.cuda.runs[0].device_count, 0);  // the user's run saw no device
  const CudaRun& clean = s.cuda.runs[1];
  EXPECT_EQ(clean.device_count, 4);
  EXPECT_THAT(device_at(clean, "0000:01:00.0").ctx_skipped, StartsWith("busy: 1 process"));
  EXPECT_EQ(device_at(clean, "0000:21:00.0").ctx_rc, 0);
  EXPECT_EQ(log_.per_bus().count("0000:01:00.0"), 0u);
  EXPECT_EQ(log_.lines().size(), 3u);
}

TEST_F(ContextGateProbe, TheDeviceOrderRunOpensNoContext) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path("ws-4x4090"));
  Snapshot s;
  probe_cuda_order(fake_options(), &s);
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(r.device_count, 4);
  for (const CudaDevice& d : r.devices) {
    EXPECT_EQ(d.ctx_rc, -1);
    EXPECT_EQ(d.ctx_skipped, kNoContextAsked);
  }
  EXPECT_THAT(log_.lines(), IsEmpty());
}

TEST_F(ContextGateProbe, TheDeviceOrderRunWithAGateOpensOnlyWhatItAllows) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path("ws-4x4090"));
  ContextGate gate;
  gate.allow = {"0000:21:00.0"};
  gate.deny["0000:41:00.0"] = "busy: 1 process (pid 7)";
  gate.other = "not listed";
  Snapshot s;
  probe_cuda_order(fake_options(), current_environment(), &gate, &s);
  const CudaRun& r = s.cuda.runs.at(0);
  EXPECT_EQ(device_at(r, "0000:21:00.0").ctx_rc, 0);
  EXPECT_EQ(device_at(r, "0000:41:00.0").ctx_skipped, "busy: 1 process (pid 7)");
  EXPECT_EQ(device_at(r, "0000:01:00.0").ctx_skipped, "not listed");
  std::map<std::string, int> want = {{"0000:21:00.0", 1}};
  EXPECT_EQ(log_.per_bus(), want);
}

// The child's side of the protocol: what it does with no line or a bad one.
CudaRun run_gate_child(const std::string& line, bool send) {
  ProbeOptions opt = fake_options();
  ChildRunner runner(std::chrono::steady_clock::now() +
                     std::chrono::seconds(static_cast<int>(10 * kTimeScale)));
  size_t id =
      runner.start(cuda_spec(GD_BINARY, opt, current_environment(), "user", CudaContexts::kGate));
  if (send) runner.send(id, line);
  return cuda_from_child(runner.wait(id), opt, "user");
}

TEST_F(ContextGateProbe, NoLineOnStdinMeansNoContext) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path("ws-4x4090"));
  CudaRun r = run_gate_child("", true);  // closed with nothing written
  EXPECT_EQ(r.child_error, "");
  ASSERT_EQ(r.devices.size(), 4u);
  for (const CudaDevice& d : r.devices) {
    EXPECT_EQ(d.ctx_skipped,
              "no answer came about which GPUs are idle (stdin closed before a line came): no "
              "context opened");
  }
  EXPECT_THAT(log_.lines(), IsEmpty());
}

TEST_F(ContextGateProbe, AGarbledLineMeansNoContext) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path("ws-4x4090"));
  for (const char* line : {"allow everything\n", "{\"allow\": \"0000:01:00.0\"}\n", "[1,2]"}) {
    CudaRun r = run_gate_child(line, true);
    ASSERT_EQ(r.devices.size(), 4u) << line;
    EXPECT_THAT(r.devices[0].ctx_skipped, StartsWith("no answer came about which GPUs are idle ("))
        << line;
  }
  EXPECT_THAT(log_.lines(), IsEmpty());
}

TEST_F(ContextGateProbe, ALineOverTheLimitMeansNoContext) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path("ws-4x4090"));
  std::string huge = "{\"allow\": [\"0000:01:00.0\"], \"other\": \"" +
                     std::string(kMaxContextGateBytes + 10, 'x') + "\"}\n";
  CudaRun r = run_gate_child(huge, true);
  ASSERT_EQ(r.devices.size(), 4u);
  EXPECT_EQ(r.devices[0].ctx_skipped,
            "no answer came about which GPUs are idle (a line over 64 KiB on stdin): no context "
            "opened");
  EXPECT_THAT(log_.lines(), IsEmpty());
}

// A gate line the child does get: the last line may lack its newline.
TEST_F(ContextGateProbe, AGateWithoutNewlineStillCounts) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path("ws-4x4090"));
  CudaRun r = run_gate_child("{\"allow\": [\"0000:61:00.0\"], \"other\": \"no\"}", true);
  EXPECT_EQ(device_at(r, "0000:61:00.0").ctx_rc, 0);
  EXPECT_EQ(device_at(r, "0000:01:00.0").ctx_skipped, "no");
  std::map<std::string, int> want = {{"0000:61:00.0", 1}};
  EXPECT_EQ(log_.per_bus(), want);
}

}  // namespace
}  // namespace gd
