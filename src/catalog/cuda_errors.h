// CUDA driver API (CUresult) and runtime API (cudaError_t) codes, every one
// of CUDA 13.0, and NVML return codes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

struct CudaErrorInfo {
  int code;
  const char* driver_name;     // "CUDA_ERROR_OUT_OF_MEMORY", nullptr if none
  const char* runtime_name;    // "cudaErrorMemoryAllocation", nullptr if none
  const char* runtime_string;  // what cudaGetErrorString says, "out of memory"; nullptr if unknown
  const char* meaning;         // what it usually means at init, one line; nullptr if nothing to add
};

const CudaErrorInfo* find_cuda_error(int code);  // nullptr if unknown
// Every row, in code order.
const std::vector<CudaErrorInfo>& cuda_errors();
// A code that says CUDA did not start (out of memory at init, no device,
// system not ready, ...), not one from a program already running.
bool cuda_start_error(int code);

// By either name, "CUDA_ERROR_OUT_OF_MEMORY" or "cudaErrorMemoryAllocation"
// (case-insensitive, surrounding blanks ignored); nullptr if unknown.
const CudaErrorInfo* find_cuda_error_by_name(std::string_view name);
// By the runtime's text, "out of memory" (case-insensitive; surrounding
// blanks and one trailing '.' ignored); nullptr if unknown.
const CudaErrorInfo* find_cuda_error_by_runtime_string(std::string_view s);

// The error whose runtime text appears anywhere in `lowered` (a lower-case
// line): "ggml_cuda_init: failed to initialize CUDA: system not yet
// initialized" -> 802. Only texts specific enough to name their code (20
// characters and more: not "unknown error" or "out of memory"); nullptr if
// none.
const CudaErrorInfo* find_cuda_error_in_text(std::string_view lowered);

// "CUDA_ERROR_OUT_OF_MEMORY (2)"; an unknown code gives "CUresult 12345".
std::string cuda_driver_error(int code);
// "cudaErrorMemoryAllocation (2): out of memory"
std::string cuda_runtime_error(int code);

// "NVML_ERROR_DRIVER_NOT_LOADED (9)"; unknown gives "nvmlReturn_t 12345".
std::string nvml_error(int rc);
// nvmlComputeMode_t (nvml.h): "DEFAULT (0)", "EXCLUSIVE_THREAD (1)"
// (deprecated), "PROHIBITED (2)", "EXCLUSIVE_PROCESS (3)"; "unknown (N)".
std::string nvml_compute_mode_name(int mode);
const char* nvml_error_name(int rc);  // nullptr if unknown
// "NVML_ERROR_LIB_RM_VERSION_MISMATCH" -> 18; -1 if unknown.
int nvml_error_by_name(std::string_view name);
// nvmlErrorString / pynvml / nvidia-smi text -> code: "Driver/library version
// mismatch" -> 18, "Unknown Error" -> 999; -1 if unknown. Case and blanks do
// not count; a text of 12 characters and more may be followed by more words.
// Covers the texts in cuda_errors.cc (facts §11.13).
int nvml_error_by_string(std::string_view text);

}  // namespace gd
