// Tests of the device-node, fabric-manager, container and cgroup checks.
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

Snapshot in_docker(Snapshot s) {
  s.container.in_container = true;
  s.container.runtime = "docker";
  s.container.evidence = "/.dockerenv exists";
  return s;
}

// --- devnodes.* -----------------------------------------------------------------

TEST(NodeChecks, DevnodesMissingGpuNode) {
  Snapshot s = ws_4x4090();
  remove_devnode(s, "/dev/nvidia2");
  auto fs = check_devnodes(s, kConfig);
  Finding f = only(fs, "devnodes.missing");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_TRUE(evidence_has(f, "/dev/nvidia2: missing (GPU 0000:41:00.0)"));
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-modprobe -c 2"));
  EXPECT_EQ(only(fs, "devnodes.permission").severity, Severity::kOk);
}

TEST(NodeChecks, DevnodesMissingCtlWithModifyDeviceFilesOff) {
  Snapshot s = hgx_8xh100();
  devnode_at(s, "/dev/nvidiactl")->exists = false;
  s.driver.params["ModifyDeviceFiles"] = "0";
  Finding f = only(check_devnodes(s, kConfig), "devnodes.missing");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "/dev/nvidiactl: missing"));
  EXPECT_TRUE(remedy_has(f, "NVreg_ModifyDeviceFiles=0"));
}

TEST(NodeChecks, DevnodesPermissionShowsModeAndGroup) {
  Snapshot s = ws_4x4090();
  for (auto& n : s.devnodes) {
    n.mode = 0660;
    n.owner_gid = 44;
    n.can_open = false;
    n.error = "Permission denied";
  }
  s.limits.groups = {1000};
  auto fs = check_devnodes(s, kConfig);
  Finding f = only(fs, "devnodes.permission");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus.size(), 4u);
  EXPECT_TRUE(evidence_has(f, "/dev/nvidiactl: mode 0660 owner uid 0 gid 44 (Permission denied)"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "this process: uid 1000, groups 1000"));
  EXPECT_TRUE(remedy_has(f, "sudo usermod -aG $(getent group 44 | cut -d: -f1) $USER"));
  EXPECT_TRUE(remedy_has(f, "NVreg_DeviceFileMode"));
  EXPECT_EQ(only(fs, "devnodes.missing").severity, Severity::kOk);
}

TEST(NodeChecks, DevnodesOkAndNotApplicable) {
  auto fs = check_devnodes(hgx_8xh100(), kConfig);
  EXPECT_EQ(only(fs, "devnodes.missing").severity, Severity::kOk);
  EXPECT_NE(only(fs, "devnodes.missing").summary.find("8 GPU node(s)"), std::string::npos);
  auto na = check_devnodes(no_nvidia_machine(), kConfig);
  EXPECT_EQ(only(na, "devnodes.missing").severity, Severity::kNotApplicable);
  EXPECT_EQ(only(na, "devnodes.permission").severity, Severity::kNotApplicable);
}

// --- devnodes.selinux-denied, devnodes.rootless-denied ----------------------------------

Snapshot refused_by_kernel(Snapshot s, const char* err) {
  for (auto& n : s.devnodes) {
    if (!n.exists) continue;
    n.can_open = false;
    n.kernel_refused = err;
  }
  return s;
}

TEST(NodeChecks, SelinuxDeniedNamesTheLabelAndTheBoolean) {
  Snapshot s = refused_by_kernel(in_docker(ws_4x4090()), "EACCES");
  s.security.selinux = "enforcing";
  s.security.label = "system_u:system_r:container_t:s0:c1,c2";
  auto fs = check_devnode_security(s, kConfig);
  Finding f = only(fs, "devnodes.selinux-denied");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("SELinux refuses"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f,
                           "/dev/nvidiactl: mode 0666 owner uid 0 gid 0, but access(2) "
                           "answers EACCES"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "label (/proc/self/attr/current): system_u:system_r:container_t"));
  EXPECT_TRUE(remedy_has(f, "setsebool -P container_use_devices on"));
  EXPECT_EQ(only(fs, "devnodes.rootless-denied").severity, Severity::kNotApplicable);
  // devnodes.permission leaves these nodes to this check.
  Finding perm = only(check_devnodes(s, kConfig), "devnodes.permission");
  EXPECT_EQ(perm.severity, Severity::kOk);
  EXPECT_NE(perm.summary.find("the kernel refuses"), std::string::npos) << perm.summary;
}

TEST(NodeChecks, SecurityModuleWithoutSelinuxSaysSo) {
  Snapshot s = refused_by_kernel(ws_4x4090(), "EACCES");
  Finding f = only(check_devnode_security(s, kConfig), "devnodes.selinux-denied");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("SELinux or AppArmor"), std::string::npos) << f.summary;
  EXPECT_FALSE(remedy_has(f, "setsebool"));
  EXPECT_TRUE(remedy_has(f, "apparmor"));
}

TEST(NodeChecks, RootlessDeniedWhenTheOwnerIsUnmapped) {
  Snapshot s = in_docker(ws_4x4090());
  s.security.user_namespace = true;
  s.security.uid_map = "0 1000 1";
  for (auto& n : s.devnodes) {
    if (!n.exists) continue;
    n.mode = 0660;
    n.owner_uid = n.owner_gid = SecurityInfo::kOverflowId;
    n.can_open = false;
  }
  auto fs = check_devnode_security(s, kConfig);
  Finding f = only(fs, "devnodes.rootless-denied");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "/proc/self/uid_map: 0 1000 1")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "--group-add keep-groups"));
  EXPECT_EQ(only(fs, "devnodes.selinux-denied").severity, Severity::kOk);
  EXPECT_EQ(only(check_devnodes(s, kConfig), "devnodes.permission").severity, Severity::kOk);
  // The same nodes outside a user namespace are a plain permission problem.
  s.security.user_namespace = false;
  EXPECT_EQ(only(check_devnodes(s, kConfig), "devnodes.permission").severity, Severity::kFail);
  EXPECT_EQ(only(check_devnode_security(s, kConfig), "devnodes.rootless-denied").severity,
            Severity::kNotApplicable);
}

TEST(NodeChecks, DevnodeSecurityOkInANamespaceThatCanOpen) {
  Snapshot s = ws_4x4090();
  s.security.user_namespace = true;
  s.security.uid_map = "0 1000 1";
  auto fs = check_devnode_security(s, kConfig);
  EXPECT_EQ(only(fs, "devnodes.rootless-denied").severity, Severity::kOk);
  EXPECT_EQ(only(fs, "devnodes.selinux-denied").severity, Severity::kOk);
  auto na = check_devnode_security(no_nvidia_machine(), kConfig);
  EXPECT_EQ(only(na, "devnodes.selinux-denied").severity, Severity::kNotApplicable);
}

// --- fabric-manager.not-running --------------------------------------------------------

TEST(NodeChecks, FabricManagerNotRunning) {
  Snapshot s = hgx_8xh100();
  service_at(s, "nv-fabricmanager")->running = false;
  service_at(s, "nv-fabricmanager")->pids.clear();
  std::erase_if(s.processes, [](const ProcessInfo& p) { return p.pid == 2301; });
  for (auto& g : s.nvml.gpus) g.fabric_state = nv_ok(1);
  fail_cuda(s, 802);
  Finding f = only(check_fabric_manager(s, kConfig), "fabric-manager.not-running");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus.size(), 8u);
  EXPECT_TRUE(evidence_has(f, "nv-fabricmanager: not running"));
  EXPECT_TRUE(evidence_has(f, "0000:18:00.0: fabric state NOT_STARTED"));
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_SYSTEM_NOT_READY (802)"));
  EXPECT_TRUE(evidence_has(f, "NVSwitches on the PCI bus: 0000:05:00.0 (10de:22a3)"));
  EXPECT_TRUE(remedy_has(f, "sudo systemctl enable --now nvidia-fabricmanager"));
  EXPECT_TRUE(remedy_has(f, "550.54.15"));
}

TEST(NodeChecks, FabricManagerVersionMismatch) {
  Snapshot s = hgx_8xh100();
  service_at(s, "nv-fabricmanager")->version = "550.90.07";
  Finding f = only(check_fabric_manager(s, kConfig), "fabric-manager.version-mismatch");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f,
                           "package nvidia-fabricmanager-550 vs the running driver: 550.90.07 == "
                           "550.54.15 (requirement NOT met)"));
  ASSERT_EQ(f.comparisons.size(), 1u);
  EXPECT_FALSE(f.comparisons[0].met);
  // It runs: that link holds, the version is the break.
  EXPECT_EQ(only(check_fabric_manager(s, kConfig), "fabric-manager.not-running").severity,
            Severity::kOk);
}

TEST(NodeChecks, FabricManagerBinaryReplacedUnderIt) {
  Snapshot s = hgx_8xh100();
  s.fabric.fm_exe = "/usr/bin/nv-fabricmanager (deleted)";
  Finding f = only(check_fabric_manager(s, kConfig), "fabric-manager.version-mismatch");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "replaced after it started"));
  s.fabric.fm_exe = "/usr/bin/nv-fabricmanager";
  EXPECT_EQ(only(check_fabric_manager(s, kConfig), "fabric-manager.version-mismatch").severity,
            Severity::kOk);
}

TEST(NodeChecks, FabricManagerNotInstalledAndNotEnabled) {
  Snapshot s = hgx_8xh100();
  service_at(s, "nv-fabricmanager")->running = false;
  service_at(s, "nv-fabricmanager")->pids.clear();
  service_at(s, "nv-fabricmanager")->version.clear();
  std::erase_if(s.processes, [](const ProcessInfo& p) { return p.pid == 2301; });
  fail_cuda(s, 802);
  Finding f = only(check_fabric_manager(s, kConfig), "fabric-manager.not-installed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(f, "apt-get install 'nvidia-fabricmanager-550=550.54.15*'"));
  // Installed as a unit that is not enabled: it runs now, not after a reboot.
  Snapshot t = hgx_8xh100();
  t.fabric.fm_unit = "/lib/systemd/system/nvidia-fabricmanager.service";
  t.fabric.fm_unit_enabled = 0;
  Finding w = only(check_fabric_manager(t, kConfig), "fabric-manager.not-enabled");
  EXPECT_EQ(w.severity, Severity::kWarn);
  EXPECT_TRUE(remedy_has(w, "sudo systemctl enable nvidia-fabricmanager"));
  t.fabric.fm_unit_enabled = 1;
  EXPECT_EQ(only(check_fabric_manager(t, kConfig), "fabric-manager.not-enabled").severity,
            Severity::kOk);
}

TEST(NodeChecks, FabricManagerQuotesItsOwnWordsFromTheJournal) {
  // github.com/NVIDIA/gpu-operator/issues/544: the journal line of a fabric
  // manager that refused a driver of another version.
  const std::string line =
      "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 "
      "don't match with driver version 530.41.03. Please update with matching NVIDIA driver "
      "package.";
  Snapshot s = hgx_8xh100();
  service_at(s, "nv-fabricmanager")->running = false;
  service_at(s, "nv-fabricmanager")->pids.clear();
  std::erase_if(s.processes, [](const ProcessInfo& p) { return p.pid == 2301; });
  KernelEvent e;
  e.kind = "fabric-manager";
  e.type = "version-mismatch";
  e.line = line;
  s.kernel_log.attempted = true;
  s.kernel_log.events.push_back(e);
  // A fabric-manager event that is evidence for nothing stays out.
  KernelEvent pre = e;
  pre.type = "pre-nvl5";
  pre.line = "Detected Pre-NVL5 system";
  s.kernel_log.events.push_back(pre);
  Finding f = only(check_fabric_manager(s, kConfig), "fabric-manager.version-mismatch");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "don't match with driver version 530.41.03"));
  EXPECT_FALSE(evidence_has(f, "Pre-NVL5"));
  EXPECT_FALSE(evidence_has(only(check_fabric_manager(s, kConfig), "fabric-manager.not-running"),
                            "Pre-NVL5"));
  // A running fabric manager with the driver's version passes, whatever an
  // old journal entry says.
  Snapshot ok = hgx_8xh100();
  ok.kernel_log = s.kernel_log;
  for (const auto& g : check_fabric_manager(ok, kConfig)) {
    // not-enabled: the fixture has no unit file to judge.
    EXPECT_EQ(g.severity,
              g.id == "fabric-manager.not-enabled" ? Severity::kNotApplicable : Severity::kOk)
        << g.id;
  }
}

TEST(NodeChecks, FabricManagerOkAndNotApplicable) {
  constexpr const char* kId = "fabric-manager.not-running";
  EXPECT_EQ(only(check_fabric_manager(hgx_8xh100(), kConfig), kId).severity, Severity::kOk);
  EXPECT_EQ(only(check_fabric_manager(ws_4x4090(), kConfig), kId).severity,
            Severity::kNotApplicable);
  Snapshot s = ws_4x4090();  // 802 without a visible NVSwitch still fails
  fail_cuda(s, 802);
  EXPECT_EQ(only(check_fabric_manager(s, kConfig), kId).severity, Severity::kFail);
  EXPECT_EQ(only(check_fabric_manager(s, kConfig), "fabric-manager.not-installed").severity,
            Severity::kNotApplicable);
}

// --- devnodes.char-links-missing -------------------------------------------------------

TEST(NodeChecks, CharLinksOnAContainerHost) {
  constexpr const char* kId = "devnodes.char-links-missing";
  Snapshot s = ws_4x4090();
  EXPECT_EQ(only(check_char_links(s, kConfig), kId).severity, Severity::kNotApplicable);
  s.container.host_toolkit = "/usr/bin/nvidia-ctk";
  EXPECT_EQ(only(check_char_links(s, kConfig), kId).severity,
            Severity::kNotApplicable);  // not looked
  for (auto& n : s.devnodes) n.char_link = 1;
  EXPECT_EQ(only(check_char_links(s, kConfig), kId).severity, Severity::kOk);
  s.devnodes[1].char_link = 0;
  Finding f = only(check_char_links(s, kConfig), kId);
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f, s.devnodes[1].path));
  EXPECT_TRUE(remedy_has(f, "nvidia-ctk system create-dev-char-symlinks --create-all"));
  Snapshot c = in_docker(s);
  EXPECT_EQ(only(check_char_links(c, kConfig), kId).severity, Severity::kNotApplicable);
}

TEST(NodeChecks, HidepidOnAContainerHost) {
  constexpr const char* kId = "container.proc-hidepid";
  Snapshot s = ws_4x4090();
  s.container.proc_hidepid = "2";
  EXPECT_EQ(only(check_proc_hidepid(s, kConfig), kId).severity, Severity::kNotApplicable);
  s.container.host_toolkit = "/usr/bin/nvidia-ctk";
  Finding f = only(check_proc_hidepid(s, kConfig), kId);
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(remedy_has(f, "remount,hidepid=0"));
  for (const char* off : {"", "0", "off"}) {
    s.container.proc_hidepid = off;
    EXPECT_EQ(only(check_proc_hidepid(s, kConfig), kId).severity, Severity::kOk) << off;
  }
}

// --- container.no-gpus -------------------------------------------------------------------

TEST(NodeChecks, ContainerWithoutGpus) {
  Snapshot s = in_docker(ws_4x4090());
  std::erase_if(s.devnodes, [](const DevNode& n) { return n.path != "/dev/nvidiactl"; });
  Finding f = only(check_container_gpus(s, kConfig), "container.no-gpus");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "/dev/nvidia[0-9]*: none"));
  EXPECT_TRUE(remedy_has(f, "docker run --gpus all"));
  EXPECT_TRUE(remedy_has(f, "--device nvidia.com/gpu=all"));
  EXPECT_TRUE(remedy_has(f, "nvidia.com/gpu: 1"));
}

TEST(NodeChecks, ContainerVisibleDevicesVoid) {
  Snapshot s = in_docker(ws_4x4090());
  s.env.vars["NVIDIA_VISIBLE_DEVICES"] = "void";
  s.devnodes.clear();
  Finding f = only(check_container_gpus(s, kConfig), "container.no-gpus");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "NVIDIA_VISIBLE_DEVICES=void"));
}

TEST(NodeChecks, ContainerOnHostWithoutNvidiaIsNotBlamed) {
  // The dev machine: a docker container on a host with no NVIDIA GPU.
  Snapshot s = in_docker(no_nvidia_machine());
  Finding f = only(check_container_gpus(s, kConfig), "container.no-gpus");
  EXPECT_EQ(f.severity, Severity::kNotApplicable);
  EXPECT_NE(f.summary.find("driver.not-loaded"), std::string::npos);
}

TEST(NodeChecks, ContainerGpusOkAndNotApplicable) {
  Finding ok = only(check_container_gpus(in_docker(ws_4x4090()), kConfig), "container.no-gpus");
  EXPECT_EQ(ok.severity, Severity::kOk);
  EXPECT_NE(ok.summary.find("4 GPU device node(s)"), std::string::npos);
  EXPECT_EQ(check_container_gpus(ws_4x4090(), kConfig).at(0).severity, Severity::kNotApplicable);
}

// --- container.capabilities -----------------------------------------------------------

TEST(NodeChecks, CapabilitiesLackingCompute) {
  Snapshot s = in_docker(ws_4x4090());
  s.env.vars["NVIDIA_DRIVER_CAPABILITIES"] = "utility, graphics";
  Finding f = only(check_container_caps(s, kConfig), "container.capabilities");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "NVIDIA_DRIVER_CAPABILITIES=utility, graphics"));
  EXPECT_TRUE(remedy_has(f, "-e NVIDIA_DRIVER_CAPABILITIES=utility,graphics,compute"));
}

TEST(NodeChecks, CapabilitiesLackingUtilityWarns) {
  Snapshot s = in_docker(ws_4x4090());
  s.env.vars["NVIDIA_DRIVER_CAPABILITIES"] = "compute";
  Finding f = only(check_container_caps(s, kConfig), "container.capabilities");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(remedy_has(f, "NVIDIA_DRIVER_CAPABILITIES=compute,utility"));
}

TEST(NodeChecks, CapabilitiesOkAndNotApplicable) {
  Snapshot s = in_docker(ws_4x4090());
  EXPECT_EQ(check_container_caps(s, kConfig).at(0).severity, Severity::kOk);  // unset
  s.env.vars["NVIDIA_DRIVER_CAPABILITIES"] = "all";
  EXPECT_EQ(check_container_caps(s, kConfig).at(0).severity, Severity::kOk);
  EXPECT_EQ(check_container_caps(ws_4x4090(), kConfig).at(0).severity, Severity::kNotApplicable);
}

// --- container.driver-mismatch ------------------------------------------------------

TEST(NodeChecks, ContainerDriverMismatch) {
  Snapshot s = in_docker(ws_4x4090());
  s.container.driver_libraries = {
      {"/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", "535.104.05"},
      {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14", "550.54.14"},
      {"/usr/local/cuda/compat/libcuda.so.570.124.06", "570.124.06"}};
  Finding f = only(check_container_driver(s, kConfig), "container.driver-mismatch");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f,
                           "libcuda.so.535.104.05 version vs the host kernel module's: "
                           "535.104.05 == 550.54.14 (requirement NOT met)"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "550.54.14 == 550.54.14 (requirement met)")) << describe(f);
  EXPECT_FALSE(evidence_has(f, "compat"));
  EXPECT_TRUE(evidence_has(f, "host kernel module: 550.54.14"));
}

TEST(NodeChecks, ContainerDriverOkAndNotApplicable) {
  Snapshot s = in_docker(ws_4x4090());
  s.container.driver_libraries = {{"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14", "550.54.14"}};
  EXPECT_EQ(check_container_driver(s, kConfig).at(0).severity, Severity::kOk);
  s.container.driver_libraries.clear();
  EXPECT_EQ(check_container_driver(s, kConfig).at(0).severity, Severity::kNotApplicable);
  EXPECT_EQ(check_container_driver(ws_4x4090(), kConfig).at(0).severity, Severity::kNotApplicable);
}

// --- cgroup.device-denied -------------------------------------------------------------

TEST(NodeChecks, CgroupDeniesUvmAndOneGpu) {
  Snapshot s = in_docker(ws_4x4090());
  s.container.devices_cgroup_known = true;
  s.container.devices_allow = {"c 1:3 rwm",  "c 195:255 rw", "c 195:0 rw",  "c 195:1 rw",
                               "c 195:3 rw", "c 195:2 r",    "garbage line"};
  Finding f = only(check_cgroup_devices(s, kConfig), "cgroup.device-denied");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_TRUE(evidence_has(f, "not allowed rw: /dev/nvidia2 (c 195:2), /dev/nvidia-uvm (c 510:0)"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "devices.list: c 195:2 r"));
  EXPECT_TRUE(remedy_has(f,
                         "--device-cgroup-rule='c 195:* rmw' --device-cgroup-rule='c 510:* "
                         "rmw'"));
}

TEST(NodeChecks, CgroupAllowsEverythingOrUnknown) {
  Snapshot s = in_docker(hgx_8xh100());
  s.container.devices_cgroup_known = true;
  s.container.devices_allow = {"c 195:* rwm", "c 510:* rwm"};
  EXPECT_EQ(check_cgroup_devices(s, kConfig).at(0).severity, Severity::kOk);
  s.container.devices_allow = {"a *:* rwm"};
  EXPECT_EQ(check_cgroup_devices(s, kConfig).at(0).severity, Severity::kOk);
  s.container.devices_allow.clear();
  EXPECT_EQ(check_cgroup_devices(s, kConfig).at(0).severity, Severity::kFail);
  EXPECT_EQ(check_cgroup_devices(hgx_8xh100(), kConfig).at(0).severity, Severity::kNotApplicable);
}

TEST(NodeChecks, CgroupV2FilterSeenThroughAccess) {
  Snapshot s = refused_by_kernel(in_docker(ws_4x4090()), "EPERM");
  s.container.devices_cgroup_known = false;
  Finding f = only(check_cgroup_devices(s, kConfig), "cgroup.device-denied");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("eBPF filter refuses"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f, "but access(2) answers EPERM")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "create-dev-char-symlinks"));
  // Neither devnodes.permission nor devnode-security claims them.
  EXPECT_EQ(only(check_devnodes(s, kConfig), "devnodes.permission").severity, Severity::kOk);
  EXPECT_EQ(only(check_devnode_security(s, kConfig), "devnodes.selinux-denied").severity,
            Severity::kOk);
}

}  // namespace
}  // namespace gd
