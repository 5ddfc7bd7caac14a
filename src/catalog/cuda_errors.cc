// Sources (transcribed 2026-12 via docs/nvidia-facts.md §3, §4.1,
// then checked against NVIDIA's own files, 2026-12):
//  - CUDA Driver API CUresult names and values: cuda.h of the CUDA 13.0
//    toolkit (CUDA_VERSION 13000), enum cudaError_enum;
//  - CUDA Runtime API cudaError_t names and values: driver_types.h of the
//    same toolkit, enum cudaError;
//  - runtime strings: what that toolkit's libcudart.so.13 returns from
//    cudaGetErrorString for each code (the runtime answers it without a GPU
//    or driver), every one below verbatim;
//  - NVML nvmlReturn_t: NVIDIA/go-nvml gen/nvml/nvml.h at commit 2f9e261f
//    (NVML API 13, "NVML VERSION: 13.3.29").
// Since CUDA 10.1 most runtime values equal the driver values. The toolkit's
// stub libcuda answers cuGetErrorName with 34 too, so the tool keeps its own
// names instead of asking the library.
#include "catalog/cuda_errors.h"

#include <cctype>
#include <utility>
#include <vector>

#include "util/ascii.h"

namespace gd {
namespace {

// clang-format off
const std::vector<CudaErrorInfo> kCudaErrors = {
  {0,   "CUDA_SUCCESS", "cudaSuccess", "no error", "success"},
  {1,   "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidValue", "invalid argument", "bad argument"},
  {2,   "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "out of memory",
        "at init usually host-side: an address-space limit (ulimit -v), a cgroup memory limit, or a GPU already full"},
  {3,   "CUDA_ERROR_NOT_INITIALIZED", "cudaErrorInitializationError", "initialization error",
        "the driver could not be initialized (driver state, device nodes, fork after init)"},
  {4,   "CUDA_ERROR_DEINITIALIZED", "cudaErrorCudartUnloading", "driver shutting down", "called during process shutdown"},
  {34,  "CUDA_ERROR_STUB_LIBRARY", "cudaErrorStubLibrary", "CUDA driver is a stub library",
        "the toolkit's stub libcuda was loaded instead of the driver's"},
  {35,  nullptr, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version",
        "the driver is older than the CUDA runtime, or there is no driver"},
  {36,  "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "cudaErrorCallRequiresNewerDriver",
        "API call is not supported in the installed CUDA driver",
        "an API needs a newer driver (minor-version compatibility limit)"},
  {46,  "CUDA_ERROR_DEVICE_UNAVAILABLE", "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable",
        "exclusive-process mode and the GPU is taken, or compute prohibited"},
  {100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", "no CUDA-capable device is detected",
        "no visible GPU: CUDA_VISIBLE_DEVICES, a container without GPUs, or all GPUs failed"},
  {101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice", "invalid device ordinal", "ordinal not below the visible count"},
  {102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "cudaErrorDeviceNotLicensed", "device doesn't have valid Grid license", "vGPU without a licence"},
  {103, nullptr, "cudaErrorSoftwareValidityNotEstablished", "integrity checks failed", "runtime self-test failed"},
  {127, nullptr, "cudaErrorStartupFailure", "startup failure in cuda runtime", "internal runtime startup failure"},
  {200, "CUDA_ERROR_INVALID_IMAGE", "cudaErrorInvalidKernelImage", "device kernel image is invalid",
        "the kernel image is corrupt or not for this driver"},
  {201, "CUDA_ERROR_INVALID_CONTEXT", "cudaErrorDeviceUninitialized", "invalid device context",
        "no valid context: often a context used after fork or after a failed init"},
  {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device",
        "the program lacks code for this GPU architecture"},
  {214, "CUDA_ERROR_ECC_UNCORRECTABLE", "cudaErrorECCUncorrectable", "uncorrectable ECC error encountered",
        "uncorrectable ECC error (pairs with Xid 48/94/95)"},
  {218, "CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidPtx", "a PTX JIT compilation failed",
        "PTX JIT failed: often PTX from a newer toolkit than the driver"},
  {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "cudaErrorNvlinkUncorrectable",
        "uncorrectable NVLink error detected during the execution", "uncorrectable NVLink error (pairs with Xid 74)"},
  {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "cudaErrorJitCompilerNotFound", "PTX JIT compiler library not found",
        "the driver's PTX JIT library (libnvidia-ptxjitcompiler) is missing"},
  {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cudaErrorUnsupportedPtxVersion", "the provided PTX was compiled with an unsupported toolchain.",
        "PTX from a newer toolkit than the driver"},
  {226, "CUDA_ERROR_CONTAINED", "cudaErrorContained",
        "Invalid access of peer GPU memory over nvlink or a hardware error",
        "a contained memory error (pairs with Xid 94): the process must restart"},
  {304, "CUDA_ERROR_OPERATING_SYSTEM", "cudaErrorOperatingSystem", "OS call failed or operation not supported on this OS",
        "an OS call failed (device node permission, cgroup)"},
  {500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", "named symbol not found", "symbol not found"},
  {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorIllegalAddress", "an illegal memory access was encountered",
        "sticky kernel fault (pairs with Xid 13/31)"},
  {719, "CUDA_ERROR_LAUNCH_FAILED", "cudaErrorLaunchFailure", "unspecified launch failure",
        "sticky kernel fault (pairs with Xid 13/31)"},
  {800, "CUDA_ERROR_NOT_PERMITTED", "cudaErrorNotPermitted", "operation not permitted", "not permitted"},
  {801, "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported", "operation not supported", "not supported"},
  {802, "CUDA_ERROR_SYSTEM_NOT_READY", "cudaErrorSystemNotReady", "system not yet initialized",
        "a required system service is not running: on NVSwitch systems, the fabric manager"},
  {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "cudaErrorSystemDriverMismatch",
        "system has unsupported display driver / cuda driver combination",
        "user-mode libcuda does not match the kernel module (forward-compat or partial upgrade)"},
  {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cudaErrorCompatNotSupportedOnDevice",
        "forward compatibility was attempted on non supported HW",
        "a cuda-compat libcuda on a GPU without forward-compatibility support"},
  {805, "CUDA_ERROR_MPS_CONNECTION_FAILED", "cudaErrorMpsConnectionFailed", "MPS client failed to connect to the MPS control daemon or the MPS server",
        "MPS control daemon unreachable"},
  {806, "CUDA_ERROR_MPS_RPC_FAILURE", "cudaErrorMpsRpcFailure", "the remote procedural call between the MPS server and the MPS client failed", "MPS failure"},
  {807, "CUDA_ERROR_MPS_SERVER_NOT_READY", "cudaErrorMpsServerNotReady", "MPS server is not ready to accept new MPS client requests", "MPS server not ready"},
  {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "cudaErrorMpsMaxClientsReached", "the hardware resources required to create MPS client have been exhausted", "MPS client limit"},
  {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", "cudaErrorMpsMaxConnectionsReached",
        "the hardware resources required to support device connections have been exhausted", "MPS connection limit"},
  {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", "cudaErrorMpsClientTerminated", "the MPS client has been terminated by the server",
        "the MPS server terminated this client; the process must restart"},
  // 811's text starts with a verb: it is libcudart's, verbatim.
  {811, "CUDA_ERROR_CDP_NOT_SUPPORTED", "cudaErrorCdpNotSupported",
        "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it",
        "CUDA dynamic parallelism is not supported in this configuration (e.g. under MPS)"},
  {812, "CUDA_ERROR_CDP_VERSION_MISMATCH", "cudaErrorCdpVersionMismatch",
        "unsupported interaction between different versions of CUDA Dynamic Parallelism",
        "the program mixes unsupported CUDA dynamic parallelism versions"},
  {909, "CUDA_ERROR_TIMEOUT", "cudaErrorTimeout", "wait operation timed out", "timeout"},
  {999, "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown", "unknown error",
        "often /dev/nvidia-uvm missing or nvidia_uvm broken (e.g. after suspend/resume), or a GPU in a bad state"},
};

const char* const kNvmlNames[] = {
  "NVML_SUCCESS", "NVML_ERROR_UNINITIALIZED", "NVML_ERROR_INVALID_ARGUMENT",
  "NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_NO_PERMISSION", "NVML_ERROR_ALREADY_INITIALIZED",
  "NVML_ERROR_NOT_FOUND", "NVML_ERROR_INSUFFICIENT_SIZE", "NVML_ERROR_INSUFFICIENT_POWER",
  "NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_TIMEOUT", "NVML_ERROR_IRQ_ISSUE",
  "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML_ERROR_FUNCTION_NOT_FOUND", "NVML_ERROR_CORRUPTED_INFOROM",
  "NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED", "NVML_ERROR_OPERATING_SYSTEM",
  "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_IN_USE", "NVML_ERROR_MEMORY",
  "NVML_ERROR_NO_DATA", "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "NVML_ERROR_INSUFFICIENT_RESOURCES",
  "NVML_ERROR_FREQ_NOT_SUPPORTED", "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "NVML_ERROR_DEPRECATED",
  "NVML_ERROR_NOT_READY", "NVML_ERROR_GPU_NOT_FOUND", "NVML_ERROR_INVALID_STATE",
  "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
};

// nvmlErrorString texts. The facts (§4.1, §11.13) leave every one
// unverified; "Driver/library version mismatch" (18) and "GPU access blocked
// by the operating system" (17, NVML_ERROR_OPERATING_SYSTEM: cgroups, a
// container runtime or WSL deny the device) are what nvidia-smi prints after
// "Failed to initialize NVML: " in public reports, the rest are the
// well-known library texts.
const struct {
  const char* text;
  int rc;
} kNvmlStrings[] = {
  {"Not Supported", 3},
  {"Insufficient Permissions", 4},
  {"Driver Not Loaded", 9},
  {"GPU is lost", 15},
  {"GPU access blocked by the operating system", 17},
  {"Driver/library version mismatch", 18},
  {"Unknown Error", 999},
};
// clang-format on

// s without surrounding blanks and one trailing '.', so "out of memory." and
// " out of memory" both compare equal to "out of memory".
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return s;
}

}  // namespace

const CudaErrorInfo* find_cuda_error(int code) {
  for (const auto& e : kCudaErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

std::string cuda_driver_error(int code) {
  const CudaErrorInfo* e = find_cuda_error(code);
  if (e == nullptr || e->driver_name == nullptr) return "CUresult " + std::to_string(code);
  return std::string(e->driver_name) + " (" + std::to_string(code) + ")";
}

std::string cuda_runtime_error(int code) {
  const CudaErrorInfo* e = find_cuda_error(code);
  if (e == nullptr || e->runtime_name == nullptr) return "cudaError_t " + std::to_string(code);
  std::string text = std::string(e->runtime_name) + " (" + std::to_string(code) + ")";
  if (e->runtime_string != nullptr) text += std::string(": ") + e->runtime_string;
  return text;
}

const CudaErrorInfo* find_cuda_error_by_name(std::string_view name) {
  name = trimmed(name);
  if (name.empty()) return nullptr;
  for (const auto& e : kCudaErrors) {
    if (e.driver_name != nullptr && iequals(name, e.driver_name)) return &e;
    if (e.runtime_name != nullptr && iequals(name, e.runtime_name)) return &e;
  }
  return nullptr;
}

const CudaErrorInfo* find_cuda_error_by_runtime_string(std::string_view s) {
  s = trimmed(s);
  if (s.empty()) return nullptr;
  for (const auto& e : kCudaErrors) {
    if (e.runtime_string != nullptr && iequals(s, trimmed(e.runtime_string))) return &e;
  }
  return nullptr;
}

const CudaErrorInfo* find_cuda_error_in_text(std::string_view lowered) {
  // Shorter texts ("unknown error", "invalid argument") appear in messages
  // of every kind; these name one code. Lower-cased once: explain asks for
  // every line it reads.
  constexpr size_t kSpecific = 20;
  static const std::vector<std::pair<std::string, const CudaErrorInfo*>> kSpecificTexts = [] {
    std::vector<std::pair<std::string, const CudaErrorInfo*>> out;
    for (const auto& e : kCudaErrors) {
      if (e.runtime_string == nullptr) continue;
      std::string text = ascii_lower(trimmed(e.runtime_string));
      if (text.size() >= kSpecific) out.emplace_back(std::move(text), &e);
    }
    return out;
  }();
  for (const auto& [text, e] : kSpecificTexts) {
    if (lowered.find(text) != std::string_view::npos) return e;
  }
  return nullptr;
}

const char* nvml_error_name(int rc) {
  if (rc == 999) return "NVML_ERROR_UNKNOWN";
  constexpr int kCount = sizeof(kNvmlNames) / sizeof(kNvmlNames[0]);
  if (rc >= 0 && rc < kCount) return kNvmlNames[rc];
  return nullptr;
}

int nvml_error_by_name(std::string_view name) {
  name = trimmed(name);
  if (name.empty()) return -1;
  if (iequals(name, "NVML_ERROR_UNKNOWN")) return 999;
  constexpr int kCount = sizeof(kNvmlNames) / sizeof(kNvmlNames[0]);
  for (int rc = 0; rc < kCount; ++rc) {
    if (iequals(name, kNvmlNames[rc])) return rc;
  }
  return -1;
}

int nvml_error_by_string(std::string_view text) {
  text = trimmed(text);
  for (const auto& s : kNvmlStrings) {
    if (iequals(text, s.text)) return s.rc;
  }
  return -1;
}

std::string nvml_error(int rc) {
  const char* name = nvml_error_name(rc);
  if (name == nullptr) return "nvmlReturn_t " + std::to_string(rc);
  return std::string(name) + " (" + std::to_string(rc) + ")";
}

}  // namespace gd
