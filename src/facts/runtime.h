// How the NVML and CUDA probe runs went, said the same way by every check
// that quotes them. Pure functions over the snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "facts/cuda_visible.h"
#include "facts/query.h"
#include "snapshot/snapshot.h"

namespace gd {

// NVML started in its child and answered.
bool nvml_answered(const Snapshot& s);
// "NVML did not start: NVML_ERROR_DRIVER_NOT_LOADED (9)", "NVML was not tried", ...
std::string nvml_unavailable_reason(const Snapshot& s);
const NvmlGpu* nvml_gpu_by_bdf(const Snapshot& s, const std::string& bdf);

// cuInit, cuDeviceGetCount and (where cudart was found) cudaGetDeviceCount
// all succeeded in this run.
bool run_succeeded(const CudaRun& r);
// cuInit, cuDeviceGetCount or cudaGetDeviceCount returned `code`.
bool run_failed_with(const CudaRun& r, int code);
// The code a user would quote (cudaGetDeviceCount's, else cuInit's, else
// cuDeviceGetCount's); 0 when none failed, -1 when the child itself failed.
int run_error_code(const CudaRun& r);
// Both runs failed and with the same code.
bool same_failure(const CudaRun& a, const CudaRun& b);
// "cuInit returned CUDA_ERROR_OUT_OF_MEMORY (2); cudaGetDeviceCount returned
// cudaErrorMemoryAllocation (2): out of memory"
std::string describe_run(const CudaRun& r);
// The user-facing error of a code: "cudaErrorMemoryAllocation (2): out of memory"
// when the run used cudart, else "CUDA_ERROR_OUT_OF_MEMORY (2)".
std::string run_error_text(const CudaRun& r);
const CudaDevice* run_device(const CudaRun& r, const std::string& bdf);

// CUDA_VISIBLE_DEVICES="0,2" (quoted so blanks show).
std::string env_assignment(const std::string& name, const std::string& value);
// "34359738368 bytes (32.0 GiB)"
std::string bytes_exact(uint64_t bytes);
// "0000:41:00.0 (nvidia-smi 2)"
std::string gpu_ref(const GpuIdentity& g);
// "CUDA 0 = nvidia-smi 2 = 0000:41:00.0 (2640 MHz)"; with_cc adds ", cc 8.9".
std::string order_line(size_t cuda_ordinal, const GpuIdentity& g, bool with_cc);
// True when the GPUs differ in compute capability (then it decides the order).
bool mixed_cc(const std::vector<GpuIdentity>& gpus);

}  // namespace gd
