// Fake libnvidia-ml.so.1: NVML's real symbol names, signatures and struct
// layouts (docs/nvidia-facts.md §4.3, §4.4, from NVIDIA's
// nvml.h as copied in NVIDIA/go-nvml, CUDA 13.3 header), answering from the
// scenario file. Like real NVML it enumerates GPUs in PCI bus order and
// ignores CUDA_VISIBLE_DEVICES.
#include "fake_nvml.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "scenario.h"

using fake::nvml::clock_by_type;
using fake::nvml::device_call;
using fake::nvml::fill_pci_info;
using fake::nvml::kArgumentVersionMismatch;
using fake::nvml::kGpuIsLost;
using fake::nvml::kInsufficientSize;
using fake::nvml::kInvalidArgument;
using fake::nvml::kNotFound;
using fake::nvml::kNotSupported;
using fake::nvml::kSuccess;
using fake::nvml::kUninitialized;
using fake::nvml::kUnknown;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;
GD_ABI_NVML_MEMORY(nvmlMemory_t);

typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;
GD_ABI_NVML_PROCESS_INFO_V2(nvmlProcessInfo_t);

typedef struct {
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
GD_ABI_NVML_FABRIC_INFO_V2(nvmlGpuFabricInfo_v2_t);
constexpr unsigned int kFabricInfoV2 = 0x02000024;  // NVML_STRUCT_VERSION(GpuFabricInfo, 2)

typedef struct {
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
typedef nvmlGpuFabricInfo_v3_t nvmlGpuFabricInfoV_t;
GD_ABI_NVML_FABRIC_INFO_V3(nvmlGpuFabricInfo_v3_t);
constexpr unsigned int kFabricInfoV3 = 0x03000028;  // NVML_STRUCT_VERSION(GpuFabricInfo, 3)

namespace {

int g_init_count = 0;
std::vector<nvmlDevice_st> g_handles;      // one per scenario GPU
std::vector<nvmlDevice_st> g_mig_handles;  // all MIG instances

const fake::Scenario& sc() { return fake::scenario(); }

void make_handles() {
  if (!g_handles.empty() || sc().gpus.empty()) return;
  size_t migs = 0;
  for (const auto& g : sc().gpus) migs += g.mig_instances.size();
  g_mig_handles.reserve(migs);  // pointers into it are handed out
  for (const auto& g : sc().gpus) {
    g_handles.push_back({&g, nullptr});
    for (const auto& m : g.mig_instances) g_mig_handles.push_back({&g, &m});
  }
}

int init_call(const char* fn) {
  if (!sc().valid) return kUnknown;
  if (int rc = fake::inject(fn)) return rc;
  make_handles();
  ++g_init_count;
  return kSuccess;
}

int string_call(const char* fn, nvmlDevice_t dev, const std::string& value, char* buf,
                unsigned int len) {
  if (int rc = device_call(fn, dev, buf)) return rc;
  return fake::copy_string(value, buf, len) ? kSuccess : kInsufficientSize;
}

}  // namespace

namespace fake::nvml {

int device_call(const char* fn, nvmlDevice_t dev, const void* out) {
  if (g_init_count == 0) return kUninitialized;
  if (dev == nullptr || dev->gpu == nullptr || out == nullptr) return kInvalidArgument;
  if (int rc = fake::inject(fn, dev->gpu)) return rc;
  if (dev->gpu->is_lost()) return kGpuIsLost;
  return kSuccess;
}

nvmlDevice_t handle_at(size_t index) {
  return index < g_handles.size() ? &g_handles[index] : nullptr;
}

size_t index_of(nvmlDevice_t dev) { return static_cast<size_t>(dev->gpu - sc().gpus.data()); }

void fill_pci_info(unsigned domain, unsigned bus, unsigned device, unsigned device_id,
                   unsigned subsystem_id, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof *pci);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain, bus, device);
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, device);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = device;
  pci->pciDeviceId = device_id;
  pci->pciSubSystemId = subsystem_id;
}

int clock_by_type(int type, unsigned int sm_mhz, unsigned int mem_mhz, unsigned int* out) {
  switch (type) {
    case 0:
    case 1:
      *out = sm_mhz;
      return kSuccess;
    case 2:
      *out = mem_mhz;
      return kSuccess;
    case 3:
      *out = sm_mhz * 3 / 4;
      return kSuccess;
    default:
      return kInvalidArgument;
  }
}

}  // namespace fake::nvml

FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) { return init_call("nvmlInit_v2"); }
FAKE_EXPORT nvmlReturn_t nvmlInit(void) { return init_call("nvmlInit"); }
FAKE_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int /*flags*/) {
  return init_call("nvmlInitWithFlags");
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (int rc = fake::inject("nvmlShutdown")) return rc;
  if (g_init_count == 0) return kUninitialized;
  --g_init_count;
  return kSuccess;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 12:
      return "NVML Shared Library Not Found";
    case 13:
      return "Function Not Found";
    case 15:
      return "GPU is lost";
    case 17:  // NVML_ERROR_OPERATING_SYSTEM: cgroups or a container deny /dev/nvidia*
      return "GPU access blocked by the operating system";
    case 18:
      return "Driver/library version mismatch";
    case 25:
      return "Argument Version Mismatch";
    default:
      return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (g_init_count == 0) return kUninitialized;
  if (int rc = fake::inject("nvmlSystemGetDriverVersion")) return rc;
  if (version == nullptr) return kInvalidArgument;
  return fake::copy_string(sc().driver_version, version, length) ? kSuccess : kInsufficientSize;
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  if (int rc = fake::inject("nvmlSystemGetNVMLVersion")) return rc;
  if (version == nullptr) return kInvalidArgument;
  return fake::copy_string(sc().nvml_version, version, length) ? kSuccess : kInsufficientSize;
}

static nvmlReturn_t cuda_driver_version(const char* fn, int* v) {
  if (int rc = fake::inject(fn)) return rc;
  if (v == nullptr) return kInvalidArgument;
  *v = sc().cuda_driver_version;
  return kSuccess;
}
FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  return cuda_driver_version("nvmlSystemGetCudaDriverVersion", v);
}
FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  return cuda_driver_version("nvmlSystemGetCudaDriverVersion_v2", v);
}

static nvmlReturn_t device_count(const char* fn, unsigned int* count) {
  if (g_init_count == 0) return kUninitialized;
  if (int rc = fake::inject(fn)) return rc;
  if (count == nullptr) return kInvalidArgument;
  *count = static_cast<unsigned int>(sc().gpus.size());
  return kSuccess;
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return device_count("nvmlDeviceGetCount_v2", count);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return device_count("nvmlDeviceGetCount", count);
}

static nvmlReturn_t handle_by_index(const char* fn, unsigned int index, nvmlDevice_t* device) {
  if (g_init_count == 0) return kUninitialized;
  if (device == nullptr || index >= g_handles.size()) return kInvalidArgument;
  const fake::Gpu* gpu = g_handles[index].gpu;
  if (int rc = fake::inject(fn, gpu)) return rc;
  if (gpu->is_lost()) return kGpuIsLost;
  *device = &g_handles[index];
  return kSuccess;
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex_v2", index, device);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index("nvmlDeviceGetHandleByIndex", index, device);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char* name, unsigned int length) {
  return string_call("nvmlDeviceGetName", dev, dev ? dev->gpu->name : "", name, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char* uuid, unsigned int length) {
  std::string value;
  if (dev != nullptr && dev->gpu != nullptr) value = dev->mig ? dev->mig->uuid : dev->gpu->uuid;
  return string_call("nvmlDeviceGetUUID", dev, value, uuid, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t dev, char* version,
                                                   unsigned int length) {
  std::string value;
  if (dev != nullptr && dev->gpu != nullptr && !dev->mig) value = dev->gpu->vbios_version;
  return string_call("nvmlDeviceGetVbiosVersion", dev, value, version, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t* pci) {
  if (int rc = device_call("nvmlDeviceGetPciInfo_v3", dev, pci)) return rc;
  const fake::Gpu& g = *dev->gpu;
  fill_pci_info(g.domain, g.bus, g.device, g.pci_device_id, g.pci_subsystem_id, pci);
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t dev, unsigned int* minor) {
  if (int rc = device_call("nvmlDeviceGetMinorNumber", dev, minor)) return rc;
  *minor = dev->gpu->minor;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t* memory) {
  if (int rc = device_call("nvmlDeviceGetMemoryInfo", dev, memory)) return rc;
  const fake::Gpu& g = *dev->gpu;
  memory->total = g.memory_total_bytes;
  memory->used =
      g.memory_used_bytes < g.memory_total_bytes ? g.memory_used_bytes : g.memory_total_bytes;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int* mode) {
  if (int rc = device_call("nvmlDeviceGetPersistenceMode", dev, mode)) return rc;
  *mode = dev->gpu->persistence_mode;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, int* mode) {
  if (int rc = device_call("nvmlDeviceGetComputeMode", dev, mode)) return rc;
  *mode = dev->gpu->compute_mode;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int* current,
                                              unsigned int* pending) {
  if (int rc = device_call("nvmlDeviceGetMigMode", dev, current)) return rc;
  if (pending == nullptr) return kInvalidArgument;
  if (!dev->gpu->mig_capable) return kNotSupported;
  *current = static_cast<unsigned int>(dev->gpu->mig_current);
  *pending = static_cast<unsigned int>(dev->gpu->mig_pending);
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int* major,
                                                            int* minor) {
  if (int rc = device_call("nvmlDeviceGetCudaComputeCapability", dev, major)) return rc;
  if (minor == nullptr) return kInvalidArgument;
  *major = dev->gpu->cc_major;
  *minor = dev->gpu->cc_minor;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t dev, unsigned int* arch) {
  if (int rc = device_call("nvmlDeviceGetArchitecture", dev, arch)) return rc;
  *arch = static_cast<unsigned int>(dev->gpu->architecture);
  return kSuccess;
}

// nvmlClockType_t: 0 GRAPHICS, 1 SM, 2 MEM, 3 VIDEO.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type,
                                                   unsigned int* clock) {
  if (int rc = device_call("nvmlDeviceGetMaxClockInfo", dev, clock)) return rc;
  return clock_by_type(type, dev->gpu->max_sm_clock_mhz, dev->gpu->max_mem_clock_mhz, clock);
}

namespace {

// nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3: the count alone when
// *count is too small (INSUFFICIENT_SIZE), else the list.
nvmlReturn_t answer_processes(const char* fn, nvmlDevice_t dev, unsigned int* count,
                              nvmlProcessInfo_t* infos,
                              const std::vector<fake::Process> fake::Gpu::*list) {
  if (int rc = device_call(fn, dev, count)) return rc;
  const auto& procs = dev->gpu->*list;
  if (*count < procs.size()) {
    *count = static_cast<unsigned int>(procs.size());
    return procs.empty() ? kSuccess : kInsufficientSize;
  }
  if (!procs.empty() && infos == nullptr) return kInvalidArgument;
  for (size_t i = 0; i < procs.size(); ++i) {
    infos[i].pid = procs[i].pid;
    infos[i].usedGpuMemory = procs[i].used_memory_bytes.value_or(~0ull);  // NOT_AVAILABLE
    infos[i].gpuInstanceId = 0xFFFFFFFFu;
    infos[i].computeInstanceId = 0xFFFFFFFFu;
  }
  *count = static_cast<unsigned int>(procs.size());
  return kSuccess;
}

}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev,
                                                                 unsigned int* count,
                                                                 nvmlProcessInfo_t* infos) {
  return answer_processes("nvmlDeviceGetComputeRunningProcesses_v3", dev, count, infos,
                          &fake::Gpu::processes);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t dev,
                                                                  unsigned int* count,
                                                                  nvmlProcessInfo_t* infos) {
  return answer_processes("nvmlDeviceGetGraphicsRunningProcesses_v3", dev, count, infos,
                          &fake::Gpu::graphics_processes);
}

// Takes the struct version named in the first word, v3 (current) or v2
// (deprecated); anything else is ARGUMENT_VERSION_MISMATCH, as from real
// NVML. An error keyed "nvmlDeviceGetGpuFabricInfoV(v3)" answers only v3
// requests: "...(v3)": 25 is a driver that predates v3.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t dev, nvmlGpuFabricInfoV_t* info) {
  if (int rc = device_call("nvmlDeviceGetGpuFabricInfoV", dev, info)) return rc;
  if (info->version != kFabricInfoV3 && info->version != kFabricInfoV2) {
    return kArgumentVersionMismatch;
  }
  if (info->version == kFabricInfoV3) {
    if (int rc = fake::inject("nvmlDeviceGetGpuFabricInfoV(v3)", dev->gpu)) return rc;
  }
  if (!dev->gpu->fabric_supported) return kNotSupported;
  // v2's fields sit at the same offsets in v3 (both layouts are asserted
  // above); a v2 caller's 36-byte buffer ends before healthSummary.
  std::memset(info->clusterUuid, 0, sizeof info->clusterUuid);
  const std::string& hex = dev->gpu->fabric_cluster_uuid;
  for (size_t i = 0; i < sizeof info->clusterUuid && 2 * i + 1 < hex.size(); ++i) {
    info->clusterUuid[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  info->status = dev->gpu->fabric_status;
  info->cliqueId = dev->gpu->fabric_clique_id;
  info->state = static_cast<unsigned char>(dev->gpu->fabric_state);
  info->healthMask = dev->gpu->fabric_health_mask;
  if (info->version == kFabricInfoV3) {
    info->healthSummary = static_cast<unsigned char>(dev->gpu->fabric_health_summary);
  }
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int* count) {
  if (int rc = device_call("nvmlDeviceGetMaxMigDeviceCount", dev, count)) return rc;
  if (!dev->gpu->mig_capable) return kNotSupported;
  *count = 7;  // H100/A100: up to seven 1g instances
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index,
                                                             nvmlDevice_t* mig) {
  if (int rc = device_call("nvmlDeviceGetMigDeviceHandleByIndex", dev, mig)) return rc;
  if (!dev->gpu->mig_capable || dev->gpu->mig_current != 1) return kNotSupported;
  unsigned int seen = 0;
  for (auto& h : g_mig_handles) {
    if (h.gpu != dev->gpu) continue;
    if (seen++ == index) {
      *mig = &h;
      return kSuccess;
    }
  }
  return kNotFound;
}
