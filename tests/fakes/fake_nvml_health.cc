// Fake libnvidia-ml.so.1, health and topology calls: NVML's symbol names,
// signatures, enum values and struct layouts (docs/nvidia-facts.md
// §4.3-§4.5, CUDA 13.3 header, transcribed 2026-12), answering from each
// GPU's "health" object and the scenario's "topology" (shape and rules in
// scenario.h). A feature the scenario does not give is NOT_SUPPORTED, as on
// a real GPU without it.
#include <chrono>
#include <cstdio>

#include "../../src/probe/nvidia_abi.h"
#include "fake_nvml.h"
#include "scenario.h"

using fake::nvml::clock_by_type;
using fake::nvml::device_call;
using fake::nvml::index_of;
using fake::nvml::kInsufficientSize;
using fake::nvml::kInvalidArgument;
using fake::nvml::kNotSupported;
using fake::nvml::kSuccess;

typedef struct nvmlUtilization_st {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;
GD_ABI_NVML_UTILIZATION(nvmlUtilization_t);

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;
GD_ABI_NVML_VALUE(nvmlValue_t);

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;  // µs since the epoch
  long long latencyUsec;
  int valueType;  // nvmlValueType_t: 1 = unsigned int
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;
GD_ABI_NVML_FIELD_VALUE(nvmlFieldValue_t);

namespace {

constexpr unsigned kFieldMemoryTemp = 82;               // NVML_FI_DEV_MEMORY_TEMP
constexpr int kValueTypeUnsignedInt = 1;                // NVML_VALUE_TYPE_UNSIGNED_INT
constexpr int kMaxThresholdType = 7;                    // NVML_TEMPERATURE_THRESHOLD_GPS_CURR
constexpr unsigned int kNvSwitchDeviceId = 0x22A310DE;  // H100-generation NVSwitch (10de:22a3)

const fake::Health& health(nvmlDevice_t dev) { return dev->gpu->current_health(); }

// The common shape "one value of the GPU": the preamble (which also
// rejects a null handle), then get(health).
template <class T, class Get>
nvmlReturn_t answer(const char* fn, nvmlDevice_t dev, T* out, Get get) {
  if (int rc = device_call(fn, dev, out)) return rc;
  *out = static_cast<T>(get(dev->gpu->current_health()));
  return kSuccess;
}

long long now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

nvmlReturn_t retired_pages(const char* fn, nvmlDevice_t dev, int cause, unsigned int* count,
                           unsigned long long* addresses, unsigned long long* timestamps) {
  if (int rc = device_call(fn, dev, count)) return rc;
  if (cause != 0 && cause != 1) return kInvalidArgument;
  const auto& r = health(dev).retired_pages;
  if (!r) return kNotSupported;
  unsigned int n = cause == 0 ? r->sbe : r->dbe;
  if (*count < n) {
    *count = n;
    return kInsufficientSize;
  }
  if (n > 0 && addresses == nullptr) return kInvalidArgument;
  for (unsigned int i = 0; i < n; ++i) {
    addresses[i] = 0x1000000ull * (i + 1) + (cause == 0 ? 0 : 0x800000ull);
    if (timestamps != nullptr) timestamps[i] = 1700000000ull + i;
  }
  *count = n;
  return kSuccess;
}

// The link's entry, or the status NVML gives for it.
nvmlReturn_t nvlink(const char* fn, nvmlDevice_t dev, unsigned int link, const void* out,
                    const fake::NvLink** entry) {
  if (int rc = device_call(fn, dev, out)) return rc;
  const auto& links = health(dev).nvlinks;
  if (!links) return kNotSupported;
  if (link >= links->size()) return kInvalidArgument;
  *entry = &(*links)[link];
  return kSuccess;
}

}  // namespace

// nvmlTemperatureSensors_t: only 0 (GPU) exists.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor,
                                                  unsigned int* temp) {
  if (int rc = device_call("nvmlDeviceGetTemperature", dev, temp)) return rc;
  if (sensor != 0) return kInvalidArgument;
  *temp = static_cast<unsigned int>(health(dev).temperature_c);
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int type,
                                                           unsigned int* temp) {
  if (int rc = device_call("nvmlDeviceGetTemperatureThreshold", dev, temp)) return rc;
  if (type < 0 || type > kMaxThresholdType) return kInvalidArgument;
  auto it = health(dev).temp_thresholds.find(type);
  if (it == health(dev).temp_thresholds.end()) return kNotSupported;
  *temp = it->second;
  return kSuccess;
}

// Each entry gets its own status; only MEMORY_TEMP is known to the fake.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int count,
                                                  nvmlFieldValue_t* values) {
  if (int rc = device_call("nvmlDeviceGetFieldValues", dev, values)) return rc;
  if (count < 0) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.timestamp = now_us();
    v.latencyUsec = 0;
    v.value.ullVal = 0;
    v.valueType = kValueTypeUnsignedInt;
    const auto& mem = health(dev).memory_temperature_c;
    if (v.fieldId == kFieldMemoryTemp && mem) {
      v.value.uiVal = static_cast<unsigned int>(*mem);
      v.nvmlReturn = kSuccess;
    } else {
      v.nvmlReturn = kNotSupported;
    }
  }
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int* mw) {
  return answer("nvmlDeviceGetPowerUsage", dev, mw,
                [](const fake::Health& h) { return h.power_usage_mw; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int* mw) {
  return answer("nvmlDeviceGetEnforcedPowerLimit", dev, mw,
                [](const fake::Health& h) { return h.power_limit_mw; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t dev, unsigned int* mw) {
  return answer("nvmlDeviceGetPowerManagementLimit", dev, mw,
                [](const fake::Health& h) { return h.power_limit_mw; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t dev,
                                                                      unsigned int* min_mw,
                                                                      unsigned int* max_mw) {
  if (int rc = device_call("nvmlDeviceGetPowerManagementLimitConstraints", dev, min_mw)) return rc;
  if (max_mw == nullptr) return kInvalidArgument;
  *min_mw = health(dev).power_min_limit_mw;
  *max_mw = health(dev).power_max_limit_mw;
  return kSuccess;
}

// nvmlClockType_t: 0 GRAPHICS, 1 SM, 2 MEM, 3 VIDEO.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int* mhz) {
  if (int rc = device_call("nvmlDeviceGetClockInfo", dev, mhz)) return rc;
  const fake::Health& h = health(dev);
  return clock_by_type(type, h.sm_clock_mhz, h.mem_clock_mhz, mhz);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev,
                                                                unsigned long long* reasons) {
  return answer("nvmlDeviceGetCurrentClocksEventReasons", dev, reasons,
                [](const fake::Health& h) { return h.clock_event_reasons; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev,
                                                                   unsigned long long* reasons) {
  return answer("nvmlDeviceGetCurrentClocksThrottleReasons", dev, reasons,
                [](const fake::Health& h) { return h.clock_event_reasons; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t dev, int* pstate) {
  return answer("nvmlDeviceGetPerformanceState", dev, pstate,
                [](const fake::Health& h) { return h.pstate; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t* u) {
  if (int rc = device_call("nvmlDeviceGetUtilizationRates", dev, u)) return rc;
  u->gpu = health(dev).utilization_gpu_pct;
  u->memory = health(dev).utilization_memory_pct;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t dev, unsigned int* pct) {
  if (int rc = device_call("nvmlDeviceGetFanSpeed", dev, pct)) return rc;
  if (!health(dev).fan_speed_pct) return kNotSupported;
  *pct = *health(dev).fan_speed_pct;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, int* current, int* pending) {
  if (int rc = device_call("nvmlDeviceGetEccMode", dev, current)) return rc;
  if (pending == nullptr) return kInvalidArgument;
  if (!health(dev).ecc) return kNotSupported;
  *current = health(dev).ecc->current;
  *pending = health(dev).ecc->pending;
  return kSuccess;
}

// errorType 0 CORRECTED, 1 UNCORRECTED; counterType 0 VOLATILE, 1 AGGREGATE.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int error_type,
                                                     int counter_type, unsigned long long* n) {
  if (int rc = device_call("nvmlDeviceGetTotalEccErrors", dev, n)) return rc;
  if ((error_type != 0 && error_type != 1) || (counter_type != 0 && counter_type != 1)) {
    return kInvalidArgument;
  }
  const auto& e = health(dev).ecc;
  if (!e) return kNotSupported;
  if (error_type == 0) {
    *n = counter_type == 0 ? e->corrected_volatile : e->corrected_aggregate;
  } else {
    *n = counter_type == 0 ? e->uncorrected_volatile : e->uncorrected_aggregate;
  }
  return kSuccess;
}

// nvmlPageRetirementCause_t: 0 multiple single-bit errors, 1 double-bit error.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t dev, int cause, unsigned int* count,
                                                   unsigned long long* addresses) {
  return retired_pages("nvmlDeviceGetRetiredPages", dev, cause, count, addresses, nullptr);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t dev, int cause,
                                                      unsigned int* count,
                                                      unsigned long long* addresses,
                                                      unsigned long long* timestamps) {
  return retired_pages("nvmlDeviceGetRetiredPages_v2", dev, cause, count, addresses, timestamps);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int* is_pending) {
  if (int rc = device_call("nvmlDeviceGetRetiredPagesPendingStatus", dev, is_pending)) return rc;
  if (!health(dev).retired_pages) return kNotSupported;
  *is_pending = health(dev).retired_pages->pending;
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int* corr,
                                                   unsigned int* unc, unsigned int* pending,
                                                   unsigned int* failure) {
  if (int rc = device_call("nvmlDeviceGetRemappedRows", dev, corr)) return rc;
  if (unc == nullptr || pending == nullptr || failure == nullptr) return kInvalidArgument;
  const auto& r = health(dev).remapped_rows;
  if (!r) return kNotSupported;
  *corr = r->correctable;
  *unc = r->uncorrectable;
  *pending = static_cast<unsigned int>(r->pending);
  *failure = static_cast<unsigned int>(r->failure);
  return kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t dev, unsigned int* g) {
  return answer("nvmlDeviceGetCurrPcieLinkGeneration", dev, g,
                [](const fake::Health& h) { return h.pcie.gen; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned int* g) {
  return answer("nvmlDeviceGetMaxPcieLinkGeneration", dev, g,
                [](const fake::Health& h) { return h.pcie.gen_max; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned int* g) {
  return answer("nvmlDeviceGetGpuMaxPcieLinkGeneration", dev, g,
                [](const fake::Health& h) { return h.pcie.gen_max; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t dev, unsigned int* w) {
  return answer("nvmlDeviceGetCurrPcieLinkWidth", dev, w,
                [](const fake::Health& h) { return h.pcie.width; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t dev, unsigned int* w) {
  return answer("nvmlDeviceGetMaxPcieLinkWidth", dev, w,
                [](const fake::Health& h) { return h.pcie.width_max; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t dev, unsigned int* n) {
  return answer("nvmlDeviceGetPcieReplayCounter", dev, n,
                [](const fake::Health& h) { return h.pcie.replay; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link,
                                                  int* is_active) {
  const fake::NvLink* l = nullptr;
  if (int rc = nvlink("nvmlDeviceGetNvLinkState", dev, link, is_active, &l)) return rc;
  *is_active = l->active ? 1 : 0;
  return kSuccess;
}

// The peer's PCI info: a scenario GPU's own ids, else an NVSwitch's.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t dev, unsigned int link,
                                                             nvmlPciInfo_t* pci) {
  const fake::NvLink* l = nullptr;
  if (int rc = nvlink("nvmlDeviceGetNvLinkRemotePciInfo_v2", dev, link, pci, &l)) return rc;
  unsigned d = 0, b = 0, s = 0, f = 0;
  if (l->remote_bus_id.empty() ||
      std::sscanf(l->remote_bus_id.c_str(), "%x:%x:%x.%x", &d, &b, &s, &f) != 4) {
    return kNotSupported;
  }
  unsigned int device_id = kNvSwitchDeviceId, subsystem_id = 0;
  for (const auto& g : fake::scenario().gpus) {
    if (g.domain == d && g.bus == b && g.device == s) {
      device_id = g.pci_device_id;
      subsystem_id = g.pci_subsystem_id;
    }
  }
  fake::nvml::fill_pci_info(d, b, s, device_id, subsystem_id, pci);
  return kSuccess;
}

// nvmlGpuTopologyLevel_t: 0 INTERNAL, 10 SINGLE, 20 MULTIPLE, 30 HOSTBRIDGE,
// 40 NODE, 50 SYSTEM. The rule for unlisted pairs is in scenario.h.
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t d1, nvmlDevice_t d2,
                                                             int* level) {
  const char* fn = "nvmlDeviceGetTopologyCommonAncestor";
  if (int rc = device_call(fn, d1, level)) return rc;
  if (int rc = device_call(fn, d2, level)) return rc;
  size_t a = index_of(d1), b = index_of(d2);
  if (a == b) {
    *level = 0;
    return kSuccess;
  }
  for (const auto& t : fake::scenario().topology) {
    if ((t.a == a && t.b == b) || (t.a == b && t.b == a)) {
      *level = t.level;
      return kSuccess;
    }
  }
  int na = d1->gpu->numa, nb = d2->gpu->numa;
  *level = na >= 0 && nb >= 0 && na != nb ? 50 : 40;
  return kSuccess;
}
