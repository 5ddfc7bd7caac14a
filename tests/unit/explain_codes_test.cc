// explain: error codes in every wrapper programs print them in, each named
// with its causes; and a verdict that is never "ok" on an error. The lines
// are real: each names the tests/cases record (or the source file) it is from.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "catalog/cuda_errors.h"
#include "catalog/findings.h"
#include "checks/runner.h"
#include "explain/error_codes.h"
#include "explain/explain.h"
#include "explain/ranking.h"
#include "util/ascii.h"

namespace gd {
namespace {

struct CodeCase {
  const char* line;
  const char* source;
  CodeSpace space;
  int code;
  std::set<std::string> first;  // the id explain may rank first
};

// clang-format off
const CodeCase kCodeCases[] = {
  // glog's CHECK_EQ: (N vs. 0) and (0 vs. N).
  {"Check failed: error == cudaSuccess (35 vs. 0) CUDA driver version is insufficient for CUDA runtime version",
   "e-new1-caffe-bvlc-2832-mac-amd-gpu", CodeSpace::kCuda, 35, {"driver.too-old-for-cuda"}},
  // CUDA <= 10.0's runtime numbered cudaErrorUnknown 30: the text after it decides.
  {"F0528 22:26:23.117558 13844 syncedmem.hpp:18] Check failed: error == cudaSuccess (30 vs. 0) unknown error",
   "e-op-caffe-30-digits799-nvidia-modprobe", CodeSpace::kCuda, 999, {"driver.after-suspend", "uvm.missing"}},
  {"Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(context) (0 vs. 216)",
   "e-op-tf-216-context-in-use-exclusive-thread", CodeSpace::kCuda, 216, {"compute-mode.exclusive"}},
  // code=N(cudaErrorX), the CUDA samples' checkCudaErrors.
  {"CUDA error at /usr/samples/Samples/0_Introduction/simpleStreams/../../../Common/helper_cuda.h:816 code=803(cudaErrorSystemDriverMismatch) \"cudaGetDeviceCount(&device_count)\"",
   "d-thin-nct1679-thor-compat-803", CodeSpace::kCuda, 803, {"cuda.compat-mismatch"}},
  // CUresult N.
  {"cuMemHostAlloc failed with CUresult 3", "a Mojo port's notes (GitHub code search)", CodeSpace::kCuda, 3,
   {"devnodes.missing"}},
  // returned N.
  {"cudaGetDeviceCount returned 100", "a-wsl-insider-build-gpu-broken", CodeSpace::kCuda, 100,
   {"visible-devices.invalid"}},
  {"[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]", "d-old-triton-1838-ngc-450-vs-440-2080ti",
   CodeSpace::kCuda, 804, {"cuda.compat-unsupported"}},
  // error N (PyTorch's "Error N: text").
  {"RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW",
   "a-compat-804-docker-rtx3090-driver525", CodeSpace::kCuda, 804, {"cuda.compat-unsupported"}},
  // A date before the code is no code ("ERROR 02-20 ..."), the code after it is.
  {"ERROR 02-20 16:43:12 engine.py:389] Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
   "a-fm-gpustack-vllm-802", CodeSpace::kCuda, 802, {"fabric-manager.not-running"}},
  {"Warp CUDA error: Failed to get driver entry point 'cuDriverGetVersion' (CUDA error 34)",
   "a-stub-warp-error-34", CodeSpace::kCuda, 34, {"cuda.stub-library"}},
  // CUDA_ERROR_X (Numba), DriverError(CUDA_ERROR_X, ...) (Rust cudarc), cudaErrorX (CuPy).
  {"numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE",
   "d-gen-cuml-wsl-libpath", CodeSpace::kCuda, 100, {"visible-devices.invalid"}},
  {"thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Driver(DriverError(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, \"the provided PTX was compiled with an unsupported toolchain.\"))'",
   "e-new1-cudarc-dfdx-llama-6-ptx-driver-525", CodeSpace::kCuda, 222, {"driver.too-old-for-cuda"}},
  {"cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice: forward compatibility was attempted on non supported HW",
   "d-gen-cusignal-804-reboot", CodeSpace::kCuda, 804, {"cuda.compat-unsupported"}},
  // CUDA.jl: "(code N, ERROR_X)".
  {"CUDA error: unknown error (code 999, ERROR_UNKNOWN)", "a CUDA.jl test script (GitHub code search)",
   CodeSpace::kCuda, 999, {"driver.after-suspend"}},
  // NCCL's CUDACHECK: Cuda failure 'text' and Cuda failure N 'text'.
  {"gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'",
   "c-nccl-1372-named-symbol-wrong-arch", CodeSpace::kCuda, 500, {"driver.too-old-for-cuda"}},
  {"node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
   "c-nccl-1488-fm-restart-no-reset", CodeSpace::kCuda, 1, {"fabric-manager.restarted-without-reset"}},
  // NCCL results: by text, and by name (PyTorch c10d's getNcclErrorDetailStr).
  {"torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
   "c-torchtitan-853-ci-container-shm", CodeSpace::kNccl, 2, {"container.shm-too-small"}},
  {"ncclUnhandledCudaError: Call to CUDA function failed.", "pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp",
   CodeSpace::kNccl, 1, {"nccl.failed"}},
  {"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
   "pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp", CodeSpace::kNccl, 6, {"nccl.peer-failed"}},
  // NVML: a name, pynvml's class.
  {"nvmlInit_v2 failed: NVML_ERROR_LIB_RM_VERSION_MISMATCH", "explain/parse_nvml.cc's header",
   CodeSpace::kNvml, 18, {"driver.library-mismatch"}},
  {"pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "explain/parse_nvml.cc's header", CodeSpace::kNvml, 9,
   {"driver.not-loaded"}},
  // A start code in prose, without CUDA's name on its line.
  {"I found this on error 999 (which was showing in my logs.", "e-new2-nixpkgs-333123-ollama-999-uvm-not-loaded",
   CodeSpace::kCuda, 999, {"driver.after-suspend"}},
  // The message texts themselves.
  {"ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected", "explain/parse_cuda.cc's header",
   CodeSpace::kCuda, 100, {"visible-devices.invalid"}},
  {"RuntimeError: CUDA error: an illegal memory access was encountered", "e-op-ima-pytorch-95335-inductor-autotune",
   CodeSpace::kCuda, 700, {"program.kernel-fault"}},
};
// clang-format on

std::string first_id(std::string_view text) {
  Report r = explain_snapshot(snapshot_from_text(text), Config{});
  return r.findings.empty() ? "" : r.findings[0].id;
}

TEST(ExplainCodes, EveryFormNamesItsCodeAndItsCauses) {
  for (const CodeCase& c : kCodeCases) {
    SCOPED_TRACE(std::string(c.line) + "  [" + c.source + "]");
    auto m = find_error_code(c.line, ascii_lower(c.line));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(static_cast<int>(m->space), static_cast<int>(c.space));
    EXPECT_EQ(m->code, c.code);
    EXPECT_TRUE(c.first.count(first_id(c.line)) != 0) << "first: " << first_id(c.line);
  }
}

TEST(ExplainCodes, NumbersThatAreNoCodes) {
  for (const char* line :
       {"make: *** [Makefile:12: all] Error 2   (nvcc cuda build)", "CUDA Version: 12.4",
        "cuda 11.8 installed, error rate 3/4", "ERROR 02-20 16:43:12 cuda worker started",
        "HTTP error 404 from the registry", "error 500: internal server error"}) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(find_error_code(line, ascii_lower(line)).has_value());
  }
}

// Every code of the tables has causes (a row of its own or its family's):
// no code in a text is left without a finding.
TEST(ExplainCodes, EveryCodeHasCandidateCauses) {
  for (const CudaErrorInfo& e : cuda_errors()) {
    if (e.code == 0) continue;
    EXPECT_FALSE(rule_for("cuda:" + std::to_string(e.code)).ids.empty()) << e.code;
  }
  for (int rc = 1; rc <= 999; ++rc) {
    if (nvml_error_name(rc) == nullptr) continue;
    EXPECT_FALSE(rule_for("nvml:" + std::to_string(rc)).ids.empty()) << rc;
  }
  for (int r = 1; r <= 7; ++r) EXPECT_FALSE(rule_for("nccl:" + std::to_string(r)).ids.empty()) << r;
  for (const std::string& id : rule_ids()) {
    EXPECT_NE(find_catalog_entry(id), nullptr) << id;
    EXPECT_NE(help_for(id), nullptr) << id;
  }
}

std::string verdict_of_text(std::string_view text) {
  Report r = explain_snapshot(snapshot_from_text(text), Config{});
  return r.undecided ? "unknown" : severity_name(r.verdict);
}

TEST(ExplainVerdict, AnErrorNoRuleAttributesIsUnknownNeverOk) {
  const char* text =
      "Traceback (most recent call last):\n  File \"train.py\", line 3\nFoo: the pipeline failed";
  EXPECT_EQ(verdict_of_text(text), "unknown");
  Report r = explain_snapshot(snapshot_from_text(text), Config{});
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "explain.unattributed");
  EXPECT_NE(r.findings[0].remedy.front().find("gpudoctor check"), std::string::npos);
  EXPECT_EQ(r.findings[0].evidence.size(), 2u);  // the Traceback and the failed line
}

TEST(ExplainVerdict, AHealthyNvidiaSmiIsOk) {
  const char* table =
      "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     "
      "|\n"
      "|   0  NVIDIA GeForce RTX 4090        Off |   00000000:01:00.0 Off |                  Off "
      "|\n"
      "|  0%   38C    P8             22W /  450W |       2MiB /  24564MiB |      0%      Default "
      "|\n";
  EXPECT_EQ(verdict_of_text(table), "ok");
}

TEST(ExplainVerdict, ACudaSampleThatPassedIsOkAndOneThatFailedIsNot) {
  // deviceQuery's last lines (the CUDA samples print "Result = PASS" or "Result = FAIL").
  EXPECT_EQ(verdict_of_text("deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.4, CUDA "
                            "Runtime Version = 12.4, NumDevs = 1\nResult = PASS\n"),
            "ok");
  EXPECT_EQ(verdict_of_text("cudaGetDeviceCount returned 30\n-> unknown error\nResult = FAIL\n"),
            "unknown");
}

// The operator's pastes (issue 36): each gets its family, or unknown.
TEST(ExplainVerdict, SymptomsWithAFamilyGetIt) {
  // e-op-nccl-colbert-318-slow-rank-timeout
  EXPECT_EQ(
      first_id("[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation "
               "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
               "Timeout(ms)=600000) ran for 600659 milliseconds before timing out."),
      "nccl.peer-failed");
  // e-op-smi-err-azhpc-77-transient-power
  EXPECT_EQ(
      first_id("| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |"),
      "gpu.error-state");
  // PyTorch 2.x's OOM when the process itself holds the GPU.
  EXPECT_EQ(
      first_id(
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
          "total capacity of 79.15 GiB of which 1.44 MiB is free. Including non-PyTorch memory, "
          "this process has 78.07 GiB memory in use."),
      "memory.own-process-oom");
}

TEST(ExplainVerdict, ADriverTooOldIsNotAlsoAMissingDriver) {
  // e-op-drv-old-nanodet-216-found-10010's wording, with the version.
  Report r = explain_snapshot(
      snapshot_from_text(
          "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."),
      Config{});
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.too-old-for-cuda");
  for (const auto& f : r.findings) EXPECT_NE(f.id, "driver.not-loaded");
}

TEST(ExplainVerdict, NvidiaContainerCliWithoutNvmlNamesTheDriverLibraries) {
  // b-docker-snap-148-libnvidia-ml's line.
  EXPECT_EQ(
      first_id(
          "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
          "cannot open shared object file: no such file or directory: unknown"),
      "driver.libraries-missing");
}

TEST(ExplainVerdict, ANodeWithoutGpusNamesTheDevicePlugin) {
  Report r = explain_snapshot(snapshot_from_text("Allocatable:\n  nvidia.com/gpu: 0"), Config{});
  bool named = false;
  for (size_t i = 0; i < r.findings.size() && i < 3; ++i)
    named |= r.findings[i].id == "k8s.device-plugin";
  EXPECT_TRUE(named);
  // e-op-k8s-dp-10-feature-gate-off
  EXPECT_EQ(
      first_id("2017/11/24 09:06:29 Could not register device plugin: context deadline exceeded"),
      "k8s.device-plugin");
}

}  // namespace
}  // namespace gd
