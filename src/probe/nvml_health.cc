// The NVML probe's health readings (NvmlHealth) and the GPU-pair topology,
// child side. Every value carries the return code of the call that read it:
// NOT_SUPPORTED (3) is common and normal (no ECC on a GeForce, no fan on an
// SXM board), a missing symbol leaves -1.
//
// Prototypes, enum values and field ids: docs/nvidia-facts.md
// §4.3 (transcribed 2026-12); reason bits §4.5 are decoded by the checks.
#include <string>
#include <vector>

#include "probe/hw_common.h"
#include "probe/nvml_api.h"

namespace gd::nvml {
namespace {

// nvmlTemperatureThresholds_t
constexpr int kThresholdShutdown = 0;
constexpr int kThresholdSlowdown = 1;
constexpr int kThresholdMemMax = 2;
constexpr int kThresholdGpuMax = 3;
constexpr int kSensorGpu = 0;           // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
constexpr unsigned kFieldMemTemp = 82;  // NVML_FI_DEV_MEMORY_TEMP, °C
// nvmlMemoryErrorType_t / nvmlEccCounterType_t
constexpr int kCorrected = 0;
constexpr int kUncorrected = 1;
constexpr int kVolatile = 0;   // since the driver loaded
constexpr int kAggregate = 1;  // lifetime (InfoROM)
// nvmlPageRetirementCause_t
constexpr int kRetiredMultipleSbe = 0;
constexpr int kRetiredDbe = 1;
// NVML_NVLINK_MAX_LINKS of the CUDA 13.3 header (18 in 11.8-13.0 headers).
constexpr unsigned kMaxNvLinks = 36;

// f(dev, &raw) into *v.
template <class T, class Raw>
void read_one(ChildOutput& out, const Sym<nvmlReturn_t(nvmlDevice_t, Raw*)>& s, nvmlDevice_t dev,
              const std::string& at, NvmlValue<T>* v) {
  Raw raw{};
  v->rc = ask(out, s, at, [&](auto f) { return f(dev, &raw); });
  if (v->ok()) v->value = static_cast<T>(raw);
}

// f(dev, arg, &raw) into *v: a sensor, threshold or clock type as `arg`.
template <class T, class Raw>
void read_typed(ChildOutput& out, const Sym<nvmlReturn_t(nvmlDevice_t, int, Raw*)>& s,
                nvmlDevice_t dev, int arg, const std::string& at, NvmlValue<T>* v) {
  Raw raw{};
  v->rc = ask(out, s, at, [&](auto f) { return f(dev, arg, &raw); });
  if (v->ok()) v->value = static_cast<T>(raw);
}

// A field value as an integer, by its nvmlValueType_t.
bool field_as_int(const FieldValue& fv, long long* v) {
  switch (fv.valueType) {
    case 0:
      *v = static_cast<long long>(fv.value.dVal);
      return true;
    case 1:
      *v = fv.value.uiVal;
      return true;
    case 2:
      *v = static_cast<long long>(fv.value.ulVal);
      return true;
    case 3:
      *v = static_cast<long long>(fv.value.ullVal);
      return true;
    case 4:
      *v = fv.value.sllVal;
      return true;
    case 5:
      *v = fv.value.siVal;
      return true;
    case 6:
      *v = fv.value.usVal;
      return true;
    default:
      return false;
  }
}

void read_thermal(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                  NvmlHealth* h) {
  read_typed(out, a.temperature, dev, kSensorGpu, at, &h->temperature_c);
  read_typed(out, a.temp_threshold, dev, kThresholdShutdown, at, &h->temp_shutdown_c);
  read_typed(out, a.temp_threshold, dev, kThresholdSlowdown, at, &h->temp_slowdown_c);
  read_typed(out, a.temp_threshold, dev, kThresholdMemMax, at, &h->temp_mem_max_c);
  read_typed(out, a.temp_threshold, dev, kThresholdGpuMax, at, &h->temp_gpu_max_c);
  // HBM temperature has no getter of its own, only the field. The call can
  // succeed while the entry fails: the entry's status is the value's.
  FieldValue fv{};
  fv.fieldId = kFieldMemTemp;
  int rc = ask(out, a.field_values, at, [&](auto f) { return f(dev, 1, &fv); });
  h->memory_temperature_c.rc = rc == kSuccess ? fv.nvmlReturn : rc;
  long long t = 0;
  if (h->memory_temperature_c.ok()) {
    if (field_as_int(fv, &t)) {
      h->memory_temperature_c.value = static_cast<int>(t);
    } else {
      h->memory_temperature_c.rc = 999;  // NVML_ERROR_UNKNOWN: a value type we cannot read
    }
  }
}

void read_power_and_clocks(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                           NvmlHealth* h) {
  read_one(out, a.power_usage, dev, at, &h->power_usage_mw);
  read_one(out, a.power_limit, dev, at, &h->power_limit_mw);
  unsigned min_mw = 0, max_mw = 0;
  h->power_max_limit_mw.rc =
      ask(out, a.power_constraints, at, [&](auto f) { return f(dev, &min_mw, &max_mw); });
  if (h->power_max_limit_mw.ok()) h->power_max_limit_mw.value = max_mw;
  read_typed(out, a.clock, dev, kClockSm, at, &h->sm_clock_mhz);
  read_typed(out, a.clock, dev, kClockMem, at, &h->mem_clock_mhz);
  read_typed(out, a.max_clock, dev, kClockMem, at, &h->max_mem_clock_mhz);
  read_one(out, a.clock_reasons, dev, at, &h->clock_event_reasons);
  read_one(out, a.pstate, dev, at, &h->pstate);
  Utilization u{};
  int rc = ask(out, a.utilization, at, [&](auto f) { return f(dev, &u); });
  h->utilization_gpu_pct.rc = h->utilization_memory_pct.rc = rc;
  if (rc == kSuccess) {
    h->utilization_gpu_pct.value = u.gpu;
    h->utilization_memory_pct.value = u.memory;
  }
  read_one(out, a.fan_speed, dev, at, &h->fan_speed_pct);
}

void read_ecc_count(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                    int type, int counter, NvmlValue<uint64_t>* v) {
  unsigned long long n = 0;
  v->rc = ask(out, a.ecc_errors, at, [&](auto f) { return f(dev, type, counter, &n); });
  if (v->ok()) v->value = n;
}

// The count of retired pages: asked with room for none, NVML answers
// INSUFFICIENT_SIZE and the count when there are some, SUCCESS and 0 when
// there are none. Either way the count is good.
void read_retired_count(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                        int cause, NvmlValue<uint32_t>* v) {
  unsigned n = 0;
  int rc = ask(out, a.retired_pages, at, [&](auto f) { return f(dev, cause, &n, nullptr); });
  v->rc = rc == kInsufficientSize ? kSuccess : rc;
  if (v->ok()) v->value = n;
}

void read_memory_errors(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                        NvmlHealth* h) {
  int cur = 0, pend = 0;
  int rc = ask(out, a.ecc_mode, at, [&](auto f) { return f(dev, &cur, &pend); });
  h->ecc_mode_current.rc = h->ecc_mode_pending.rc = rc;
  if (rc == kSuccess) {
    h->ecc_mode_current.value = cur;
    h->ecc_mode_pending.value = pend;
  }
  read_ecc_count(a, out, dev, at, kCorrected, kVolatile, &h->ecc_corrected_volatile);
  read_ecc_count(a, out, dev, at, kUncorrected, kVolatile, &h->ecc_uncorrected_volatile);
  read_ecc_count(a, out, dev, at, kCorrected, kAggregate, &h->ecc_corrected_aggregate);
  read_ecc_count(a, out, dev, at, kUncorrected, kAggregate, &h->ecc_uncorrected_aggregate);
  read_retired_count(a, out, dev, at, kRetiredMultipleSbe, &h->retired_pages_sbe);
  read_retired_count(a, out, dev, at, kRetiredDbe, &h->retired_pages_dbe);
  read_one(out, a.retired_pending, dev, at, &h->retired_pages_pending);
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  rc = ask(out, a.remapped_rows, at,
           [&](auto f) { return f(dev, &corr, &unc, &pending, &failure); });
  h->remapped_rows_correctable.rc = h->remapped_rows_uncorrectable.rc = rc;
  h->remap_pending.rc = h->remap_failure.rc = rc;
  if (rc == kSuccess) {
    h->remapped_rows_correctable.value = corr;
    h->remapped_rows_uncorrectable.value = unc;
    h->remap_pending.value = static_cast<int>(pending);
    h->remap_failure.value = static_cast<int>(failure);
  }
}

void read_pcie(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
               NvmlHealth* h) {
  read_one(out, a.pcie_gen, dev, at, &h->pcie_link_gen);
  read_one(out, a.pcie_gen_max, dev, at, &h->pcie_link_gen_max);
  read_one(out, a.pcie_width, dev, at, &h->pcie_link_width);
  read_one(out, a.pcie_width_max, dev, at, &h->pcie_link_width_max);
  read_one(out, a.pcie_replay, dev, at, &h->pcie_replay_count);
}

// Links 0, 1, ... until NVML says the link does not exist (INVALID_ARGUMENT
// past the GPU's last link, NOT_SUPPORTED on a GPU without NVLink). Any
// other failure on link 0 ends the walk too: the GPU will not answer for
// the others either. The list's rc is link 0's.
void read_nvlinks(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                  NvmlValue<std::vector<NvmlNvLink>>* links) {
  for (unsigned l = 0; l < kMaxNvLinks; ++l) {
    std::string where = at + " link " + std::to_string(l);
    int active = 0;
    int rc = ask(out, a.nvlink_state, where, [&](auto f) { return f(dev, l, &active); });
    if (l == 0) links->rc = rc;
    if (rc == kInvalidArgument || rc == kNotSupported || (l == 0 && rc != kSuccess)) break;
    NvmlNvLink& link = links->value.emplace_back();
    link.link = l;
    link.active.rc = rc;
    if (rc != kSuccess) continue;
    link.active.value = active != 0 ? 1 : 0;
    if (active == 0) continue;  // an inactive link has no peer to ask about
    PciInfo pci{};
    link.remote_bus_id.rc =
        ask(out, a.nvlink_remote_pci, where, [&](auto f) { return f(dev, l, &pci); });
    if (link.remote_bus_id.ok()) {
      link.remote_bus_id.value = normalize_bus_id(buffer_string(pci.busId, sizeof pci.busId));
    }
  }
}

}  // namespace

void resolve_health_api(void* lib, Api* a) {
  using D = nvmlDevice_t;
  a->temperature = resolve<nvmlReturn_t(D, int, unsigned*)>(lib, {"nvmlDeviceGetTemperature"});
  a->temp_threshold =
      resolve<nvmlReturn_t(D, int, unsigned*)>(lib, {"nvmlDeviceGetTemperatureThreshold"});
  a->field_values = resolve<nvmlReturn_t(D, int, FieldValue*)>(lib, {"nvmlDeviceGetFieldValues"});
  a->power_usage = resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetPowerUsage"});
  // The enforced limit is the one in force (the lower of the management
  // limit and any other cap); the management limit is the older fallback.
  a->power_limit = resolve<nvmlReturn_t(D, unsigned*)>(
      lib, {"nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"});
  a->power_constraints = resolve<nvmlReturn_t(D, unsigned*, unsigned*)>(
      lib, {"nvmlDeviceGetPowerManagementLimitConstraints"});
  a->clock = resolve<nvmlReturn_t(D, int, unsigned*)>(lib, {"nvmlDeviceGetClockInfo"});
  // Same bits under both names; "Throttle" is the pre-R535 one.
  a->clock_reasons = resolve<nvmlReturn_t(D, unsigned long long*)>(
      lib, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  a->pstate = resolve<nvmlReturn_t(D, int*)>(lib, {"nvmlDeviceGetPerformanceState"});
  a->utilization = resolve<nvmlReturn_t(D, Utilization*)>(lib, {"nvmlDeviceGetUtilizationRates"});
  a->fan_speed = resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetFanSpeed"});
  a->ecc_mode = resolve<nvmlReturn_t(D, int*, int*)>(lib, {"nvmlDeviceGetEccMode"});
  a->ecc_errors =
      resolve<nvmlReturn_t(D, int, int, unsigned long long*)>(lib, {"nvmlDeviceGetTotalEccErrors"});
  a->retired_pages = resolve<nvmlReturn_t(D, int, unsigned*, unsigned long long*)>(
      lib, {"nvmlDeviceGetRetiredPages"});
  a->retired_pending =
      resolve<nvmlReturn_t(D, int*)>(lib, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  a->remapped_rows = resolve<nvmlReturn_t(D, unsigned*, unsigned*, unsigned*, unsigned*)>(
      lib, {"nvmlDeviceGetRemappedRows"});
  a->pcie_gen = resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  a->pcie_gen_max =
      resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  a->pcie_width = resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetCurrPcieLinkWidth"});
  a->pcie_width_max = resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetMaxPcieLinkWidth"});
  a->pcie_replay = resolve<nvmlReturn_t(D, unsigned*)>(lib, {"nvmlDeviceGetPcieReplayCounter"});
  a->nvlink_state = resolve<nvmlReturn_t(D, unsigned, int*)>(lib, {"nvmlDeviceGetNvLinkState"});
  // Only _v2 fills the 32-byte busId; the unversioned one predates it.
  a->nvlink_remote_pci =
      resolve<nvmlReturn_t(D, unsigned, PciInfo*)>(lib, {"nvmlDeviceGetNvLinkRemotePciInfo_v2"});
  a->topology = resolve<nvmlReturn_t(D, D, int*)>(lib, {"nvmlDeviceGetTopologyCommonAncestor"});
}

void read_health(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                 NvmlHealth* h) {
  read_thermal(a, out, dev, at, h);
  read_power_and_clocks(a, out, dev, at, h);
  read_memory_errors(a, out, dev, at, h);
  read_pcie(a, out, dev, at, h);
  read_nvlinks(a, out, dev, at, &h->nvlinks);
}

std::vector<NvmlTopoPair> read_topology(const Api& a, ChildOutput& out,
                                        const std::vector<nvmlDevice_t>& devs) {
  std::vector<NvmlTopoPair> pairs;
  for (uint32_t i = 0; i < devs.size(); ++i) {
    for (uint32_t j = i + 1; j < devs.size(); ++j) {
      NvmlTopoPair& p = pairs.emplace_back();
      p.a = i;
      p.b = j;
      if (devs[i] == nullptr || devs[j] == nullptr) continue;
      std::string at = " (GPU " + std::to_string(i) + ", GPU " + std::to_string(j) + ")";
      int level = 0;
      p.level.rc = ask(out, a.topology, at, [&](auto f) { return f(devs[i], devs[j], &level); });
      if (p.level.ok()) p.level.value = level;
    }
  }
  return pairs;
}

}  // namespace gd::nvml
