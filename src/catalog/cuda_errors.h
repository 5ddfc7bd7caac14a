// CUDA driver API (CUresult) and runtime API (cudaError_t) codes that matter
// at initialization, and NVML return codes.
#pragma once

#include <string>

namespace gd {

struct CudaErrorInfo {
  int code;
  const char* driver_name;     // "CUDA_ERROR_OUT_OF_MEMORY", nullptr if none
  const char* runtime_name;    // "cudaErrorMemoryAllocation", nullptr if none
  const char* runtime_string;  // what cudaGetErrorString says, "out of memory"
  const char* meaning;         // what it usually means at init, one line
};

const CudaErrorInfo* find_cuda_error(int code);  // nullptr if unknown

// "CUDA_ERROR_OUT_OF_MEMORY (2)"; an unknown code gives "CUresult 12345".
std::string cuda_driver_error(int code);
// "cudaErrorMemoryAllocation (2): out of memory"
std::string cuda_runtime_error(int code);

// "NVML_ERROR_DRIVER_NOT_LOADED (9)"; unknown gives "nvmlReturn_t 12345".
std::string nvml_error(int rc);
const char* nvml_error_name(int rc);  // nullptr if unknown

}  // namespace gd
