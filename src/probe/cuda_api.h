// Internal to the CUDA probe child (cuda.cc): the CUDA driver API types,
// constants and symbols it uses.
//
// No SDK header: declared here with the ABI of cuda.h (CUDA 13.0 toolkit,
// CUDA_VERSION 13000; docs/nvidia-facts.md §3). CUresult is an
// enum of 4 bytes there and int here, CUdevice int, CUcontext an opaque
// pointer, CUuuid 16 bytes (its layout checked in probe/nvidia_abi.h).
// tests/abi/cuda_abi_test.cc compiles these declarations against the real
// cuda.h where the toolkit is installed: every symbol's signature, the
// struct's layout and the attribute numbers.
#pragma once

#include <cstddef>

#include "probe/hw_common.h"
#include "probe/nvidia_abi.h"

namespace gd::cuda {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_opaque*;
struct CUuuid {
  unsigned char bytes[16];
};
GD_ABI_CU_UUID(CUuuid);

constexpr CUresult kSuccess = 0;  // CUDA_SUCCESS
// CUdevice_attribute values (cuda.h, CUDA 13.0).
constexpr int kAttrClockRate = 13;            // CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz
constexpr int kAttrMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrCcMajor = 75;              // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;              // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

// One member per symbol, resolved by cuda.cc's resolve_api: the name or
// names tried (newest first) beside each. Where a versioned and an
// unversioned symbol differ in signature, they are separate members: a
// function is never called through a pointer of another type.
struct Api {
  Sym<CUresult(int*)> driver_version;                   // cuDriverGetVersion
  Sym<CUresult(unsigned)> init;                         // cuInit
  Sym<CUresult(int*)> count;                            // cuDeviceGetCount
  Sym<CUresult(CUdevice*, int)> get;                    // cuDeviceGet
  Sym<CUresult(char*, int, CUdevice)> name;             // cuDeviceGetName
  Sym<CUresult(char*, int, CUdevice)> pci_bus_id;       // cuDeviceGetPCIBusId
  Sym<CUresult(CUuuid*, CUdevice)> uuid;                // cuDeviceGetUuid_v2, cuDeviceGetUuid
  Sym<CUresult(size_t*, CUdevice)> total_mem;           // cuDeviceTotalMem_v2
  Sym<CUresult(unsigned int*, CUdevice)> total_mem_v1;  // cuDeviceTotalMem (32-bit count)
  Sym<CUresult(int*, int, CUdevice)> attribute;         // cuDeviceGetAttribute
  Sym<CUresult(CUcontext*, CUdevice)> ctx_retain;       // cuDevicePrimaryCtxRetain
  Sym<CUresult(CUdevice)> ctx_release;                  // cuDevicePrimaryCtxRelease_v2, unversioned
  Sym<CUresult(CUcontext)> ctx_set_current;             // cuCtxSetCurrent
  Sym<CUresult(size_t*, size_t*)> mem_info;             // cuMemGetInfo_v2
  Sym<CUresult(unsigned int*, unsigned int*)> mem_info_v1;  // cuMemGetInfo (32-bit counts)
};

// The CUDA runtime (libcudart) calls, cuda_runtime_api.h of the same
// toolkit; cudaError_t is an enum of 4 bytes there and int here.
using cudaError_t = int;
struct RuntimeApi {
  Sym<cudaError_t(int*)> runtime_version;  // cudaRuntimeGetVersion
  Sym<cudaError_t(int*)> device_count;     // cudaGetDeviceCount
};

}  // namespace gd::cuda
