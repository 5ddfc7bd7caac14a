// The NVML probe's declarations (src/probe/nvml_api.h) compiled against a
// real nvml.h, built only where CMake finds one (cmake/tests-abi.cmake; the
// CUDA toolkit does not ship it, the driver's development package or
// NVIDIA/go-nvml's gen/nvml/nvml.h does; -DGD_NVML_INCLUDE_DIR=... names
// one): every symbol the probe resolves is called with nvml.h's signature,
// every struct has nvml.h's layout (the numbers of probe/nvidia_abi.h,
// asserted on the real structs), the fabric struct versions are nvml.h's,
// and the catalog's NVML error names are the header's values.
//
// NVML_NO_UNVERSIONED_FUNC_DEFS makes nvml.h declare the unversioned symbols
// under their own names with their own signatures, next to the versioned
// ones, instead of macros that rename them.
#define NVML_NO_UNVERSIONED_FUNC_DEFS 1
#include <gtest/gtest.h>
#include <nvml.h>

#include <string>

#include "abi_compat.h"
#include "catalog/cuda_errors.h"
#include "probe/nvml_api.h"

namespace gd::abi {

// The transcribed layouts are the header's.
GD_ABI_NVML_PCI_INFO(::nvmlPciInfo_t);
GD_ABI_NVML_MEMORY(::nvmlMemory_t);
GD_ABI_NVML_PROCESS_INFO_V2(::nvmlProcessInfo_v2_t);
GD_ABI_NVML_PROCESS_INFO_V2(::nvmlProcessInfo_t);
GD_ABI_NVML_FABRIC_INFO_V2(::nvmlGpuFabricInfo_v2_t);
GD_ABI_NVML_FABRIC_INFO_V3(::nvmlGpuFabricInfo_v3_t);
GD_ABI_NVML_UTILIZATION(::nvmlUtilization_t);
GD_ABI_NVML_VALUE(::nvmlValue_t);
GD_ABI_NVML_FIELD_VALUE(::nvmlFieldValue_t);

// The project's stand-ins for nvml.h's types.
template <>
struct StandsFor<gd::nvml::nvmlDevice_opaque, ::nvmlDevice_st> : std::true_type {};
template <>
struct StandsFor<gd::nvml::PciInfo, ::nvmlPciInfo_t> : std::true_type {};
template <>
struct StandsFor<gd::nvml::Memory, ::nvmlMemory_t> : std::true_type {};
template <>
struct StandsFor<gd::nvml::ProcessInfo, ::nvmlProcessInfo_v2_t> : std::true_type {};
template <>
struct StandsFor<gd::nvml::FabricInfoV3, ::nvmlGpuFabricInfo_v3_t> : std::true_type {};
template <>
struct StandsFor<gd::nvml::Utilization, ::nvmlUtilization_t> : std::true_type {};
template <>
struct StandsFor<gd::nvml::FieldValue, ::nvmlFieldValue_t> : std::true_type {};

}  // namespace gd::abi

namespace {

using gd::nvml::Api;

static_assert(sizeof(nvmlReturn_t) == sizeof(gd::nvml::nvmlReturn_t));
static_assert(gd::nvml::kFabricInfoV2 == nvmlGpuFabricInfo_v2);
static_assert(gd::nvml::kFabricInfoV3 == nvmlGpuFabricInfo_v3);
static_assert(gd::nvml::kSuccess == NVML_SUCCESS);
static_assert(gd::nvml::kInvalidArgument == NVML_ERROR_INVALID_ARGUMENT);
static_assert(gd::nvml::kNotSupported == NVML_ERROR_NOT_SUPPORTED);
static_assert(gd::nvml::kInsufficientSize == NVML_ERROR_INSUFFICIENT_SIZE);
static_assert(gd::nvml::kArgumentVersionMismatch == NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
static_assert(gd::nvml::kClockSm == NVML_CLOCK_SM && gd::nvml::kClockMem == NVML_CLOCK_MEM);
static_assert(gd::nvml::kBufferSize == NVML_DEVICE_NAME_V2_BUFFER_SIZE &&
              gd::nvml::kBufferSize == NVML_DEVICE_UUID_V2_BUFFER_SIZE);
static_assert(gd::nvml::kValueNotAvailable ==
              static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));

// Each member against every name resolve_api (nvml.cc) and
// resolve_health_api (nvml_health.cc) try for it. Some are deprecated in
// NVML API 13 and still the fallback for older drivers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
GD_ABI_SYMBOL(Api, init, nvmlInit_v2);
GD_ABI_SYMBOL(Api, init, nvmlInit);
GD_ABI_SYMBOL(Api, shutdown, nvmlShutdown);
GD_ABI_SYMBOL(Api, driver_version, nvmlSystemGetDriverVersion);
GD_ABI_SYMBOL(Api, nvml_version, nvmlSystemGetNVMLVersion);
GD_ABI_SYMBOL(Api, cuda_driver_version, nvmlSystemGetCudaDriverVersion_v2);
GD_ABI_SYMBOL(Api, cuda_driver_version, nvmlSystemGetCudaDriverVersion);
GD_ABI_SYMBOL(Api, count, nvmlDeviceGetCount_v2);
GD_ABI_SYMBOL(Api, count, nvmlDeviceGetCount);
GD_ABI_SYMBOL(Api, handle, nvmlDeviceGetHandleByIndex_v2);
GD_ABI_SYMBOL(Api, handle, nvmlDeviceGetHandleByIndex);
GD_ABI_SYMBOL(Api, name, nvmlDeviceGetName);
GD_ABI_SYMBOL(Api, uuid, nvmlDeviceGetUUID);
GD_ABI_SYMBOL(Api, vbios, nvmlDeviceGetVbiosVersion);
GD_ABI_SYMBOL(Api, pci, nvmlDeviceGetPciInfo_v3);
GD_ABI_SYMBOL(Api, pci, nvmlDeviceGetPciInfo_v2);
GD_ABI_SYMBOL(Api, minor, nvmlDeviceGetMinorNumber);
GD_ABI_SYMBOL(Api, memory, nvmlDeviceGetMemoryInfo);
GD_ABI_SYMBOL(Api, persistence, nvmlDeviceGetPersistenceMode);
GD_ABI_SYMBOL(Api, compute_mode, nvmlDeviceGetComputeMode);
GD_ABI_SYMBOL(Api, mig_mode, nvmlDeviceGetMigMode);
GD_ABI_SYMBOL(Api, cc, nvmlDeviceGetCudaComputeCapability);
GD_ABI_SYMBOL(Api, arch, nvmlDeviceGetArchitecture);
GD_ABI_SYMBOL(Api, max_clock, nvmlDeviceGetMaxClockInfo);
GD_ABI_SYMBOL(Api, processes, nvmlDeviceGetComputeRunningProcesses_v3);
GD_ABI_SYMBOL(Api, processes, nvmlDeviceGetComputeRunningProcesses_v2);
GD_ABI_SYMBOL(Api, graphics_processes, nvmlDeviceGetGraphicsRunningProcesses_v3);
GD_ABI_SYMBOL(Api, graphics_processes, nvmlDeviceGetGraphicsRunningProcesses_v2);
GD_ABI_SYMBOL(Api, fabric, nvmlDeviceGetGpuFabricInfoV);
GD_ABI_SYMBOL(Api, max_mig, nvmlDeviceGetMaxMigDeviceCount);
GD_ABI_SYMBOL(Api, mig_handle, nvmlDeviceGetMigDeviceHandleByIndex);
GD_ABI_SYMBOL(Api, temperature, nvmlDeviceGetTemperature);
GD_ABI_SYMBOL(Api, temp_threshold, nvmlDeviceGetTemperatureThreshold);
GD_ABI_SYMBOL(Api, field_values, nvmlDeviceGetFieldValues);
GD_ABI_SYMBOL(Api, power_usage, nvmlDeviceGetPowerUsage);
GD_ABI_SYMBOL(Api, power_limit, nvmlDeviceGetEnforcedPowerLimit);
GD_ABI_SYMBOL(Api, power_limit, nvmlDeviceGetPowerManagementLimit);
GD_ABI_SYMBOL(Api, power_constraints, nvmlDeviceGetPowerManagementLimitConstraints);
GD_ABI_SYMBOL(Api, clock, nvmlDeviceGetClockInfo);
GD_ABI_SYMBOL(Api, clock_reasons, nvmlDeviceGetCurrentClocksEventReasons);
GD_ABI_SYMBOL(Api, clock_reasons, nvmlDeviceGetCurrentClocksThrottleReasons);
GD_ABI_SYMBOL(Api, pstate, nvmlDeviceGetPerformanceState);
GD_ABI_SYMBOL(Api, utilization, nvmlDeviceGetUtilizationRates);
GD_ABI_SYMBOL(Api, fan_speed, nvmlDeviceGetFanSpeed);
GD_ABI_SYMBOL(Api, ecc_mode, nvmlDeviceGetEccMode);
GD_ABI_SYMBOL(Api, ecc_errors, nvmlDeviceGetTotalEccErrors);
GD_ABI_SYMBOL(Api, retired_pages, nvmlDeviceGetRetiredPages);
GD_ABI_SYMBOL(Api, retired_pending, nvmlDeviceGetRetiredPagesPendingStatus);
GD_ABI_SYMBOL(Api, remapped_rows, nvmlDeviceGetRemappedRows);
GD_ABI_SYMBOL(Api, pcie_gen, nvmlDeviceGetCurrPcieLinkGeneration);
GD_ABI_SYMBOL(Api, pcie_gen_max, nvmlDeviceGetMaxPcieLinkGeneration);
GD_ABI_SYMBOL(Api, pcie_width, nvmlDeviceGetCurrPcieLinkWidth);
GD_ABI_SYMBOL(Api, pcie_width_max, nvmlDeviceGetMaxPcieLinkWidth);
GD_ABI_SYMBOL(Api, pcie_replay, nvmlDeviceGetPcieReplayCounter);
GD_ABI_SYMBOL(Api, nvlink_state, nvmlDeviceGetNvLinkState);
GD_ABI_SYMBOL(Api, nvlink_remote_pci, nvmlDeviceGetNvLinkRemotePciInfo_v2);
GD_ABI_SYMBOL(Api, topology, nvmlDeviceGetTopologyCommonAncestor);
#pragma GCC diagnostic pop
// A member added to Api without a line above fails here.
static_assert(sizeof(Api) == 47 * sizeof(gd::Sym<void()>), "a member of nvml::Api is unchecked");

#ifdef GD_ABI_PLANT_MISMATCH
// The v2 struct where the current nvmlDeviceGetGpuFabricInfoV takes v3: the
// check must reject it (ctest abi_nvml_rejects_mismatch).
static_assert(
    gd::abi::SameSignature<gd::nvml::nvmlReturn_t(gd::nvml::nvmlDevice_t, gd::nvml::FabricInfoV2*),
                           decltype(nvmlDeviceGetGpuFabricInfoV)>::value,
    "planted mismatch: nvmlDeviceGetGpuFabricInfoV with the v2 struct");
#endif

TEST(NvmlAbi, CatalogNamesAreTheHeadersValues) {
  auto values = gd::abi::enum_values(GD_NVML_INCLUDE_DIR "/nvml.h", "NVML_");
  ASSERT_TRUE(values.count("NVML_ERROR_UNKNOWN"));
  int checked = 0;
  for (const auto& [name, value] : values) {
    if (name != "NVML_SUCCESS" && name.rfind("NVML_ERROR_", 0) != 0) continue;
    ++checked;
    ASSERT_NE(gd::nvml_error_name(value), nullptr) << name << " = " << value;
    EXPECT_EQ(gd::nvml_error_name(value), name);
    EXPECT_EQ(gd::nvml_error_by_name(name), value);
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
