// Tests of the CUDA-library, UVM and start-up checks: driver.too-old-for-cuda,
// cuda.stub-library, cuda.compat-*, uvm.*, driver.after-suspend, nvml.init-*,
// cuda.init-*.
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

// --- driver.too-old-for-cuda -----------------------------------------------------

TEST(CudaLibChecks, TooOldForCudaOnInsufficientDriver) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 0, 35);
  user_run(s).init_rc = 0;
  user_run(s).cudart_runtime_version = 13000;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("CUDA 13.0"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f,
                           "Error 35: CUDA driver version is insufficient for CUDA runtime "
                           "version"))
      << describe(f);
  EXPECT_TRUE(evidence_has(f, "driver supports up to CUDA 12.4"));
  EXPECT_TRUE(evidence_has(f, "CUDA 13.0 GA's minimum driver"));
  EXPECT_TRUE(remedy_has(f, "nvidia-driver-580"));
  // GeForce: no forward-compat advice.
  EXPECT_FALSE(remedy_has(f, "cuda-compat"));
}

// Issue 14: error 35 alone once gave "driver 550.54.14 is too old for CUDA
// 12.4" beside "CUDA 12.4 GA needs driver >= 550.54.14", evidence that
// refutes it. The numbers decide: the driver is new enough, so this is not
// the cause (the 35 comes from elsewhere: another libcuda, a compat package).
TEST(CudaLibChecks, Rc35WithADriverNewEnoughIsNotTooOld) {
  Snapshot s = ws_4x4090();  // driver 550.54.14, cuDriverGetVersion 12040
  fail_cuda(s, 0, 35);
  user_run(s).init_rc = 0;
  user_run(s).cudart_runtime_version = 12040;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  EXPECT_NE(f.severity, Severity::kFail) << describe(f);
  EXPECT_NE(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.summary.find("too old for"), std::string::npos) << f.summary;
  ASSERT_FALSE(f.comparisons.empty());
  for (const Comparison& c : f.comparisons) EXPECT_TRUE(c.met) << c.what;
  EXPECT_TRUE(evidence_has(f, "12.4 >= 12.4 (requirement met)")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "Error 35")) << describe(f);
}

TEST(CudaLibChecks, TooOldStatesTheUnmetComparisons) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 0, 35);
  user_run(s).init_rc = 0;
  user_run(s).cudart_runtime_version = 13000;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  ASSERT_EQ(f.severity, Severity::kFail);
  bool unmet = false;
  for (const Comparison& c : f.comparisons) unmet = unmet || !c.met;
  EXPECT_TRUE(unmet) << describe(f);
  EXPECT_TRUE(evidence_has(f, "12.4 >= 13.0 (requirement NOT met)")) << describe(f);
  EXPECT_TRUE(evidence_has(f, "550.54.14 >= 580.65.06 (requirement NOT met)")) << describe(f);
}

TEST(CudaLibChecks, MinorCompatStatesTheFamilyMinimum) {
  Snapshot s = ws_4x4090();
  user_run(s).cudart_runtime_version = 12080;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  ASSERT_EQ(f.severity, Severity::kOk);
  EXPECT_TRUE(evidence_has(f, "550.54.14 >= 525.60.13 (requirement met)")) << describe(f);
  for (const Comparison& c : f.comparisons) EXPECT_TRUE(c.met) << c.what;
}

// Pasted text with error 35 and no runtime version: nothing to compare, and
// the finding says which number is missing.
TEST(CudaLibChecks, Rc35WithoutARuntimeVersionNamesWhatIsUnknown) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 0, 35);
  user_run(s).init_rc = 0;
  user_run(s).cudart_runtime_version = 0;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(f.comparisons.empty());
  EXPECT_TRUE(evidence_has(f, "not compared:")) << describe(f);
}

TEST(CudaLibChecks, TooOldForCudaWithoutRc35FromVersionsAlone) {
  Snapshot s = hgx_8xh100();
  user_run(s).cudart_runtime_version = 13010;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(f, "cuda-compat-13-1"));  // H100 supports forward compat
}

TEST(CudaLibChecks, MinorVersionCompatibilityIsOk) {
  Snapshot s = ws_4x4090();
  user_run(s).cudart_runtime_version = 12080;
  const Finding& f = only(check_too_old_for_cuda(s, kConfig), "driver.too-old-for-cuda");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_NE(f.summary.find("minor-version compatibility"), std::string::npos);
}

TEST(CudaLibChecks, TooOldNotApplicableWithoutCudart) {
  Snapshot s = ws_4x4090();
  user_run(s).cudart_loaded.clear();
  EXPECT_EQ(check_too_old_for_cuda(s, kConfig).at(0).severity, Severity::kNotApplicable);
  EXPECT_EQ(check_too_old_for_cuda(ws_4x4090(), kConfig).at(0).severity, Severity::kOk);
}

// --- cuda.stub-library -------------------------------------------------------------

TEST(CudaLibChecks, StubLibraryFromLdLibraryPath) {
  Snapshot s = ws_4x4090();
  s.env.vars["LD_LIBRARY_PATH"] =
      "/usr/local/cuda-12.4/lib64:/usr/local/cuda-12.4/lib64/stubs/:/opt/lib";
  fail_cuda(s, 34);
  user_run(s).library_loaded = "/usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so";
  const Finding& f = only(check_stub_library(s, kConfig), "cuda.stub-library");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f,
                           "loaded from /usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/"
                           "libcuda.so"));
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_STUB_LIBRARY (34)"));
  EXPECT_TRUE(remedy_has(f, "export LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64:/opt/lib   #"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo ldconfig"));
  EXPECT_TRUE(remedy_has(f, "ldconfig -p | grep libcuda"));
}

TEST(CudaLibChecks, StubLibraryFromRcOnlyAndLdconfigCache) {
  Snapshot s = ws_4x4090();
  s.env.vars.erase("LD_LIBRARY_PATH");
  fail_cuda(s, 34);
  const Finding& f = only(check_stub_library(s, kConfig), "cuda.stub-library");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(remedy_has(f, "/etc/ld.so.conf.d/"));
}

TEST(CudaLibChecks, StubLibraryOnlyEntryGivesUnset) {
  Snapshot s = ws_4x4090();
  s.env.vars["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64/stubs";
  user_run(s).library_loaded = "/usr/local/cuda/lib64/stubs/libcuda.so";
  const Finding& f = only(check_stub_library(s, kConfig), "cuda.stub-library");
  EXPECT_TRUE(remedy_has(f, "unset LD_LIBRARY_PATH"));
}

TEST(CudaLibChecks, StubLibraryOkAndNotApplicable) {
  const Finding& ok = only(check_stub_library(ws_4x4090(), kConfig), "cuda.stub-library");
  EXPECT_EQ(ok.severity, Severity::kOk);
  EXPECT_NE(ok.summary.find("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14"), std::string::npos);
  EXPECT_EQ(check_stub_library(no_nvidia_machine(), kConfig).at(0).severity,
            Severity::kNotApplicable);
}

// --- cuda.compat-* ---------------------------------------------------------------------

TEST(CudaLibChecks, CompatOnGeForceIsUnsupported) {
  Snapshot s = ws_4x4090();
  s.env.vars["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.8/compat:/usr/local/cuda-12.8/lib64";
  fail_cuda(s, 804);
  user_run(s).library_loaded = "/usr/local/cuda-12.8/compat/libcuda.so.570.124.06";
  auto fs = check_compat(s, kConfig);
  ASSERT_EQ(fs.size(), 2u);
  const Finding& f = only(fs, "cuda.compat-unsupported");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus.size(), 4u);
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "export LD_LIBRARY_PATH=/usr/local/cuda-12.8/lib64"));
  EXPECT_EQ(only(fs, "cuda.compat-mismatch").severity, Severity::kOk);
}

TEST(CudaLibChecks, CompatMismatchOn803) {
  Snapshot s = hgx_8xh100();
  fail_cuda(s, 803);
  user_run(s).library_loaded = "/usr/local/cuda-12.8/compat/libcuda.so.570.124.06";
  auto fs = check_compat(s, kConfig);
  const Finding& f = only(fs, "cuda.compat-mismatch");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "version 570.124.06"));
  EXPECT_TRUE(evidence_has(f, "kernel module: 550.54.15"));
  EXPECT_EQ(only(fs, "cuda.compat-unsupported").severity, Severity::kOk);  // H100 supports it
}

TEST(CudaLibChecks, CompatOlderThanKernelWarns) {
  Snapshot s = hgx_8xh100();
  user_run(s).library_loaded = "/usr/local/cuda-12.2/compat/libcuda.so.535.104.05";
  const Finding& f = only(check_compat(s, kConfig), "cuda.compat-mismatch");
  EXPECT_EQ(f.severity, Severity::kWarn);
}

TEST(CudaLibChecks, CompatNotApplicableWithoutCompatLibrary) {
  auto fs = check_compat(hgx_8xh100(), kConfig);
  ASSERT_EQ(fs.size(), 2u);
  for (const auto& f : fs) EXPECT_EQ(f.severity, Severity::kNotApplicable);
}

// --- uvm.missing ----------------------------------------------------------------------

TEST(CudaLibChecks, UvmMissingExplainsCuda999) {
  Snapshot s = ws_4x4090();
  remove_module(s, "nvidia_uvm");
  remove_devnode(s, "/dev/nvidia-uvm");
  s.driver.char_majors.erase("nvidia-uvm");
  fail_cuda(s, 999);
  const Finding& f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "/proc/modules: no nvidia_uvm"));
  EXPECT_TRUE(evidence_has(f, "/dev/nvidia-uvm: missing"));
  EXPECT_TRUE(evidence_has(f, "CUDA_ERROR_UNKNOWN (999) — a missing nvidia_uvm explains this"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo modprobe nvidia_uvm"));
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-modprobe -c 0 -u"));
}

TEST(CudaLibChecks, UvmNodeMissingAlone) {
  Snapshot s = hgx_8xh100();
  devnode_at(s, "/dev/nvidia-uvm")->exists = false;
  fail_cuda(s, 999);  // with CUDA started, a missing node is the probe's error (uvm.cc)
  const Finding& f = only(check_uvm(s, kConfig), "uvm.missing");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_FALSE(remedy_has(f, "sudo modprobe nvidia_uvm"));
  EXPECT_TRUE(remedy_has(f, "nvidia-modprobe -c 0 -u"));
}

TEST(CudaLibChecks, UvmOkAndNotApplicable) {
  EXPECT_EQ(check_uvm(ws_4x4090(), kConfig).at(0).severity, Severity::kOk);
  EXPECT_EQ(check_uvm(no_nvidia_machine(), kConfig).at(0).severity, Severity::kNotApplicable);
}

// --- uvm.hmm --------------------------------------------------------------------------

TEST(CudaLibChecks, HmmSuspectedOn999WithHmmEnabled) {
  Snapshot s = hgx_8xh100();
  fail_cuda(s, 999);
  const Finding& f = only(check_uvm_hmm(s, kConfig), "uvm.hmm");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_NE(f.summary.find("suspicion"), std::string::npos);
  EXPECT_TRUE(evidence_has(f, "uvm_disable_hmm: N"));
  EXPECT_TRUE(remedy_has(f, "options nvidia_uvm uvm_disable_hmm=1"));
}

TEST(CudaLibChecks, HmmOkWhenDisabledAndNotApplicableWhenCudaWorks) {
  Snapshot s = hgx_8xh100();
  fail_cuda(s, 999);
  s.driver.uvm_disable_hmm = "Y";
  EXPECT_EQ(check_uvm_hmm(s, kConfig).at(0).severity, Severity::kOk);
  EXPECT_EQ(check_uvm_hmm(hgx_8xh100(), kConfig).at(0).severity, Severity::kNotApplicable);
  Snapshot oom = hgx_8xh100();
  fail_cuda(oom, 2);
  EXPECT_EQ(check_uvm_hmm(oom, kConfig).at(0).severity, Severity::kOk);
}

// --- driver.after-suspend ------------------------------------------------------------

TEST(CudaLibChecks, AfterSuspendOn999) {
  Snapshot s = ws_4x4090();
  s.driver.seconds_since_resume = 3 * 3600 + 12 * 60;
  fail_cuda(s, 999);
  const Finding& f = only(check_after_suspend(s, kConfig), "driver.after-suspend");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "last resume: 3 h 12 min ago"));
  EXPECT_TRUE(remedy_has(f, "sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm"));
}

TEST(CudaLibChecks, AfterSuspendOkOrNotApplicable) {
  Snapshot s = ws_4x4090();
  EXPECT_EQ(check_after_suspend(s, kConfig).at(0).severity, Severity::kNotApplicable);
  s.driver.seconds_since_resume = 60;
  EXPECT_EQ(check_after_suspend(s, kConfig).at(0).severity, Severity::kOk);
  fail_cuda(s, 2);
  EXPECT_EQ(check_after_suspend(s, kConfig).at(0).severity, Severity::kOk);
}

// --- nvml.init-* ------------------------------------------------------------------------

TEST(CudaLibChecks, NvmlHang) {
  Snapshot s = hgx_8xh100();
  s.nvml.child_error = "timeout";
  s.deadline_s = 10;
  auto fs = check_nvml_init(s, kConfig);
  const Finding& hang = only(fs, "nvml.init-hang");
  EXPECT_EQ(hang.severity, Severity::kFail);
  EXPECT_NE(hang.summary.find("did not return within 10 s"), std::string::npos);
  EXPECT_TRUE(evidence_has(hang, "deadline_s: 10"));
  EXPECT_EQ(only(fs, "nvml.init-failed").severity, Severity::kNotApplicable);
}

TEST(CudaLibChecks, NvmlCrashAndInitError) {
  Snapshot s = ws_4x4090();
  s.nvml.child_error = "crashed: SIGSEGV";
  auto fs = check_nvml_init(s, kConfig);
  EXPECT_EQ(only(fs, "nvml.init-failed").severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(only(fs, "nvml.init-failed"), "SIGSEGV"));
  EXPECT_EQ(only(fs, "nvml.init-hang").severity, Severity::kOk);

  Snapshot t = ws_4x4090();
  t.nvml.init_rc = 18;
  const Finding& f = only(check_nvml_init(t, kConfig), "nvml.init-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "nvmlInit_v2: NVML_ERROR_LIB_RM_VERSION_MISMATCH (18)"));
}

TEST(CudaLibChecks, NvmlWithoutDriverOnlyWarns) {
  auto fs = check_nvml_init(no_nvidia_machine(), kConfig);
  const Finding& f = only(fs, "nvml.init-failed");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f, "cannot open shared object file"));
  Snapshot s = ws_4x4090();
  unload_driver(s);  // library present, nvmlInit -> 9
  EXPECT_EQ(only(check_nvml_init(s, kConfig), "nvml.init-failed").severity, Severity::kWarn);
}

TEST(CudaLibChecks, NvmlOk) {
  auto fs = check_nvml_init(ws_4x4090(), kConfig);
  EXPECT_EQ(only(fs, "nvml.init-failed").severity, Severity::kOk);
  EXPECT_NE(only(fs, "nvml.init-failed").summary.find("4 GPU(s)"), std::string::npos);
  EXPECT_EQ(only(fs, "nvml.init-hang").severity, Severity::kOk);
}

// --- cuda.init-* ------------------------------------------------------------------------

TEST(CudaLibChecks, CudaInitFailedShowsErrorAsFrameworksPrintIt) {
  Snapshot s = ws_4x4090();
  fail_cuda(s, 2);
  auto fs = check_cuda_init(s, kConfig);
  const Finding& f = only(fs, "cuda.init-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("Error 2: out of memory"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f, "Error 2: out of memory [cudaErrorMemoryAllocation]"));
  EXPECT_TRUE(evidence_has(f,
                           "cuInit(0) (/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14): "
                           "CUDA_ERROR_OUT_OF_MEMORY (2)"));
  EXPECT_TRUE(evidence_has(f,
                           "clean run (CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA_VISIBLE_DEVICES "
                           "unset): also fails"))
      << describe(f);
  EXPECT_EQ(only(fs, "cuda.init-hang").severity, Severity::kOk);
}

TEST(CudaLibChecks, CudaInitFailedOnlyInUserEnvironment) {
  Snapshot s = ws_4x4090();
  CudaRun clean = user_run(s);
  clean.label = "clean";
  clean.env_changes = {{"CUDA_VISIBLE_DEVICES", ""}};
  fail_cuda(s, 100);
  s.cuda.runs[1] = clean;
  const Finding& f = only(check_cuda_init(s, kConfig), "cuda.init-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "works, 4 device(s) — the user's environment causes the failure"));
}

TEST(CudaLibChecks, CudaContextFailureNamesTheGpu) {
  Snapshot s = ws_4x4090();
  user_run(s).devices[1].ctx_rc = 2;  // CUDA device 1 = 0000:61:00.0
  const Finding& f = only(check_cuda_init(s, kConfig), "cuda.init-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:61:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "0000:61:00.0 (CUDA device 1, NVIDIA GeForce RTX 4090): context "
                           "creation failed: CUDA_ERROR_OUT_OF_MEMORY (2)"));
}

// A context the probe did not ask for (a job's GPU) is neither a failure nor
// a success: it is said, and the summary counts only what was tried.
TEST(CudaLibChecks, ASkippedContextIsNeitherFailureNorSuccess) {
  Snapshot s = ws_4x4090();
  CudaDevice& d = user_run(s).devices[1];  // CUDA device 1 = 0000:61:00.0
  d.ctx_rc = -1;
  d.ctx_skipped = "busy: 1 process (pid 4711, slurm job 4711, alice)";
  const Finding& f = only(check_cuda_init(s, kConfig), "cuda.init-failed");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_EQ(f.summary,
            "CUDA starts: cuInit succeeded and a context was created on 3 of 4 device(s); none "
            "was opened on the other 1 (see the evidence).");
  EXPECT_TRUE(evidence_has(f,
                           "0000:61:00.0 (CUDA device 1, NVIDIA GeForce RTX 4090): no context "
                           "opened: busy: 1 process (pid 4711, slurm job 4711, alice)"))
      << describe(f);
  EXPECT_TRUE(f.gpus.empty());

  for (auto& dev : user_run(s).devices) {
    dev.ctx_rc = -1;
    dev.ctx_skipped = "NVML did not answer within 6.0 s: whether it is busy is unknown";
  }
  const Finding& none = only(check_cuda_init(s, kConfig), "cuda.init-failed");
  EXPECT_EQ(none.severity, Severity::kOk);
  EXPECT_EQ(none.summary,
            "CUDA starts: cuInit succeeded on 4 device(s); no context was opened on any of them "
            "(see the evidence).");
  // One line for the four: they share the reason.
  ASSERT_EQ(none.evidence.size(), 1u);
  EXPECT_NE(none.evidence[0].find("(CUDA devices 0, 1, 2, 3): no context opened: NVML did not "
                                  "answer within 6.0 s"),
            std::string::npos)
      << none.evidence[0];
}

TEST(CudaLibChecks, ASkippedContextBesideAFailedOneCountsOnlyTheFailure) {
  Snapshot s = ws_4x4090();
  user_run(s).devices[0].ctx_rc = 2;
  user_run(s).devices[1].ctx_rc = -1;
  user_run(s).devices[1].ctx_skipped =
      "compute mode EXCLUSIVE_PROCESS (3): a context here could "
      "take the GPU from a job";
  const Finding& f = only(check_cuda_init(s, kConfig), "cuda.init-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.summary, "CUDA starts, but 1 of 4 GPU(s) cannot create a context.");
  EXPECT_EQ(f.gpus.size(), 1u);
  EXPECT_TRUE(evidence_has(f, "no context opened: compute mode EXCLUSIVE_PROCESS")) << describe(f);
}

// uvm.cc trusts "CUDA started" over its module lists; a run whose contexts
// were all skipped proves nothing of the kind, one with some opened does.
TEST(CudaLibChecks, UvmTrustsAStartOnlyWhereAContextWasOpened) {
  Snapshot s = ws_4x4090();
  devnode_at(s, "/dev/nvidia-uvm")->exists = false;
  user_run(s).devices[2].ctx_rc = -1;
  user_run(s).devices[2].ctx_skipped = "busy: 1 process (pid 9)";
  EXPECT_EQ(only(check_uvm(s, kConfig), "uvm.missing").severity, Severity::kOk);
  for (auto& dev : user_run(s).devices) {
    dev.ctx_rc = -1;
    dev.ctx_skipped = "busy: 1 process (pid 9)";
  }
  EXPECT_NE(only(check_uvm(s, kConfig), "uvm.missing").severity, Severity::kOk);
}

TEST(CudaLibChecks, CudaHangAndCrash) {
  Snapshot s = hgx_8xh100();
  s.deadline_s = 5;
  user_run(s).child_error = "timeout";
  auto fs = check_cuda_init(s, kConfig);
  const Finding& hang = only(fs, "cuda.init-hang");
  EXPECT_EQ(hang.severity, Severity::kFail);
  EXPECT_NE(hang.summary.find("cuInit did not return within 5 s"), std::string::npos);
  EXPECT_TRUE(evidence_has(hang, "deadline_s: 5"));
  EXPECT_EQ(only(fs, "cuda.init-failed").severity, Severity::kNotApplicable);

  Snapshot c = hgx_8xh100();
  user_run(c).child_error = "crashed: SIGSEGV";
  auto cf = check_cuda_init(c, kConfig);
  EXPECT_EQ(only(cf, "cuda.init-failed").severity, Severity::kFail);
  EXPECT_NE(only(cf, "cuda.init-failed").summary.find("crashed the process (SIGSEGV)"),
            std::string::npos);
}

TEST(CudaLibChecks, CudaInitOkAndLibraryMissing) {
  auto fs = check_cuda_init(hgx_8xh100(), kConfig);
  EXPECT_EQ(only(fs, "cuda.init-failed").severity, Severity::kOk);
  EXPECT_EQ(only(fs, "cuda.init-hang").severity, Severity::kOk);
  const Finding& f = only(check_cuda_init(no_nvidia_machine(), kConfig), "cuda.init-failed");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "dlopen libcuda.so.1"));
  Snapshot none;
  EXPECT_EQ(check_cuda_init(none, kConfig).at(0).severity, Severity::kNotApplicable);
}

}  // namespace
}  // namespace gd
