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
// Every CUresult and cudaError_t of CUDA 13.0 has a row (scripts/
// cuda_error_rows.py printed the ones first written without a meaning;
// tests/abi/cuda_abi_test.cc fails on a missing one).
// Since CUDA 10.1 most runtime values equal the driver values. The toolkit's
// stub libcuda answers cuGetErrorName with 34 too, so the tool keeps its own
// names instead of asking the library.
#include "catalog/cuda_errors.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>
#include <vector>

#include "util/ascii.h"
#include "util/substring_index.h"
#include "util/text.h"

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
  {5, "CUDA_ERROR_PROFILER_DISABLED", "cudaErrorProfilerDisabled", "profiler disabled while using external profiling tool", nullptr},
  {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", "cudaErrorProfilerNotInitialized", "profiler not initialized: call cudaProfilerInitialize()", nullptr},
  {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "cudaErrorProfilerAlreadyStarted", "profiler already started", nullptr},
  {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "cudaErrorProfilerAlreadyStopped", "profiler already stopped", nullptr},
  {9, nullptr, "cudaErrorInvalidConfiguration", "invalid configuration argument", nullptr},
  {12, nullptr, "cudaErrorInvalidPitchValue", "invalid pitch argument", nullptr},
  {13, nullptr, "cudaErrorInvalidSymbol", "invalid device symbol", nullptr},
  {16, nullptr, "cudaErrorInvalidHostPointer", "invalid host pointer", nullptr},
  {17, nullptr, "cudaErrorInvalidDevicePointer", "invalid device pointer", nullptr},
  {18, nullptr, "cudaErrorInvalidTexture", "invalid texture reference", nullptr},
  {19, nullptr, "cudaErrorInvalidTextureBinding", "texture is not bound to a pointer", nullptr},
  {20, nullptr, "cudaErrorInvalidChannelDescriptor", "invalid channel descriptor", nullptr},
  {21, nullptr, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy", nullptr},
  {22, nullptr, "cudaErrorAddressOfConstant", "invalid address of constant", nullptr},
  {23, nullptr, "cudaErrorTextureFetchFailed", "fetch from texture failed", nullptr},
  {24, nullptr, "cudaErrorTextureNotBound", "cannot fetch from a texture that is not bound", nullptr},
  {25, nullptr, "cudaErrorSynchronizationError", "incorrect use of __syncthreads()", nullptr},
  {26, nullptr, "cudaErrorInvalidFilterSetting", "linear filtering not supported for non-float type", nullptr},
  {27, nullptr, "cudaErrorInvalidNormSetting", "read as normalized float not supported for data type", nullptr},
  {28, nullptr, "cudaErrorMixedDeviceExecution", "device emulation mode and device execution mode cannot be mixed", nullptr},
  {31, nullptr, "cudaErrorNotYetImplemented", "feature not yet implemented", nullptr},
  {32, nullptr, "cudaErrorMemoryValueTooLarge", "memory size or pointer value too large to fit in 32 bit", nullptr},
  {34,  "CUDA_ERROR_STUB_LIBRARY", "cudaErrorStubLibrary", "CUDA driver is a stub library",
        "the toolkit's stub libcuda was loaded instead of the driver's"},
  {35,  nullptr, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version",
        "the driver is older than the CUDA runtime, or there is no driver"},
  {36,  "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "cudaErrorCallRequiresNewerDriver",
        "API call is not supported in the installed CUDA driver",
        "an API needs a newer driver (minor-version compatibility limit)"},
  {37, nullptr, "cudaErrorInvalidSurface", "invalid surface reference", nullptr},
  {43, nullptr, "cudaErrorDuplicateVariableName", "duplicate global variable looked up by string name", nullptr},
  {44, nullptr, "cudaErrorDuplicateTextureName", "duplicate texture looked up by string name", nullptr},
  {45, nullptr, "cudaErrorDuplicateSurfaceName", "duplicate surface looked up by string name", nullptr},
  {46,  "CUDA_ERROR_DEVICE_UNAVAILABLE", "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable",
        "exclusive-process mode and the GPU is taken, or compute prohibited"},
  {49, nullptr, "cudaErrorIncompatibleDriverContext", "incompatible driver context", nullptr},
  {52, nullptr, "cudaErrorMissingConfiguration", "__global__ function call is not configured", nullptr},
  {53, nullptr, "cudaErrorPriorLaunchFailure", "unspecified launch failure in prior launch", nullptr},
  {65, nullptr, "cudaErrorLaunchMaxDepthExceeded", "launch would exceed maximum depth of nested launches", nullptr},
  {66, nullptr, "cudaErrorLaunchFileScopedTex", "launch failed because kernel uses unsupported, file-scoped textures (texture objects are supported)", nullptr},
  {67, nullptr, "cudaErrorLaunchFileScopedSurf", "launch failed because kernel uses unsupported, file-scoped surfaces (surface objects are supported)", nullptr},
  {68, nullptr, "cudaErrorSyncDepthExceeded", "cudaDeviceSynchronize failed because caller's grid depth exceeds cudaLimitDevRuntimeSyncDepth", nullptr},
  {69, nullptr, "cudaErrorLaunchPendingCountExceeded", "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount", nullptr},
  {98, nullptr, "cudaErrorInvalidDeviceFunction", "invalid device function", nullptr},
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
  {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", nullptr, nullptr, nullptr},
  {205, "CUDA_ERROR_MAP_FAILED", "cudaErrorMapBufferObjectFailed", "mapping of buffer object failed", nullptr},
  {206, "CUDA_ERROR_UNMAP_FAILED", "cudaErrorUnmapBufferObjectFailed", "unmapping of buffer object failed", nullptr},
  {207, "CUDA_ERROR_ARRAY_IS_MAPPED", "cudaErrorArrayIsMapped", "array is mapped", nullptr},
  {208, "CUDA_ERROR_ALREADY_MAPPED", "cudaErrorAlreadyMapped", "resource already mapped", nullptr},
  {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device",
        "the program lacks code for this GPU architecture"},
  {210, "CUDA_ERROR_ALREADY_ACQUIRED", "cudaErrorAlreadyAcquired", "resource already acquired", nullptr},
  {211, "CUDA_ERROR_NOT_MAPPED", "cudaErrorNotMapped", "resource not mapped", nullptr},
  {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "cudaErrorNotMappedAsArray", "resource not mapped as array", nullptr},
  {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "cudaErrorNotMappedAsPointer", "resource not mapped as pointer", nullptr},
  {214, "CUDA_ERROR_ECC_UNCORRECTABLE", "cudaErrorECCUncorrectable", "uncorrectable ECC error encountered",
        "uncorrectable ECC error (pairs with Xid 48/94/95)"},
  {215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "cudaErrorUnsupportedLimit", "limit is not supported on this architecture", nullptr},
  {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "cudaErrorDeviceAlreadyInUse", "exclusive-thread device already in use by a different thread", nullptr},
  {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices", nullptr},
  {218, "CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidPtx", "a PTX JIT compilation failed",
        "PTX JIT failed: often PTX from a newer toolkit than the driver"},
  {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "cudaErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context", nullptr},
  {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "cudaErrorNvlinkUncorrectable",
        "uncorrectable NVLink error detected during the execution", "uncorrectable NVLink error (pairs with Xid 74)"},
  {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "cudaErrorJitCompilerNotFound", "PTX JIT compiler library not found",
        "the driver's PTX JIT library (libnvidia-ptxjitcompiler) is missing"},
  {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "cudaErrorUnsupportedPtxVersion", "the provided PTX was compiled with an unsupported toolchain.",
        "PTX from a newer toolkit than the driver"},
  {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "cudaErrorJitCompilationDisabled", "PTX JIT compilation was disabled", nullptr},
  {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "cudaErrorUnsupportedExecAffinity", "the provided execution affinity is not supported", nullptr},
  {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "cudaErrorUnsupportedDevSideSync", "the provided PTX contains unsupported call to cudaDeviceSynchronize", nullptr},
  {226, "CUDA_ERROR_CONTAINED", "cudaErrorContained",
        "Invalid access of peer GPU memory over nvlink or a hardware error",
        "a contained memory error (pairs with Xid 94): the process must restart"},
  {300, "CUDA_ERROR_INVALID_SOURCE", "cudaErrorInvalidSource", "device kernel image is invalid", nullptr},
  {301, "CUDA_ERROR_FILE_NOT_FOUND", "cudaErrorFileNotFound", "file not found", nullptr},
  {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "cudaErrorSharedObjectSymbolNotFound", "shared object symbol not found", nullptr},
  {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "cudaErrorSharedObjectInitFailed", "shared object initialization failed", nullptr},
  {304, "CUDA_ERROR_OPERATING_SYSTEM", "cudaErrorOperatingSystem", "OS call failed or operation not supported on this OS",
        "an OS call failed (device node permission, cgroup)"},
  {400, "CUDA_ERROR_INVALID_HANDLE", "cudaErrorInvalidResourceHandle", "invalid resource handle", nullptr},
  {401, "CUDA_ERROR_ILLEGAL_STATE", "cudaErrorIllegalState", "the operation cannot be performed in the present state", nullptr},
  {402, "CUDA_ERROR_LOSSY_QUERY", "cudaErrorLossyQuery", "attempted introspection would be semantically lossy", nullptr},
  {500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", "named symbol not found", "symbol not found"},
  {600, "CUDA_ERROR_NOT_READY", "cudaErrorNotReady", "device not ready", nullptr},
  {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorIllegalAddress", "an illegal memory access was encountered",
        "sticky kernel fault (pairs with Xid 13/31)"},
  {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "cudaErrorLaunchOutOfResources", "too many resources requested for launch", nullptr},
  {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "cudaErrorLaunchTimeout", "the launch timed out and was terminated", nullptr},
  {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "cudaErrorLaunchIncompatibleTexturing", "launch uses incompatible texturing mode", nullptr},
  {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled", nullptr},
  {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled", nullptr},
  {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "cudaErrorSetOnActiveProcess", "cannot set while device is active in this process", nullptr},
  {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "cudaErrorContextIsDestroyed", "context is destroyed", nullptr},
  {710, "CUDA_ERROR_ASSERT", "cudaErrorAssert", "device-side assert triggered", nullptr},
  {711, "CUDA_ERROR_TOO_MANY_PEERS", "cudaErrorTooManyPeers", "peer mapping resources exhausted", nullptr},
  {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped", nullptr},
  {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region", nullptr},
  {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "cudaErrorHardwareStackError", "hardware stack error", nullptr},
  {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "cudaErrorIllegalInstruction", "an illegal instruction was encountered", nullptr},
  {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "cudaErrorMisalignedAddress", "misaligned address", nullptr},
  {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "cudaErrorInvalidAddressSpace", "operation not supported on global/shared address space", nullptr},
  {718, "CUDA_ERROR_INVALID_PC", "cudaErrorInvalidPc", "invalid program counter", nullptr},
  {719, "CUDA_ERROR_LAUNCH_FAILED", "cudaErrorLaunchFailure", "unspecified launch failure",
        "sticky kernel fault (pairs with Xid 13/31)"},
  {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch", nullptr},
  {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", "cudaErrorTensorMemoryLeak", "tensor memory not completely freed", nullptr},
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
  {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing", nullptr},
  {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture", nullptr},
  {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences", nullptr},
  {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "cudaErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began", nullptr},
  {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work", nullptr},
  {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "cudaErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream", nullptr},
  {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "cudaErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream", nullptr},
  {907, "CUDA_ERROR_CAPTURED_EVENT", "cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream", nullptr},
  {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "cudaErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread", nullptr},
  {909, "CUDA_ERROR_TIMEOUT", "cudaErrorTimeout", "wait operation timed out", "timeout"},
  {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "cudaErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update", nullptr},
  {911, "CUDA_ERROR_EXTERNAL_DEVICE", "cudaErrorExternalDevice", "an async error has occured in external entity outside of CUDA", nullptr},
  {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "cudaErrorInvalidClusterSize", "a kernel launch error has occurred due to cluster misconfiguration", nullptr},
  {913, "CUDA_ERROR_FUNCTION_NOT_LOADED", "cudaErrorFunctionNotLoaded", "the function handle is not loaded when calling an API that requires a loaded function", nullptr},
  {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE", "cudaErrorInvalidResourceType", "one or more resources passed in are not valid resource types for the operation", nullptr},
  {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", "cudaErrorInvalidResourceConfiguration", "one or more resources are insufficient or non-applicable for the operation", nullptr},
  {916, "CUDA_ERROR_KEY_ROTATION", nullptr, nullptr, nullptr},
  {999, "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown", "unknown error",
        "often /dev/nvidia-uvm missing or nvidia_uvm broken (e.g. after suspend/resume), or a GPU in a bad state"},
  {10000, nullptr, "cudaErrorApiFailureBase", "api failure base", nullptr},
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

// The codes that say CUDA did not start (facts §3 and the rows above with a
// meaning at start-up); every other code comes from a program that was
// already running (a bad argument, a kernel fault, an ECC error).
constexpr int kStartCodes[] = {2,   3,   4,   34,  35,  36,  46,  100, 102, 103, 127, 200,
                               201, 220, 221, 226, 304, 800, 801, 802, 803, 804, 805, 806,
                               807, 808, 809, 810, 811, 812, 909, 999};

// NVML's texts for its codes, in the two forms users paste:
//  - what pynvml prints for an NVMLError (its own table, _errcode_to_string,
//    in NVIDIA's nvidia-ml-py `pynvml.py`, as copied in
//    gpuopenanalytics/pynvml pynvml/nvml.py), codes 1-18 and 999;
//  - what nvidia-smi prints after "Failed to initialize NVML: " in public
//    reports: "Driver/library version mismatch" (18) and "GPU access
//    blocked by the operating system" (17, NVML_ERROR_OPERATING_SYSTEM:
//    cgroups, a container runtime or WSL deny the device nodes).
// nvmlErrorString's own texts for codes 19 and above are in no public
// source gpudoctor has read (facts §11.13); names cover them.
const struct {
  const char* text;
  int rc;
} kNvmlStrings[] = {
  {"Uninitialized", 1},
  {"Invalid Argument", 2},
  {"Not Supported", 3},
  {"Insufficient Permissions", 4},
  {"Already Initialized", 5},
  {"Not Found", 6},
  {"Insufficient Size", 7},
  {"Insufficient External Power", 8},
  {"Driver Not Loaded", 9},
  {"Timeout", 10},
  {"Interrupt Request Issue", 11},
  {"NVML Shared Library Not Found", 12},
  {"Function Not Found", 13},
  {"Corrupted infoROM", 14},
  {"GPU is lost", 15},
  {"GPU requires restart", 16},
  {"The operating system has blocked the request.", 17},
  {"GPU access blocked by the operating system", 17},
  {"RM has detected an NVML/RM version mismatch.", 18},
  {"Driver/library version mismatch", 18},
  // nvidia-smi -q's fabric Status of an Azure H100 (Azure/azhpc-images#506).
  {"Insufficient Resources", 23},
  {"Unknown Error", 999},
};
// clang-format on

// s without surrounding blanks and one trailing '.', so "out of memory." and
// " out of memory" both compare equal to "out of memory".
std::string_view trimmed(std::string_view s) {
  s = trim_isspace(s);
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return s;
}

}  // namespace

bool cuda_start_error(int code) {
  return std::find(std::begin(kStartCodes), std::end(kStartCodes), code) != std::end(kStartCodes);
}

const std::vector<CudaErrorInfo>& cuda_errors() { return kCudaErrors; }

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
  // of every kind; these name one code. Indexed once, lower-cased: explain
  // asks for every line it reads, and there are a hundred texts.
  constexpr size_t kSpecific = 20;
  struct Texts {
    std::vector<const CudaErrorInfo*> errors;
    SubstringIndex index;
  };
  static const Texts kTexts = [] {
    std::vector<const CudaErrorInfo*> errors;
    std::vector<std::string> texts;
    for (const auto& e : kCudaErrors) {
      if (e.runtime_string == nullptr) continue;
      std::string text = ascii_lower(trimmed(e.runtime_string));
      if (text.size() < kSpecific) continue;
      errors.push_back(&e);
      texts.push_back(std::move(text));
    }
    return Texts{std::move(errors), SubstringIndex(std::move(texts))};
  }();
  int at = kTexts.index.first_in(lowered);
  return at < 0 ? nullptr : kTexts.errors[static_cast<size_t>(at)];
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

namespace {

// Lower case, blanks dropped: "Driver / library version mismatch." and
// "driver/library version mismatch" compare equal.
std::string squeezed(std::string_view s) {
  std::string out = ascii_lower(trimmed(s));
  std::erase_if(out, [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
  return out;
}

}  // namespace

int nvml_error_by_string(std::string_view text) {
  // A text long enough to name its code may be followed by more words
  // ("Driver / library version mismatch. A message has occurred."); a short
  // one ("Not Found", "Timeout") must be the whole text.
  constexpr size_t kSpecific = 12;
  const std::string have = squeezed(text);
  for (const auto& s : kNvmlStrings) {
    const std::string want = squeezed(s.text);
    if (have == want || (want.size() >= kSpecific && have.starts_with(want))) return s.rc;
  }
  return -1;
}

std::string nvml_compute_mode_name(int mode) {
  switch (mode) {
    case 0:
      return "DEFAULT (0)";
    case 1:
      return "EXCLUSIVE_THREAD (1)";
    case 2:
      return "PROHIBITED (2)";
    case 3:
      return "EXCLUSIVE_PROCESS (3)";
    default:
      return "unknown (" + std::to_string(mode) + ")";
  }
}

std::string nvml_error(int rc) {
  const char* name = nvml_error_name(rc);
  if (name == nullptr) return "nvmlReturn_t " + std::to_string(rc);
  return std::string(name) + " (" + std::to_string(rc) + ")";
}

}  // namespace gd
