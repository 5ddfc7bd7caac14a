// Tests of the driver checks (driver.*) and the catalogs they use.
#include <gtest/gtest.h>

#include "catalog/driver_compat.h"
#include "catalog/findings.h"
#include "catalog/gpu_models.h"
#include "checks/checks.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

// The checks this file covers, each of whose ids must answer exactly once.
const std::vector<const CheckEntry*>& owned_checks() {
  static const std::vector<const CheckEntry*> kOwned = registry_entries({
      "driver-loaded",    "nouveau",        "module-load",
      "library-mismatch", "gpu-supported",  "driver-new-enough",
      "stub-library",     "forward-compat", "uvm",
      "uvm-hmm",          "after-suspend",  "devnodes",
      "fabric-manager",   "container-gpus", "container-capabilities",
      "container-driver", "cgroup-devices", "nvml-init",
      "cuda-init",
  });
  return kOwned;
}

void expect_one_finding_per_id(const Snapshot& s, const char* machine) {
  for (const auto& o : owned_checks()) {
    auto fs = o->fn(s, kConfig);
    ASSERT_EQ(fs.size(), o->ids.size()) << machine << "\n" << describe(fs);
    for (const auto& id : o->ids) {
      EXPECT_EQ(count_id(fs, id), 1) << machine << " " << id << "\n" << describe(fs);
    }
    for (const auto& f : fs) EXPECT_FALSE(f.summary.empty()) << f.id;
  }
}

TEST(DriverChecks, HealthyMachinesGiveNoWarnOrFail) {
  for (auto [name, s] : {std::pair{"ws-4x4090", ws_4x4090()}, {"hgx-8xh100", hgx_8xh100()}}) {
    expect_one_finding_per_id(s, name);
    for (const auto& o : owned_checks()) {
      for (const auto& f : o->fn(s, kConfig)) {
        EXPECT_TRUE(f.severity == Severity::kOk || f.severity == Severity::kNotApplicable)
            << name << "\n"
            << describe(f);
      }
    }
  }
}

TEST(DriverChecks, EveryRegisteredIdIsInTheCatalog) {
  for (const auto& c : all_checks()) {
    for (const auto& id : c.ids) EXPECT_NE(find_catalog_entry(id), nullptr) << c.name << " " << id;
  }
}

TEST(DriverChecks, EveryMutatedSnapshotStillGivesOneFindingPerId) {
  Snapshot a = ws_4x4090();
  unload_driver(a);
  expect_one_finding_per_id(a, "unloaded");
  expect_one_finding_per_id(no_nvidia_machine(), "no-nvidia");
  Snapshot empty;  // nothing probed at all
  expect_one_finding_per_id(empty, "empty");
}

// --- driver.not-loaded -----------------------------------------------------

TEST(DriverChecks, NotLoadedOnMachineWithoutNvidiaSaysSoInOneLine) {
  auto fs = check_driver_loaded(no_nvidia_machine(), kConfig);
  const Finding* f = find_id(fs, "driver.not-loaded");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_NE(f->summary.find("no NVIDIA GPU on the PCI bus"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("CUDA cannot run"), std::string::npos);
  EXPECT_EQ(f->summary.find('\n'), std::string::npos);
  EXPECT_TRUE(evidence_has(*f, "libnvidia-ml.so.1: cannot open shared object file"));
  EXPECT_TRUE(f->gpus.empty());
}

TEST(DriverChecks, NotLoadedWithGpusNamesThemAndSaysHowToLoad) {
  Snapshot s = ws_4x4090();
  unload_driver(s);
  auto fs = check_driver_loaded(s, kConfig);
  const Finding* f = find_id(fs, "driver.not-loaded");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_EQ(f->gpus, (std::vector<std::string>{"0000:01:00.0", "0000:21:00.0", "0000:41:00.0",
                                               "0000:61:00.0"}));
  EXPECT_TRUE(evidence_has(*f, "0000:41:00.0 NVIDIA GeForce RTX 4090 (10de:2684)"));
  EXPECT_TRUE(remedy_has(*f, "sudo modprobe nvidia"));
  EXPECT_TRUE(remedy_has(*f, "Secure Boot"));
  EXPECT_TRUE(remedy_has(*f, "dmesg"));
}

TEST(DriverChecks, NotLoadedIsOkWhenLoaded) {
  auto fs = check_driver_loaded(hgx_8xh100(), kConfig);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::kOk);
  EXPECT_NE(fs[0].summary.find("550.54.15"), std::string::npos);
}

// --- driver.nouveau ------------------------------------------------------------

TEST(DriverChecks, NouveauBoundToGpuFails) {
  Snapshot s = ws_4x4090();
  unload_driver(s);
  s.driver.modules.push_back(live_module("nouveau", 3, ""));
  pci_at(s, "0000:01:00.0")->driver = "nouveau";
  auto fs = check_nouveau(s, kConfig);
  const Finding* f = find_id(fs, "driver.nouveau");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_EQ(f->gpus, std::vector<std::string>{"0000:01:00.0"});
  EXPECT_TRUE(evidence_has(*f,
                           "0000:01:00.0 NVIDIA GeForce RTX 4090 (10de:2684) bound to driver "
                           "nouveau"));
  EXPECT_TRUE(remedy_has(*f, "blacklist nouveau"));
  EXPECT_TRUE(remedy_has(*f, "update-initramfs -u"));
  EXPECT_TRUE(remedy_has(*f, "reboot"));
}

TEST(DriverChecks, NouveauModuleAloneFails) {
  Snapshot s = ws_4x4090();
  s.driver.modules.push_back(live_module("nouveau", 0, ""));
  auto fs = check_nouveau(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0], "/proc/modules: nouveau Live"));
}

TEST(DriverChecks, NouveauOkOrNotApplicable) {
  EXPECT_EQ(check_nouveau(ws_4x4090(), kConfig).at(0).severity, Severity::kOk);
  EXPECT_EQ(check_nouveau(no_nvidia_machine(), kConfig).at(0).severity, Severity::kNotApplicable);
}

// --- driver.module-load-failed -----------------------------------------------------

TEST(DriverChecks, ModuleLoadFailedWhenAGpuIsLeftUnbound) {
  Snapshot s = hgx_8xh100();
  PciDevice* d = pci_at(s, "0000:5d:00.0");
  d->driver.clear();
  d->proc_minor.reset();
  d->proc_model.clear();
  d->proc_uuid.clear();
  auto fs = check_module_load_failed(s, kConfig);
  const Finding* f = find_id(fs, "driver.module-load-failed");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_EQ(f->gpus, std::vector<std::string>{"0000:5d:00.0"});
  EXPECT_NE(f->summary.find("1 of the 8"), std::string::npos) << f->summary;
  EXPECT_TRUE(evidence_has(*f, "0000:5d:00.0"));
  EXPECT_TRUE(remedy_has(*f, "dmesg"));
}

TEST(DriverChecks, ModuleLoadFailedWhenModuleIsStuckLoading) {
  Snapshot s = ws_4x4090();
  module_at(s, "nvidia")->state = "Loading";
  auto fs = check_module_load_failed(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0], "nvidia is in state Loading"));
}

TEST(DriverChecks, ModuleLoadFailedWhenProcLacksABoundGpu) {
  Snapshot s = ws_4x4090();
  PciDevice* d = pci_at(s, "0000:21:00.0");
  d->proc_minor.reset();
  d->proc_model.clear();
  d->proc_uuid.clear();
  auto fs = check_module_load_failed(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0], "absent from /proc/driver/nvidia/gpus"));
  // In a container /proc lists only the given GPUs: not a failure there.
  s.container.in_container = true;
  EXPECT_EQ(check_module_load_failed(s, kConfig).at(0).severity, Severity::kOk);
}

TEST(DriverChecks, ModuleLoadOkAndNotApplicable) {
  EXPECT_EQ(check_module_load_failed(hgx_8xh100(), kConfig).at(0).severity, Severity::kOk);
  EXPECT_EQ(check_module_load_failed(no_nvidia_machine(), kConfig).at(0).severity,
            Severity::kNotApplicable);
}

// --- driver.library-mismatch -------------------------------------------------------

TEST(DriverChecks, LibraryMismatchFromNvmlRc18) {
  Snapshot s = ws_4x4090();
  s.nvml.init_rc = 18;
  s.nvml.library_loaded = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07";
  s.nvml.driver_version = nv_rc<std::string>(-1);
  auto fs = check_library_mismatch(s, kConfig);
  const Finding* f = find_id(fs, "driver.library-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(*f, "NVML_ERROR_LIB_RM_VERSION_MISMATCH (18)")) << describe(*f);
  EXPECT_TRUE(evidence_has(*f, "kernel module: 550.54.14"));
  EXPECT_TRUE(evidence_has(*f, "550.90.07 == 550.54.14 (requirement NOT met)")) << describe(*f);
  EXPECT_TRUE(remedy_has(*f, "sudo reboot"));
}

TEST(DriverChecks, LibraryMismatchFromNvmlVersionAndCuda803) {
  Snapshot s = hgx_8xh100();
  s.nvml.driver_version = nv_ok<std::string>("550.90.07");
  fail_cuda(s, 803);
  auto fs = check_library_mismatch(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0],
                           "driver version NVML reports (nvmlSystemGetDriverVersion) vs the "
                           "kernel module's: 550.90.07 == 550.54.15 (requirement NOT met)"))
      << describe(fs[0]);
  EXPECT_TRUE(evidence_has(fs[0], "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"));
}

// The ok verdict states the versions it compared, all equal (numerically:
// the module's 560.35.03 is NVML's 560.35.3).
TEST(DriverChecks, LibraryMatchStatesEveryVersionCompared) {
  Snapshot s = hgx_8xh100();
  s.driver.version = "560.35.03";
  s.nvml.driver_version = nv_ok<std::string>("560.35.3");
  s.nvml.library_loaded = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.560.35.03";
  user_run(s).library_loaded = "/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03";
  const Finding& f = only(check_library_mismatch(s, kConfig), "driver.library-mismatch");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  ASSERT_EQ(f.comparisons.size(), 3u) << describe(f);
  for (const Comparison& c : f.comparisons) EXPECT_TRUE(c.met) << c.what;
  EXPECT_TRUE(evidence_has(f, "560.35.3 == 560.35.03 (requirement met)")) << describe(f);
}

TEST(DriverChecks, Cuda803WithCompatLibraryIsNotALibraryMismatch) {
  Snapshot s = hgx_8xh100();
  fail_cuda(s, 803);
  user_run(s).library_loaded = "/usr/local/cuda-12.8/compat/libcuda.so.570.124.06";
  EXPECT_EQ(check_library_mismatch(s, kConfig).at(0).severity, Severity::kOk);
}

TEST(DriverChecks, LibraryMismatchOkAndNotApplicable) {
  EXPECT_EQ(check_library_mismatch(ws_4x4090(), kConfig).at(0).severity, Severity::kOk);
  EXPECT_EQ(check_library_mismatch(no_nvidia_machine(), kConfig).at(0).severity,
            Severity::kNotApplicable);
}

// --- driver.gpu-unsupported ----------------------------------------------------------

// A machine whose GPUs are replaced by `device_id` (name from the catalog).
Snapshot with_gpu_model(Snapshot s, uint16_t device_id) {
  for (auto& d : s.pci) {
    if (d.kind == PciKind::kGpu) {
      d.device_id = device_id;
      d.proc_model.clear();
    }
  }
  for (auto& g : s.nvml.gpus) {
    g.architecture = nv_rc<int>(-1);
    g.name = nv_rc<std::string>(-1);
  }
  return s;
}

TEST(DriverChecks, KeplerOnNewDriverIsUnsupported) {
  Snapshot s = with_gpu_model(ws_4x4090(), 0x102d);  // Tesla K80
  auto fs = check_gpu_unsupported(s, kConfig);
  const Finding* f = find_id(fs, "driver.gpu-unsupported");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_EQ(f->gpus.size(), 4u);
  EXPECT_TRUE(evidence_has(*f,
                           "Tesla K80 (10de:102d), Kepler: Kepler GPUs are supported up to "
                           "driver branch R470; this driver is R550"))
      << describe(*f);
  EXPECT_TRUE(remedy_has(*f, "nvidia-driver-470"));
}

TEST(DriverChecks, VoltaOnR590IsUnsupportedButFineOnR580) {
  Snapshot s = with_gpu_model(hgx_8xh100(), 0x1db5);  // V100 SXM2 32GB
  s.driver.open_kernel_module = false;
  s.driver.version = "590.44.01";
  auto fs = check_gpu_unsupported(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(fs[0], "R580"));
  s.driver.version = "580.95.05";
  EXPECT_EQ(check_gpu_unsupported(s, kConfig).at(0).severity, Severity::kOk);
}

TEST(DriverChecks, OpenModuleOnPascalIsUnsupported) {
  Snapshot s = with_gpu_model(ws_4x4090(), 0x1b80);  // GTX 1080
  s.driver.open_kernel_module = true;
  auto fs = check_gpu_unsupported(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0], "open kernel module supports Turing and newer only"));
  EXPECT_TRUE(remedy_has(fs[0], "proprietary"));
}

TEST(DriverChecks, BlackwellNeedsR570AndTheOpenModule) {
  Snapshot s = with_gpu_model(ws_4x4090(), 0x2b85);  // RTX 5090
  auto fs = check_gpu_unsupported(s, kConfig);       // 550, proprietary
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0], "need driver branch R570 or newer"));
  s.driver.version = "570.86.16";
  fs = check_gpu_unsupported(s, kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(fs[0], "needs the open kernel module"));
  EXPECT_TRUE(remedy_has(fs[0], "nvidia-driver-570-open"));
  s.driver.open_kernel_module = true;
  EXPECT_EQ(check_gpu_unsupported(s, kConfig).at(0).severity, Severity::kOk);
}

TEST(DriverChecks, GpuSupportedOkAndNotApplicable) {
  auto fs = check_gpu_unsupported(hgx_8xh100(), kConfig);
  EXPECT_EQ(fs.at(0).severity, Severity::kOk);
  EXPECT_NE(fs[0].summary.find("8 x Hopper"), std::string::npos) << fs[0].summary;
  EXPECT_EQ(check_gpu_unsupported(no_nvidia_machine(), kConfig).at(0).severity,
            Severity::kNotApplicable);
}

// --- catalogs ---------------------------------------------------------------------------

TEST(DriverCatalog, ParsesAndComparesDriverVersions) {
  auto v = parse_driver_version("550.54.14");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 550);
  EXPECT_EQ(to_string(*v), "550.54.14");
  EXPECT_EQ(to_string(*parse_driver_version("470.42.01")), "470.42.01");
  EXPECT_EQ(to_string(*parse_driver_version("570.26")), "570.26");
  EXPECT_LT(compare(*parse_driver_version("570.26"), *parse_driver_version("570.124.06")), 0);
  for (const char* bad : {"", "550", "550.", "a.b", "550.54.14.1", "-1.2", "550..14"}) {
    EXPECT_FALSE(parse_driver_version(bad)) << bad;
  }
}

TEST(DriverCatalog, ToolkitTableAndMinorCompatibility) {
  ASSERT_NE(toolkit_min_driver(12040), nullptr);
  EXPECT_STREQ(toolkit_min_driver(12040)->min_driver, "550.54.14");
  EXPECT_STREQ(toolkit_min_driver(12080)->min_driver, "570.26");
  EXPECT_EQ(toolkit_min_driver(12070), nullptr);  // 12.7 was never released
  EXPECT_EQ(max_cuda_for_driver(*parse_driver_version("550.54.15")), 12040);
  EXPECT_EQ(max_cuda_for_driver(*parse_driver_version("580.95.05")), 13000);
  auto drv = parse_driver_version("550.54.14");
  EXPECT_EQ(runtime_fit(12040, 12040, drv), RuntimeFit::kNative);
  EXPECT_EQ(runtime_fit(12080, 12040, drv), RuntimeFit::kMinorCompat);
  EXPECT_EQ(runtime_fit(13000, 12040, drv), RuntimeFit::kTooOld);
  EXPECT_EQ(runtime_fit(11080, 12040, drv), RuntimeFit::kNative);
  EXPECT_EQ(runtime_fit(0, 12040, drv), RuntimeFit::kUnknown);
  EXPECT_EQ(cuda_version_text(12040), "12.4");
}

TEST(DriverCatalog, GpuModelsFromFactsTable) {
  const GpuModel* m = find_gpu_model(0x2330);
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(m->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m->arch, GpuArch::kHopper);
  EXPECT_EQ(m->forward_compat, Support::kYes);
  EXPECT_EQ(find_gpu_model(0x2684)->forward_compat, Support::kNo);
  EXPECT_EQ(find_gpu_model(0x2684)->cc_minor, 9);
  EXPECT_EQ(find_gpu_model(0xffff), nullptr);
  EXPECT_EQ(arch_from_nvml(8), GpuArch::kAda);
  EXPECT_EQ(arch_from_cc(7, 5), GpuArch::kTuring);
  EXPECT_EQ(arch_from_cc(7, 0), GpuArch::kVolta);
  EXPECT_EQ(arch_from_cc(12, 0), GpuArch::kBlackwell);
}

// --- nvidia_uvm: every way the kernel shows it, and "not seen" != "not loaded" ---------

ProbeRecord& driver_probe(Snapshot& s) {
  for (auto& p : s.probes) {
    if (p.name == "driver") return p;
  }
  s.probes.push_back({"driver", ProbeStatus::kOk, "", 1.0, {}, 0});
  return s.probes.back();
}

// The real H200 VM (kernel without CONFIG_MODULE_UNLOAD): refcount "-".
TEST(UvmCheck, RefcountDashIsLoaded) {
  Snapshot s = hgx_8xh100();
  for (auto& m : s.driver.modules) m.refcount = ModuleInfo::kRefcountUnknown;
  const Finding f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
}

TEST(UvmCheck, SysModuleAloneIsLoaded) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 999);  // so only the module evidence can decide
  module_at(s, "nvidia_uvm")->source = ModuleInfo::kFromSysModule;
  module_at(s, "nvidia_uvm")->builtin = true;
  module_at(s, "nvidia_uvm")->state = "";
  const Finding f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_TRUE(evidence_has(f, "/sys/module/nvidia_uvm: built into the kernel")) << describe(f);
}

// Not in the module list, but its character device is registered and its
// node is there: the old snapshot of the H200 VM, whose two /proc/modules
// lines were unrecognised.
TEST(UvmCheck, ProcDevicesAndNodeAreLoaded) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 999);
  remove_module(s, "nvidia_uvm");
  const Finding f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_TRUE(evidence_has(f, "/proc/devices: nvidia-uvm major 510")) << describe(f);
}

// Node present, module list unreadable or partly unrecognised, no
// nvidia-uvm in /proc/devices: unknown, so warn and name what decides.
TEST(UvmCheck, UnrecognisedLinesAreNotAbsence) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 999);
  remove_module(s, "nvidia_uvm");
  s.driver.char_majors.erase("nvidia-uvm");
  driver_probe(s).unrecognised_lines = 2;
  Finding f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_NE(f.summary.find("2 unrecognised lines in /proc/modules"), std::string::npos)
      << f.summary;
  EXPECT_EQ(f.summary.find("not loaded"), std::string::npos) << f.summary;
  EXPECT_TRUE(remedy_has(f, "lsmod | grep nvidia_uvm"));

  driver_probe(s).unrecognised_lines = 0;
  driver_probe(s).gaps = {{"driver.modules", "/proc/modules: Permission denied"}};
  f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "/proc/modules could not be read (/proc/modules: Permission "
                           "denied)"))
      << describe(f);

  // With the whole list read and understood, the absence is real.
  driver_probe(s).gaps.clear();
  f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
}

// Snapshots from before the count was recorded: the probe's detail says it.
TEST(UvmCheck, OldSnapshotDetailIsADoubt) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 999);
  remove_module(s, "nvidia_uvm");
  s.driver.char_majors.erase("nvidia-uvm");
  driver_probe(s).status = ProbeStatus::kFailed;
  driver_probe(s).detail = "2 unrecognised lines in /proc/modules";
  EXPECT_EQ(only(check_uvm(s, kConfig), "uvm.missing").severity, Severity::kWarn);
}

// Invariant: when cuInit and every context succeeded in the user's run, no
// module list, however wrong, makes uvm.missing fail.
TEST(UvmCheck, NeverFailsWhenCudaStarted) {
  Snapshot s = hgx_8xh100();
  remove_module(s, "nvidia_uvm");
  s.driver.char_majors.erase("nvidia-uvm");
  remove_devnode(s, "/dev/nvidia-uvm");
  Finding f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_NE(f.summary.find("CUDA started"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f, "/proc/modules: no nvidia_uvm")) << describe(f);
  // One device without a context: CUDA did not start, the absence stands.
  user_run(s).devices.back().ctx_rc = 2;
  EXPECT_EQ(only(check_uvm(s, kConfig), "uvm.missing").severity, Severity::kFail);
}

TEST(UvmCheck, LoadingModuleIsNotLoaded) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 999);
  module_at(s, "nvidia_uvm")->state = "Loading";
  Finding f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_NE(f.summary.find("(it is Loading)"), std::string::npos) << f.summary;
}

TEST(DriverLoadedCheck, ProcDevicesShowsTheDriverWhenTheListCannot) {
  Snapshot s = ws_4x4090();
  s.driver.proc_driver_nvidia = false;
  remove_module(s, "nvidia");
  driver_probe(s).unrecognised_lines = 1;
  Finding f = only(check_driver_loaded(s, kConfig), "driver.not-loaded");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_TRUE(evidence_has(f, "/proc/devices: nvidia-frontend major 195")) << describe(f);

  // Without nvidiactl either, it fails, and says the list was incomplete.
  s.driver.char_majors.clear();
  f = only(check_driver_loaded(s, kConfig), "driver.not-loaded");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "no nvidia module seen (1 unrecognised line in /proc/modules)"))
      << describe(f);
}

TEST(DriverLoadedCheck, EvidenceSaysWhereTheModuleWasSeen) {
  Snapshot s = ws_4x4090();
  module_at(s, "nvidia")->refcount = ModuleInfo::kRefcountUnknown;
  EXPECT_TRUE(evidence_has(only(check_driver_loaded(s, kConfig), "driver.not-loaded"),
                           "/proc/modules: nvidia Live, refcount -"));
  module_at(s, "nvidia")->source = ModuleInfo::kFromSysModule;
  module_at(s, "nvidia")->builtin = true;
  EXPECT_TRUE(evidence_has(only(check_driver_loaded(s, kConfig), "driver.not-loaded"),
                           "/sys/module/nvidia: built into the kernel"));
}

}  // namespace
}  // namespace gd
