// The Slurm sink: scontrol's node line and the drain / resume decision table
// (src/report/slurm.h). The real round trip through slurmctld is
// tests/slurm/slurm_test.py.
#include "report/slurm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {
namespace {

// Recorded on the CI machine (Slurm 22.05.8): `scontrol show node -o vm`.
constexpr const char* kIdleLine =
    "NodeName=vm Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=2.09 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 "
    "NodeHostName=vm Version=22.05.8 OS=Linux 6.18.44-fc-v1147 #1 SMP PREEMPT_DYNAMIC @0  "
    "RealMemory=1 AllocMem=0 FreeMem=20309 Sockets=2 Boards=1 State=IDLE ThreadsPerCore=1 "
    "TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-03T07:44:57 "
    "SlurmdStartTime=2026-12-03T10:57:08 LastBusyTime=2026-12-03T10:57:08 "
    "CfgTRES=cpu=2,mem=1M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 "
    "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n";
constexpr const char* kDrainedLine =
    "NodeName=vm Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=2.09 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 "
    "NodeHostName=vm Version=22.05.8 OS=Linux 6.18.44-fc-v1147 #1 SMP PREEMPT_DYNAMIC @0  "
    "RealMemory=1 AllocMem=0 FreeMem=20309 Sockets=2 Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 "
    "TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-03T07:44:57 "
    "SlurmdStartTime=2026-12-03T10:57:08 LastBusyTime=2026-12-03T10:57:08 "
    "CfgTRES=cpu=2,mem=1M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 "
    "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s "
    "Reason=gpudoctor: xid.79 GPU 0000:41:00.0 [root@2026-12-03T10:57:09]\n";

TEST(SlurmParse, IdleNode) {
  auto n = parse_scontrol_node(kIdleLine, "vm");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n->name, "vm");
  EXPECT_EQ(n->state, "IDLE");
  EXPECT_EQ(n->reason, "");
  EXPECT_FALSE(slurm_node_out_of_service(*n));
}

TEST(SlurmParse, DrainedNodeReasonWithoutUserAndTime) {
  auto n = parse_scontrol_node(kDrainedLine, "vm");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n->state, "IDLE+DRAIN");
  EXPECT_EQ(n->reason, "gpudoctor: xid.79 GPU 0000:41:00.0");
  EXPECT_TRUE(slurm_node_drained(*n));
  EXPECT_TRUE(drained_by_gpudoctor(*n));
}

TEST(SlurmParse, ReasonFollowedByCommentAndReasonMentioningState) {
  auto n = parse_scontrol_node(
      "NodeName=gpu01 State=MIXED+DRAIN Reason=admin: State=IDLE swap [x] PSU "
      "[alice@2026-01-02T03:04:05] Comment=rack 4\n",
      "gpu01");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n->state, "MIXED+DRAIN");
  EXPECT_EQ(n->reason, "admin: State=IDLE swap [x] PSU");
  EXPECT_FALSE(drained_by_gpudoctor(*n));
  // Without the [user@time] stamp, Comment= still ends the reason.
  n = parse_scontrol_node("NodeName=gpu01 State=DOWN Reason=Not responding Comment=x y", "");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n->reason, "Not responding");
}

TEST(SlurmParse, PicksTheNamedNodeAmongSeveral) {
  auto n = parse_scontrol_node(
      "NodeName=gpu010 State=IDLE+DRAIN Reason=x [a@b]\nNodeName=gpu01 State=ALLOCATED\n", "gpu01");
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(n->state, "ALLOCATED");
  EXPECT_EQ(n->reason, "");
}

TEST(SlurmParse, GarbageIsAnErrorNeverACrash) {
  for (const char* text :
       {"", "\n\n", "Node vm not found\n", "NodeName=", "NodeName=vm\n", "NodeName=vm State=\n",
        "State=IDLE Reason=x", "NodeName=vm State=IDLE+DRAIN Reason=", "\x01\x02NodeName=vm\xff"}) {
    auto n = parse_scontrol_node(text, "vm");
    if (n.ok()) {
      EXPECT_FALSE(n->state.empty()) << text;
    } else {
      EXPECT_EQ(n.error().find('\n'), std::string::npos) << n.error();
      for (char c : n.error()) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << n.error();
    }
  }
  EXPECT_FALSE(parse_scontrol_node("Node vm not found\n", "vm").ok());
  EXPECT_FALSE(parse_scontrol_node("NodeName=vm State=\n", "vm").ok());
  EXPECT_FALSE(parse_scontrol_node(kIdleLine, "other").ok());
  auto empty_reason = parse_scontrol_node("NodeName=vm State=IDLE+DRAIN Reason=", "vm");
  ASSERT_TRUE(empty_reason.ok());
  EXPECT_EQ(empty_reason->reason, "");
  // Long binary input does not run away either.
  std::string big(1 << 16, '\xff');
  EXPECT_FALSE(parse_scontrol_node(big, "vm").ok());
}

TEST(SlurmParse, StateFlags) {
  auto node = [](std::string state) { return SlurmNode{"vm", std::move(state), ""}; };
  EXPECT_TRUE(slurm_node_drained(node("MIXED+DRAIN")));
  EXPECT_TRUE(slurm_node_drained(node("DOWN+DRAIN+NOT_RESPONDING")));
  EXPECT_FALSE(slurm_node_drained(node("DOWN+NOT_RESPONDING")));
  EXPECT_TRUE(slurm_node_out_of_service(node("DOWN+NOT_RESPONDING")));
  EXPECT_TRUE(slurm_node_out_of_service(node("DOWN*")));
  EXPECT_TRUE(slurm_node_out_of_service(node("IDLE+FAIL")));
  EXPECT_FALSE(slurm_node_out_of_service(node("IDLE+NOT_RESPONDING")));
  EXPECT_FALSE(slurm_node_out_of_service(node("ALLOCATED+COMPLETING")));
}

// --- the decision table ---------------------------------------------------

Finding finding(std::string id, Severity sev, std::vector<std::string> gpus = {}) {
  Finding f;
  f.id = std::move(id);
  f.severity = sev;
  f.gpus = std::move(gpus);
  return f;
}

// A GPU node whose probes all answered, with these findings in rank order.
struct Fixture {
  Snapshot snapshot;
  Report report;
  explicit Fixture(std::vector<Finding> findings) {
    PciDevice gpu;
    gpu.bdf = "0000:17:00.0";
    gpu.kind = PciKind::kGpu;
    snapshot.pci.push_back(gpu);
    snapshot.driver.proc_driver_nvidia = true;
    for (const char* name : {"env", "driver", "pci", "kernel-log", "nvml", "cuda"}) {
      snapshot.probes.push_back({name, ProbeStatus::kOk, "", 1, {}, 0});
    }
    report.findings = std::move(findings);
    for (const auto& f : report.findings) report.verdict = worse(report.verdict, f.severity);
    report.snapshot = &snapshot;
  }
};

SlurmNode idle() { return {"gpu01", "IDLE", ""}; }
SlurmNode drained(std::string reason) { return {"gpu01", "IDLE+DRAIN", std::move(reason)}; }

// A report that fails only on GPUs gone missing or NVML/CUDA not starting
// is re-checked before a drain; a cause beside them is not.
TEST(SlurmRecheck, OnlyCountSymptomsAreRechecked) {
  Fixture blip({finding("nvml.init-failed", Severity::kFail),
                finding("gpu.missing", Severity::kFail), finding("thermal.high", Severity::kWarn)});
  EXPECT_TRUE(only_count_symptoms(blip.report));
  Fixture cause(
      {finding("gpu.fallen-off-bus", Severity::kFail), finding("gpu.missing", Severity::kFail)});
  EXPECT_FALSE(only_count_symptoms(cause.report));
  Fixture healthy({finding("thermal.high", Severity::kWarn)});
  EXPECT_FALSE(only_count_symptoms(healthy.report));
  Fixture ok({});
  EXPECT_EQ(recheck_note(blip.report, ok.report, "20s"),
            "re-checked after 20s: nvml.init-failed did not hold (a transient drop)");
  EXPECT_EQ(recheck_note(blip.report, blip.report, "20s"),
            "re-checked after 20s: nvml.init-failed held");
}

TEST(SlurmDecide, FailDrainsWithTheTopFindingAndItsGpus) {
  Fixture fx({finding("gpu.fallen-off-bus", Severity::kFail, {"0000:17:00.0"}),
              finding("xid.79", Severity::kFail, {"0000:17:00.0"}),
              finding("thermal.high", Severity::kWarn, {"0000:2a:00.0"})});
  SlurmDecision d = decide_slurm(fx.report, idle(), {});
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.reason, "gpudoctor: gpu.fallen-off-bus GPU 0000:17:00.0");
  EXPECT_NE(d.message.find("drained"), std::string::npos) << d.message;
  EXPECT_EQ(scontrol_update_args("gpu01", d),
            (std::vector<std::string>{"update", "nodename=gpu01", "state=drain",
                                      "reason=gpudoctor: gpu.fallen-off-bus GPU 0000:17:00.0"}));
}

TEST(SlurmDecide, ADrainingBusyNodeIsDrainedToo) {
  Fixture fx({finding("xid.79", Severity::kFail, {"0000:17:00.0"})});
  EXPECT_EQ(decide_slurm(fx.report, {"gpu01", "ALLOCATED", ""}, {}).action, SlurmAction::kDrain);
  EXPECT_EQ(decide_slurm(fx.report, {"gpu01", "MIXED+COMPLETING", ""}, {}).reason,
            "gpudoctor: xid.79 GPU 0000:17:00.0");
}

TEST(SlurmDecide, WarnDrainsOnlyWhenAskedFor) {
  Fixture fx({finding("thermal.high", Severity::kWarn, {"0000:17:00.0"})});
  EXPECT_EQ(decide_slurm(fx.report, idle(), {}).action, SlurmAction::kNone);
  SlurmDecision d = decide_slurm(fx.report, idle(), {Severity::kWarn});
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.reason, "gpudoctor: thermal.high GPU 0000:17:00.0");
  // A warn drain is resumed by the default policy's next healthy run, and
  // kept by the warn policy while the warning lasts.
  EXPECT_EQ(decide_slurm(fx.report, drained(d.reason), {}).action, SlurmAction::kResume);
  EXPECT_EQ(decide_slurm(fx.report, drained(d.reason), {Severity::kWarn}).action,
            SlurmAction::kNone);
}

TEST(SlurmDecide, AlreadyDrainedForTheSameCauseIsLeftAlone) {
  Fixture fx({finding("xid.79", Severity::kFail, {"0000:17:00.0"})});
  SlurmDecision d = decide_slurm(fx.report, drained("gpudoctor: xid.79 GPU 0000:17:00.0"), {});
  EXPECT_EQ(d.action, SlurmAction::kNone);
  EXPECT_TRUE(scontrol_update_args("gpu01", d).empty());
}

TEST(SlurmDecide, OwnDrainForAnotherCauseGetsTheNewReason) {
  Fixture fx({finding("ecc.uncorrectable", Severity::kFail, {"0000:2a:00.0"})});
  SlurmDecision d = decide_slurm(fx.report, drained("gpudoctor: xid.79 GPU 0000:17:00.0"), {});
  EXPECT_EQ(d.action, SlurmAction::kUpdateReason);
  EXPECT_EQ(d.reason, "gpudoctor: ecc.uncorrectable GPU 0000:2a:00.0");
  EXPECT_EQ(scontrol_update_args("gpu01", d)[2], "state=drain");
}

TEST(SlurmDecide, OwnDrainIsResumedWhenHealthy) {
  Fixture fx({finding("advice.device-order", Severity::kInfo),
              finding("driver.not-loaded", Severity::kOk)});
  for (const char* state : {"IDLE+DRAIN", "DOWN+DRAIN+NOT_RESPONDING", "MIXED+DRAIN"}) {
    SlurmDecision d = decide_slurm(fx.report, {"gpu01", state, "gpudoctor: xid.79 GPU x"}, {});
    EXPECT_EQ(d.action, SlurmAction::kResume) << state;
    EXPECT_EQ(scontrol_update_args("gpu01", d),
              (std::vector<std::string>{"update", "nodename=gpu01", "state=resume"}));
  }
}

TEST(SlurmDecide, AResumeWaitsForTheReprobe) {
  Fixture fx({finding("advice.device-order", Severity::kInfo)});
  SlurmNode node{"gpu01", "IDLE+DRAIN", "gpudoctor: gpu.fallen-off-bus GPU 0000:5d:00.0"};
  SlurmDecision resume = decide_slurm(fx.report, node, {});
  ASSERT_EQ(resume.action, SlurmAction::kResume);

  SlurmDecision kept = after_reprobe(resume, node,
                                     "re-probe failed on 0000:5d:00.0: CUDA: no CUDA device at "
                                     "0000:5d:00.0",
                                     "");
  EXPECT_EQ(kept.action, SlurmAction::kNone);
  EXPECT_TRUE(scontrol_update_args("gpu01", kept).empty());
  EXPECT_EQ(kept.message,
            "node gpu01: healthy by the check, but re-probe failed on 0000:5d:00.0: CUDA: no CUDA "
            "device at 0000:5d:00.0; left drained with \"gpudoctor: gpu.fallen-off-bus GPU "
            "0000:5d:00.0\"");

  SlurmDecision done = after_reprobe(resume, node, "", "proven by a re-probe of 8 GPUs");
  EXPECT_EQ(done.action, SlurmAction::kResume);
  EXPECT_TRUE(done.message.ends_with("; proven by a re-probe of 8 GPUs")) << done.message;
}

TEST(SlurmDecide, AdminDrainIsNeverResumedNorRelabelled) {
  Fixture healthy({finding("advice.device-order", Severity::kInfo)});
  Fixture failing({finding("xid.79", Severity::kFail, {"0000:17:00.0"})});
  for (const SlurmNode& node :
       {drained("admin: maintenance"), SlurmNode{"gpu01", "DOWN", "Not responding"},
        SlurmNode{"gpu01", "DOWN+NOT_RESPONDING", "reboot"}, SlurmNode{"gpu01", "IDLE+FAIL", "RMA"},
        drained(""),
        // Only the prefix at the start counts.
        drained("admin saw gpudoctor: xid.79"), drained("GPUDOCTOR: x"), drained("gpudoctor x")}) {
    for (const Fixture* fx : {&healthy, &failing}) {
      SlurmDecision d = decide_slurm(fx->report, node, {});
      EXPECT_EQ(d.action, SlurmAction::kNone) << node.state << " " << node.reason;
      EXPECT_NE(d.message.find("someone else"), std::string::npos) << d.message;
    }
  }
}

TEST(SlurmDecide, HealthyIdleNodeNothingToDo) {
  Fixture fx({finding("persistence-mode.off", Severity::kWarn)});
  SlurmDecision d = decide_slurm(fx.report, idle(), {});
  EXPECT_EQ(d.action, SlurmAction::kNone);
  EXPECT_NE(d.message.find("healthy"), std::string::npos) << d.message;
}

TEST(SlurmDecide, UnansweredProbeNeverResumesButFailStillDrains) {
  Fixture quiet({finding("advice.device-order", Severity::kInfo)});
  quiet.snapshot.probes.push_back({"kernel-log2", ProbeStatus::kTimedOut, "", 10000, {}, 0});
  SlurmDecision d = decide_slurm(quiet.report, drained("gpudoctor: xid.79 GPU x"), {});
  EXPECT_EQ(d.action, SlurmAction::kNone);
  EXPECT_NE(d.message.find("could not decide"), std::string::npos) << d.message;
  EXPECT_EQ(decide_slurm(quiet.report, idle(), {}).action, SlurmAction::kNone);

  // The hang itself is the evidence: nvml.init-hang fails and drains.
  Fixture hang({finding("nvml.init-hang", Severity::kFail)});
  hang.snapshot.probes.push_back({"nvml", ProbeStatus::kTimedOut, "", 10000, {}, 0});
  d = decide_slurm(hang.report, idle(), {});
  EXPECT_EQ(d.action, SlurmAction::kDrain);
  EXPECT_EQ(d.reason, "gpudoctor: nvml.init-hang");
}

TEST(SlurmDecide, CpuNodeIsNotJudged) {
  // What a node without NVIDIA hardware reports: the driver is "missing".
  Fixture fx({finding("driver.not-loaded", Severity::kFail)});
  fx.snapshot.pci.clear();
  fx.snapshot.driver.proc_driver_nvidia = false;
  EXPECT_EQ(decide_slurm(fx.report, idle(), {}).action, SlurmAction::kNone);
  EXPECT_EQ(decide_slurm(fx.report, drained("gpudoctor: xid.79 GPU x"), {}).action,
            SlurmAction::kNone);
  // A GPU on the bus without its driver is a broken GPU node.
  PciDevice gpu;
  gpu.bdf = "0000:17:00.0";
  gpu.kind = PciKind::kGpu;
  fx.snapshot.pci.push_back(gpu);
  EXPECT_EQ(decide_slurm(fx.report, idle(), {}).action, SlurmAction::kDrain);
}

TEST(SlurmReason, BoundedPrintableAscii) {
  std::vector<std::string> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back("0000:" + std::to_string(10 + i) + ":00.0");
  std::string r = slurm_drain_reason(finding("pcie.link-degraded", Severity::kFail, gpus));
  EXPECT_LE(r.size(), kSlurmReasonMax);
  EXPECT_EQ(r.rfind("gpudoctor: pcie.link-degraded GPUs 0000:10:00.0,0000:11:00.0,", 0), 0u) << r;
  EXPECT_NE(r.find("+"), std::string::npos) << r;

  r = slurm_drain_reason(
      finding("x\"y'z\\\n\t\xc3\xa9" + std::string(300, 'a'), Severity::kFail, {"0000:17:00.0"}));
  EXPECT_LE(r.size(), kSlurmReasonMax);
  for (char c : r) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\') << r;
  }
  EXPECT_EQ(slurm_drain_reason(finding("driver.not-loaded", Severity::kFail)),
            "gpudoctor: driver.not-loaded");
  EXPECT_EQ(
      slurm_drain_reason(finding("xid.79", Severity::kFail, {"0000:17:00.0", "0000:2a:00.0"})),
      "gpudoctor: xid.79 GPUs 0000:17:00.0,0000:2a:00.0");
}

}  // namespace
}  // namespace gd
