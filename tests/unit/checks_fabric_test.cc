// Tests of the fabric-readiness chain (docs/fabric.md): the fabric probe on
// recorded trees, the health-mask catalog, each link's check, the ranking
// that names the first broken link, and explain's nvidia-smi -q fabric block.
#include <gtest/gtest.h>

#include "catalog/fabric_health.h"
#include "checks/checks.h"
#include "checks/runner.h"
#include "checks/util.h"
#include "explain/explain.h"
#include "facts/fabric.h"
#include "probe/file_probes.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

// NVML_GPU_FABRIC_HEALTH_MASK_*: every two-bit flag FALSE (2), configuration NONE (1).
constexpr uint32_t kHealthyMask = 2 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8;

std::string tree(const std::string& name) {
  return std::string(GD_SOURCE_DIR) + "/tests/roots/" + name;
}

Snapshot probed(const std::string& name) {
  Snapshot s;
  RootFs fs(tree(name));
  probe_services_at(fs, &s);
  probe_fabric_at(fs, &s);
  return s;
}

// hgx-8xh100's builder turned into an NVLink5 board: no NVSwitch on the
// bus, a management bridge with its IB device, Blackwell GPUs, NVLSM up.
Snapshot nvl5() {
  Snapshot s = hgx_8xh100();
  std::erase_if(s.pci, [](const PciDevice& d) { return d.kind == PciKind::kNvSwitch; });
  std::erase_if(s.devnodes,
                [](const DevNode& n) { return n.path.find("nvswitch") != n.path.npos; });
  for (auto& g : s.nvml.gpus) g.architecture = nv_ok(10);
  NvlinkBridge b;
  b.bdf = "0000:05:00.1";
  b.driver = "mlx5_core";
  b.switch_management = 1;
  b.ib_device = "mlx5_1";
  b.ports.push_back(IbPort{1, "4: ACTIVE", "InfiniBand", false});
  s.fabric.bridges.push_back(b);
  s.fabric.umad = true;
  s.fabric.nvlsm_binary = true;
  s.processes.push_back(ProcessInfo{2290, "nvlsm"});
  return s;
}

TEST(FabricProbe, ReadsTheNvlink5BridgeAndTheFabricManagersFiles) {
  Snapshot s = probed("hgx-8xb200");
  ASSERT_EQ(s.fabric.bridges.size(), 3u);
  const NvlinkBridge& full = s.fabric.bridges[0];
  const NvlinkBridge& lpf = s.fabric.bridges[1];
  EXPECT_EQ(full.bdf, "0000:05:00.0");
  EXPECT_EQ(full.switch_management, 0);
  ASSERT_EQ(full.ports.size(), 1u);
  EXPECT_TRUE(full.ports[0].sm_disabled);
  EXPECT_EQ(lpf.switch_management, 1);
  EXPECT_EQ(lpf.driver, "mlx5_core");
  EXPECT_EQ(lpf.ib_device, "mlx5_1");
  ASSERT_EQ(lpf.ports.size(), 1u);
  EXPECT_EQ(lpf.ports[0].state, "4: ACTIVE");
  EXPECT_FALSE(lpf.ports[0].sm_disabled);
  EXPECT_EQ(s.fabric.bridges[2].switch_management, 0);  // the compute NIC
  EXPECT_TRUE(s.fabric.umad);
  EXPECT_TRUE(s.fabric.nvlsm_binary);
  EXPECT_TRUE(s.fabric.fm_binary);
  EXPECT_EQ(s.fabric.fm_unit, "/lib/systemd/system/nvidia-fabricmanager.service");
  EXPECT_EQ(s.fabric.fm_unit_enabled, 1);
  EXPECT_EQ(s.fabric.fm_exe, "/usr/bin/nv-fabricmanager");
  EXPECT_EQ(s.fabric.log_path, "/var/log/fabricmanager.log");
  ASSERT_EQ(s.fabric.log_events.size(), 1u);
  EXPECT_EQ(s.fabric.log_events[0].type, "configured");
  EXPECT_TRUE(find_service(s, "nvlsm")->running);
}

TEST(FabricProbe, KeepsTheFabricManagersRefusalAndSkipsOtherMachines) {
  Snapshot s = probed("hgx-8xh100-fm-mismatch");
  ASSERT_EQ(s.fabric.log_events.size(), 1u);
  EXPECT_EQ(s.fabric.log_events[0].type, "version-mismatch");
  EXPECT_FALSE(s.fabric.log_events[0].age_s.has_value());
  // A workstation: nothing of a fabric, no log read.
  Snapshot ws = probed("ws-4x4090");
  EXPECT_TRUE(ws.fabric.bridges.empty());
  EXPECT_TRUE(ws.fabric.log_path.empty());
  EXPECT_EQ(ws.fabric.fm_unit_enabled, -1);
  // A GB200 tray: IMEX configured, channel 0 present.
  Snapshot gb = probed("gb200-tray");
  EXPECT_TRUE(gb.fabric.imex_configured);
  EXPECT_EQ(gb.fabric.imex_channels, std::vector<std::string>{"channel0"});
}

TEST(FabricHealth, DecodesTheMaskFieldsAndTheSummary) {
  EXPECT_TRUE(fabric_health_issues(kHealthyMask).empty());
  EXPECT_TRUE(fabric_health_issues(0).empty());  // nothing supported
  auto degraded = fabric_health_issues((kHealthyMask & ~0x3u) | 1);
  ASSERT_EQ(degraded.size(), 1u);
  EXPECT_NE(degraded[0].text.find("bandwidth degraded"), std::string::npos);
  EXPECT_FALSE(degraded[0].fatal);
  auto config = fabric_health_issues((kHealthyMask & ~(0xfu << 8)) | 5u << 8);
  ASSERT_EQ(config.size(), 1u);
  EXPECT_NE(config[0].text.find("insufficient NVLinks"), std::string::npos);
  EXPECT_TRUE(config[0].fatal);
  EXPECT_STREQ(fabric_health_summary_name(3), "limited capacity");
}

TEST(FabricFacts, TellsTheKindsApart) {
  EXPECT_EQ(fabric_facts(hgx_8xh100()).kind, FabricKind::kNvSwitch);
  EXPECT_EQ(fabric_facts(ws_4x4090()).kind, FabricKind::kNone);
  EXPECT_EQ(fabric_facts(nvl5()).kind, FabricKind::kNvLink5);
  Snapshot tray = nvl5();
  tray.fabric.bridges.clear();
  for (auto& g : tray.nvml.gpus) g.fabric_state = nv_ok(3);
  EXPECT_EQ(fabric_facts(tray).kind, FabricKind::kMultiNode);
}

TEST(FabricChecks, SwitchUnboundOrAbsentBreaksLinkOne) {
  Snapshot s = hgx_8xh100();
  s.pci[0].driver = "vfio-pci";
  Finding f = only(check_fabric_switches(s, kConfig), "fabric.switch-missing");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "is bound to vfio-pci, not nvidia"));
  // A VM given the H100s without their switches: the GPUs wait.
  Snapshot vm = hgx_8xh100();
  std::erase_if(vm.pci, [](const PciDevice& d) { return d.kind == PciKind::kNvSwitch; });
  std::erase_if(vm.devnodes,
                [](const DevNode& n) { return n.path.find("nvswitch") != n.path.npos; });
  for (auto& g : vm.nvml.gpus) g.fabric_state = nv_ok(2);
  Finding w = only(check_fabric_switches(vm, kConfig), "fabric.switch-missing");
  EXPECT_EQ(w.severity, Severity::kFail);
  EXPECT_EQ(w.gpus.size(), 8u);
  EXPECT_TRUE(evidence_has(w, "fabric state IN_PROGRESS, and no NVSwitch"));
  EXPECT_EQ(only(check_fabric_switches(hgx_8xh100(), kConfig), "fabric.switch-missing").severity,
            Severity::kOk);
}

TEST(FabricChecks, Nvlink5NeedsItsModulesAndNvlsm) {
  EXPECT_EQ(only(check_nvlink_network(nvl5(), kConfig), "fabric.ib-modules-missing").severity,
            Severity::kOk);
  Snapshot no_umad = nvl5();
  no_umad.fabric.umad = false;
  Finding f = only(check_nvlink_network(no_umad, kConfig), "fabric.ib-modules-missing");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(f, "sudo modprobe -a ib_umad"));
  // Without the modules NVLSM cannot run: one finding, the cause.
  EXPECT_EQ(check_nvlink_network(no_umad, kConfig).size(), 1u);

  Snapshot no_nvlsm = nvl5();
  no_nvlsm.fabric.nvlsm_binary = false;
  std::erase_if(no_nvlsm.processes, [](const ProcessInfo& p) { return p.comm == "nvlsm"; });
  Finding n = only(check_nvlink_network(no_nvlsm, kConfig), "fabric.nvlsm-not-running");
  EXPECT_EQ(n.severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(n, "apt-get install nvlink5-550"));
  // Installed but down with the fabric manager: starting that is the fix (link 3).
  Snapshot both_down = nvl5();
  std::erase_if(both_down.processes,
                [](const ProcessInfo& p) { return p.comm == "nvlsm" || p.pid == 2301; });
  service_at(both_down, "nv-fabricmanager")->running = false;
  EXPECT_EQ(only(check_nvlink_network(both_down, kConfig), "fabric.nvlsm-not-running").severity,
            Severity::kOk);
  // Not an NVLink5 board: n/a.
  EXPECT_EQ(only(check_nvlink_network(hgx_8xh100(), kConfig), "fabric.nvlsm-not-running").severity,
            Severity::kNotApplicable);
}

TEST(FabricChecks, ARestartInThisBootWarnsAndFailsWithGpusOutside) {
  constexpr const char* kId = "fabric-manager.restarted-without-reset";
  Snapshot s = hgx_8xh100();
  EXPECT_EQ(only(check_fabric_manager_restart(s, kConfig), kId).severity, Severity::kOk);
  KernelEvent stopped;
  stopped.kind = "fabric-manager";
  stopped.type = "stopped";
  stopped.line = "nvidia-fabricmanager-start.sh[20411]: Stopped \"Nvidia Fabric Manager\"";
  s.kernel_log.events.push_back(stopped);
  Finding w = only(check_fabric_manager_restart(s, kConfig), kId);
  EXPECT_EQ(w.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(w, "Stopped \"Nvidia Fabric Manager\""));
  EXPECT_TRUE(remedy_has(w, "sudo nvidia-smi -r"));
  s.nvml.gpus[3].fabric_state = nv_ok(2);
  EXPECT_EQ(only(check_fabric_manager_restart(s, kConfig), kId).severity, Severity::kFail);
  // Two successful starts in the fabric manager's own log say the same.
  Snapshot twice = hgx_8xh100();
  KernelEvent started;
  started.kind = "fabric-manager";
  started.type = "configured";
  started.count = 2;
  twice.fabric.log_events.push_back(started);
  EXPECT_EQ(only(check_fabric_manager_restart(twice, kConfig), kId).severity, Severity::kWarn);
}

TEST(FabricChecks, MultiNodeNeedsAnImexChannel) {
  constexpr const char* kId = "fabric.imex-channels-missing";
  Snapshot s = nvl5();
  s.fabric.bridges.clear();
  s.fabric.imex_configured = true;
  s.driver.char_majors["nvidia-caps-imex-channels"] = 242;
  Finding f = only(check_imex_channels(s, kConfig), kId);
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "/proc/devices: 242 nvidia-caps-imex-channels"));
  EXPECT_TRUE(remedy_has(f, "/dev/nvidia-caps-imex-channels/channel0 c 242 0"));
  s.driver.params["CreateImexChannel0"] = "1";
  EXPECT_EQ(only(check_imex_channels(s, kConfig), kId).severity, Severity::kOk);
  EXPECT_EQ(only(check_imex_channels(hgx_8xh100(), kConfig), kId).severity,
            Severity::kNotApplicable);
}

TEST(FabricChecks, FabricStateAndHealth) {
  Snapshot s = hgx_8xh100();
  for (auto& g : s.nvml.gpus) {
    g.fabric_clique_id = nv_ok<uint32_t>(1);
    g.fabric_cluster_uuid = nv_ok<std::string>("6b1f0c2e-a44d-4c6f-9e0b-5f1c2d3e4a5b");
    g.fabric_health_mask = nv_ok(kHealthyMask);
    g.fabric_health_summary = nv_ok(1);
  }
  auto ok = check_fabric_state(s, kConfig);
  EXPECT_EQ(only(ok, "fabric.not-registered").severity, Severity::kOk);
  EXPECT_EQ(only(ok, "fabric.degraded").severity, Severity::kOk);
  Snapshot limited = s;
  limited.nvml.gpus[2].fabric_health_summary = nv_ok(3);
  Finding w = only(check_fabric_state(limited, kConfig), "fabric.degraded");
  EXPECT_EQ(w.severity, Severity::kWarn);
  EXPECT_EQ(w.gpus, std::vector<std::string>{"0000:3a:00.0"});
  Snapshot split = s;
  split.nvml.gpus[7].fabric_clique_id = nv_ok<uint32_t>(2);
  Finding f = only(check_fabric_state(split, kConfig), "fabric.degraded");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "2 different NVLink domains"));
  Snapshot failed = s;
  failed.nvml.gpus[0].fabric_status = nv_ok(23);
  Finding r = only(check_fabric_state(failed, kConfig), "fabric.not-registered");
  EXPECT_EQ(r.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(r, "status NVML_ERROR_INSUFFICIENT_RESOURCES (23)"));
}

TEST(FabricRanking, TheFirstBrokenLinkIsTheCause) {
  auto fail = [](const char* id) { return make_finding(id, Severity::kFail, id); };
  std::vector<Finding> fs = {fail("fabric.not-registered"), fail("fabric-manager.not-running"),
                             fail("cuda.init-failed"), fail("fabric.ib-modules-missing"),
                             fail("fabric.nvlsm-not-running")};
  rank_findings(&fs);
  EXPECT_EQ(fs[0].id, "fabric.ib-modules-missing");
  for (size_t i = 1; i < fs.size(); ++i) {
    EXPECT_EQ(fs[i].follows_from, "fabric.ib-modules-missing") << fs[i].id;
  }
}

TEST(FabricExplain, ReadsTheFabricBlockOfNvidiaSmiQ) {
  // Azure/azhpc-images#506: an H100's block, pasted on its own.
  Snapshot s = snapshot_from_text(
      "Fabric\n"
      "    State                             : Completed\n"
      "    Status                            : Insufficient Resources\n"
      "    CliqueId                          : 0\n"
      "    ClusterUUID                       : 00000000-0000-0000-0000-000000000000\n");
  ASSERT_EQ(s.nvml.gpus.size(), 1u);
  EXPECT_EQ(s.nvml.gpus[0].fabric_state.value, 3);
  EXPECT_EQ(s.nvml.gpus[0].fabric_status.value, 23);
  EXPECT_EQ(s.nvml.gpus[0].fabric_cluster_uuid.value, "");
  Report r = explain_snapshot(s, kConfig);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "fabric.not-registered");
  // kubernetes-sigs/dra-driver-nvidia-gpu#626: a GB200's, inside its GPU block.
  Snapshot gb = snapshot_from_text(
      "GPU 00000008:01:00.0\n"
      "    Product Name                                       : NVIDIA GB200\n"
      "    Fabric\n"
      "        State                             : Completed\n"
      "        Status                            : Success\n"
      "        CliqueId                          : 2\n"
      "        ClusterUUID                       : dc6e40c4-d722-4357-9ba6-5291dd461278\n"
      "        Health\n"
      "            Summary                       : Unhealthy\n"
      "            Bandwidth                     : Full\n");
  ASSERT_EQ(gb.nvml.gpus.size(), 1u);
  EXPECT_EQ(gb.nvml.gpus[0].fabric_clique_id.value, 2u);
  EXPECT_EQ(gb.nvml.gpus[0].fabric_health_summary.value, 2);
  EXPECT_EQ(gb.nvml.gpus[0].fabric_health_mask.value, 2u);  // bandwidth FALSE: full
  Report g = explain_snapshot(gb, kConfig);
  ASSERT_FALSE(g.findings.empty());
  EXPECT_EQ(g.findings[0].id, "fabric.degraded");
}

}  // namespace
}  // namespace gd
