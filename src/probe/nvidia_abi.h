// The layouts of the NVML and CUDA structs gpudoctor declares instead of
// including NVIDIA's headers (which it must not need to build): size,
// alignment, and the offset and size of every field, as compile-time checks.
// One macro per NVIDIA struct, applied to each declaration of it: the probe's
// (nvml_api.h, cuda_api.h), the fakes' (tests/fakes/), and, where the real
// header is on the build machine, NVIDIA's own struct (tests/abi/), which
// proves the numbers here were transcribed right.
//
// Sources, x86-64 / LP64 (the only ABI gpudoctor builds for):
//  - NVML: nvml.h of NVML API 13 ("NVML VERSION: 13.3.29", NVML_API_VERSION 13)
//    as vendored in NVIDIA/go-nvml gen/nvml/nvml.h at commit 2f9e261f;
//  - CUDA: cuda.h of the CUDA 13.0 toolkit (CUDA_VERSION 13000);
//  - both measured by compiling those headers (g++ 12):
//    the measurements recorded with docs/nvidia-facts.md §4.4. Each number below is
//    theirs.
#pragma once

#include <cstddef>

// `T::field` starts at byte `off` and is `size` bytes long.
#define GD_ABI_FIELD(T, field, off, size)                                     \
  static_assert(offsetof(T, field) == (off),                                  \
                #T "::" #field " is not at offset " #off " of NVIDIA's ABI"); \
  static_assert(sizeof(T::field) == (size),                                   \
                #T "::" #field " is not " #size " bytes as in NVIDIA's ABI")

#define GD_ABI_SIZE(T, size, align)                                                    \
  static_assert(sizeof(T) == (size), #T " is not " #size " bytes as in NVIDIA's ABI"); \
  static_assert(alignof(T) == (align), #T " is not " #align "-byte aligned as in NVIDIA's ABI")

// nvmlPciInfo_t (nvml.h, NVML API 13): the _v3 layout, also what _v2 fills.
#define GD_ABI_NVML_PCI_INFO(T)           \
  GD_ABI_SIZE(T, 68, 4);                  \
  GD_ABI_FIELD(T, busIdLegacy, 0, 16);    \
  GD_ABI_FIELD(T, domain, 16, 4);         \
  GD_ABI_FIELD(T, bus, 20, 4);            \
  GD_ABI_FIELD(T, device, 24, 4);         \
  GD_ABI_FIELD(T, pciDeviceId, 28, 4);    \
  GD_ABI_FIELD(T, pciSubSystemId, 32, 4); \
  GD_ABI_FIELD(T, busId, 36, 32)

// nvmlMemory_t (nvml.h, NVML API 13), nvmlDeviceGetMemoryInfo's v1 struct.
#define GD_ABI_NVML_MEMORY(T)   \
  GD_ABI_SIZE(T, 24, 8);        \
  GD_ABI_FIELD(T, total, 0, 8); \
  GD_ABI_FIELD(T, free, 8, 8);  \
  GD_ABI_FIELD(T, used, 16, 8)

// nvmlProcessInfo_v2_t (nvml.h, NVML API 13); nvmlProcessInfo_t, what the
// _v3 process calls fill, has the same 24 bytes, 8-aligned.
#define GD_ABI_NVML_PROCESS_INFO_V2(T)   \
  GD_ABI_SIZE(T, 24, 8);                 \
  GD_ABI_FIELD(T, pid, 0, 4);            \
  GD_ABI_FIELD(T, usedGpuMemory, 8, 8);  \
  GD_ABI_FIELD(T, gpuInstanceId, 16, 4); \
  GD_ABI_FIELD(T, computeInstanceId, 20, 4)

// nvmlGpuFabricInfo_v2_t (nvml.h, NVML API 13; deprecated there in favour
// of v3). Version word: NVML_STRUCT_VERSION(GpuFabricInfo, 2) = 36 | 2 << 24.
#define GD_ABI_NVML_FABRIC_INFO_V2(T)  \
  GD_ABI_SIZE(T, 36, 4);               \
  GD_ABI_FIELD(T, version, 0, 4);      \
  GD_ABI_FIELD(T, clusterUuid, 4, 16); \
  GD_ABI_FIELD(T, status, 20, 4);      \
  GD_ABI_FIELD(T, cliqueId, 24, 4);    \
  GD_ABI_FIELD(T, state, 28, 1);       \
  GD_ABI_FIELD(T, healthMask, 32, 4)

// nvmlGpuFabricInfo_v3_t = nvmlGpuFabricInfoV_t (nvml.h, NVML API 13): v2
// and one byte more, healthSummary, padded to 40 (abi-layouts.tsv gives the
// size and alignment; the fields are v2's and the byte after healthMask).
// Version word: NVML_STRUCT_VERSION(GpuFabricInfo, 3) = 40 | 3 << 24.
#define GD_ABI_NVML_FABRIC_INFO_V3(T)  \
  GD_ABI_SIZE(T, 40, 4);               \
  GD_ABI_FIELD(T, version, 0, 4);      \
  GD_ABI_FIELD(T, clusterUuid, 4, 16); \
  GD_ABI_FIELD(T, status, 20, 4);      \
  GD_ABI_FIELD(T, cliqueId, 24, 4);    \
  GD_ABI_FIELD(T, state, 28, 1);       \
  GD_ABI_FIELD(T, healthMask, 32, 4);  \
  GD_ABI_FIELD(T, healthSummary, 36, 1)

// nvmlUtilization_t (nvml.h, NVML API 13), percent.
#define GD_ABI_NVML_UTILIZATION(T) \
  GD_ABI_SIZE(T, 8, 4);            \
  GD_ABI_FIELD(T, gpu, 0, 4);      \
  GD_ABI_FIELD(T, memory, 4, 4)

// nvmlValue_t (nvml.h, NVML API 13): a union, every member at 0.
#define GD_ABI_NVML_VALUE(T)     \
  GD_ABI_SIZE(T, 8, 8);          \
  GD_ABI_FIELD(T, dVal, 0, 8);   \
  GD_ABI_FIELD(T, siVal, 0, 4);  \
  GD_ABI_FIELD(T, uiVal, 0, 4);  \
  GD_ABI_FIELD(T, ulVal, 0, 8);  \
  GD_ABI_FIELD(T, ullVal, 0, 8); \
  GD_ABI_FIELD(T, sllVal, 0, 8); \
  GD_ABI_FIELD(T, usVal, 0, 2)

// nvmlFieldValue_t (nvml.h, NVML API 13).
#define GD_ABI_NVML_FIELD_VALUE(T)     \
  GD_ABI_SIZE(T, 40, 8);               \
  GD_ABI_FIELD(T, fieldId, 0, 4);      \
  GD_ABI_FIELD(T, scopeId, 4, 4);      \
  GD_ABI_FIELD(T, timestamp, 8, 8);    \
  GD_ABI_FIELD(T, latencyUsec, 16, 8); \
  GD_ABI_FIELD(T, valueType, 24, 4);   \
  GD_ABI_FIELD(T, nvmlReturn, 28, 4);  \
  GD_ABI_FIELD(T, value, 32, 8)

// CUuuid (cuda.h, CUDA 13.0: struct CUuuid_st { char bytes[16]; }).
#define GD_ABI_CU_UUID(T) \
  GD_ABI_SIZE(T, 16, 1);  \
  GD_ABI_FIELD(T, bytes, 0, 16)
