// Internal to the NVML probe child (nvml.cc, nvml_health.cc): the NVML
// types and symbols it uses.
//
// No SDK header: the few types used are declared here with the ABI of
// docs/nvidia-facts.md §4.3/§4.4 (NVIDIA's nvml.h as copied in
// NVIDIA/go-nvml, CUDA 13.3 header, transcribed 2026-12; LP64 layouts).
// Every struct's size and field offsets are checked at compile time against
// the numbers of that header (probe/nvidia_abi.h), and against the header
// itself where it is installed (tests/abi/nvml_abi_test.cc).
// Versioned symbols are resolved newest first; a missing one leaves its
// value's rc at -1.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "probe/hw_common.h"
#include "probe/nvidia_abi.h"
#include "snapshot/snapshot.h"

namespace gd::nvml {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_opaque*;

// nvmlReturn_t values (§4.1).
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInvalidArgument = 2;           // NVML_ERROR_INVALID_ARGUMENT
constexpr nvmlReturn_t kNotSupported = 3;              // NVML_ERROR_NOT_SUPPORTED
constexpr nvmlReturn_t kInsufficientSize = 7;          // NVML_ERROR_INSUFFICIENT_SIZE
constexpr nvmlReturn_t kArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH

constexpr unsigned kBufferSize = 96;  // NVML_DEVICE_NAME_V2/UUID_V2_BUFFER_SIZE
constexpr unsigned kMaxGpus = 64;     // more than any machine; bounds a garbled count
constexpr int kClockSm = 1;           // nvmlClockType_t NVML_CLOCK_SM
constexpr int kClockMem = 2;          // nvmlClockType_t NVML_CLOCK_MEM

struct PciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // (device << 16) | vendor
  unsigned int pciSubSystemId;
  char busId[32];  // "00000000:17:00.0"
};
GD_ABI_NVML_PCI_INFO(PciInfo);

struct Memory {  // nvmlMemory_t, bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
GD_ABI_NVML_MEMORY(Memory);

struct ProcessInfo {  // nvmlProcessInfo_v2_t, used by the _v2 and _v3 calls
  unsigned int pid;
  unsigned long long usedGpuMemory;  // kValueNotAvailable if unknown
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
GD_ABI_NVML_PROCESS_INFO_V2(ProcessInfo);
constexpr unsigned long long kValueNotAvailable = ~0ull;

// nvmlDeviceGetGpuFabricInfoV takes the struct version the caller asks
// for in its first word. v3 is current and v2 deprecated (NVML API 13); a
// driver older than v3 answers a v3 request with
// NVML_ERROR_ARGUMENT_VERSION_MISMATCH, NVML's reply to a struct version it
// does not know, and v2 then. v2 is a prefix of v3, so one v3 buffer serves
// both requests.
struct FabricInfoV2 {  // nvmlGpuFabricInfo_v2_t
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;  // 0 not supported, 1 not started, 2 in progress, 3 completed
  unsigned int healthMask;
};
GD_ABI_NVML_FABRIC_INFO_V2(FabricInfoV2);
constexpr unsigned int kFabricInfoV2 = sizeof(FabricInfoV2) | (2u << 24);  // 0x02000024

struct FabricInfoV3 {  // nvmlGpuFabricInfo_v3_t, nvmlGpuFabricInfoV_t
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;  // 0 not supported, 1 healthy, 2 unhealthy, 3 limited capacity
};
GD_ABI_NVML_FABRIC_INFO_V3(FabricInfoV3);
constexpr unsigned int kFabricInfoV3 = sizeof(FabricInfoV3) | (3u << 24);  // 0x03000028

struct Utilization {  // nvmlUtilization_t, percent
  unsigned int gpu;
  unsigned int memory;
};
GD_ABI_NVML_UTILIZATION(Utilization);

union Value {  // nvmlValue_t
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};
GD_ABI_NVML_VALUE(Value);

struct FieldValue {      // nvmlFieldValue_t
  unsigned int fieldId;  // in
  unsigned int scopeId;  // in (link id for NVLink fields)
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 sint, 6 ushort
  nvmlReturn_t nvmlReturn;  // this entry's own status
  Value value;
};
GD_ABI_NVML_FIELD_VALUE(FieldValue);

struct Api {
  // Identity, modes, processes (nvml.cc).
  Sym<nvmlReturn_t()> init;
  Sym<nvmlReturn_t()> shutdown;
  Sym<nvmlReturn_t(char*, unsigned)> driver_version;
  Sym<nvmlReturn_t(char*, unsigned)> nvml_version;
  Sym<nvmlReturn_t(int*)> cuda_driver_version;
  Sym<nvmlReturn_t(unsigned*)> count;
  Sym<nvmlReturn_t(unsigned, nvmlDevice_t*)> handle;
  Sym<nvmlReturn_t(nvmlDevice_t, char*, unsigned)> name;
  Sym<nvmlReturn_t(nvmlDevice_t, char*, unsigned)> uuid;
  Sym<nvmlReturn_t(nvmlDevice_t, char*, unsigned)> vbios;
  Sym<nvmlReturn_t(nvmlDevice_t, PciInfo*)> pci;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> minor;
  Sym<nvmlReturn_t(nvmlDevice_t, Memory*)> memory;
  Sym<nvmlReturn_t(nvmlDevice_t, int*)> persistence;
  Sym<nvmlReturn_t(nvmlDevice_t, int*)> compute_mode;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*)> mig_mode;
  Sym<nvmlReturn_t(nvmlDevice_t, int*, int*)> cc;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> arch;
  Sym<nvmlReturn_t(nvmlDevice_t, int, unsigned*)> max_clock;
  // Compute and graphics processes: one signature and struct (read_processes).
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*, ProcessInfo*)> processes;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*, ProcessInfo*)> graphics_processes;
  Sym<nvmlReturn_t(nvmlDevice_t, FabricInfoV3*)> fabric;  // v3 first, then v2
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> max_mig;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned, nvmlDevice_t*)> mig_handle;

  // Health and topology (nvml_health.cc).
  Sym<nvmlReturn_t(nvmlDevice_t, int, unsigned*)> temperature;  // sensor 0 = GPU
  Sym<nvmlReturn_t(nvmlDevice_t, int, unsigned*)> temp_threshold;
  Sym<nvmlReturn_t(nvmlDevice_t, int, FieldValue*)> field_values;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> power_usage;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> power_limit;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*)> power_constraints;
  Sym<nvmlReturn_t(nvmlDevice_t, int, unsigned*)> clock;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned long long*)> clock_reasons;
  Sym<nvmlReturn_t(nvmlDevice_t, int*)> pstate;
  Sym<nvmlReturn_t(nvmlDevice_t, Utilization*)> utilization;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> fan_speed;
  Sym<nvmlReturn_t(nvmlDevice_t, int*, int*)> ecc_mode;
  Sym<nvmlReturn_t(nvmlDevice_t, int, int, unsigned long long*)> ecc_errors;
  Sym<nvmlReturn_t(nvmlDevice_t, int, unsigned*, unsigned long long*)> retired_pages;
  Sym<nvmlReturn_t(nvmlDevice_t, int*)> retired_pending;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*)> remapped_rows;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> pcie_gen;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> pcie_gen_max;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> pcie_width;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> pcie_width_max;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned*)> pcie_replay;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned, int*)> nvlink_state;
  Sym<nvmlReturn_t(nvmlDevice_t, unsigned, PciInfo*)> nvlink_remote_pci;
  Sym<nvmlReturn_t(nvmlDevice_t, nvmlDevice_t, int*)> topology;
};

// Fills the health and topology symbols of `a` (nvml_health.cc).
void resolve_health_api(void* lib, Api* a);

// All of NvmlHealth for one GPU; `at` is " (GPU 3)" for the call log.
void read_health(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                 NvmlHealth* h);

// nvmlDeviceGetTopologyCommonAncestor for every pair a < b of `devs` (NVML
// index order; nullptr where the handle failed: that pair stays rc -1).
std::vector<NvmlTopoPair> read_topology(const Api& a, ChildOutput& out,
                                        const std::vector<nvmlDevice_t>& devs);

}  // namespace gd::nvml
