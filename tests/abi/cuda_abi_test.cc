// The CUDA probe's declarations (src/probe/cuda_api.h) compiled against the
// toolkit's own cuda.h and cuda_runtime_api.h, built only where CMake finds it
// (cmake/tests-abi.cmake): every symbol the probe resolves is called with cuda.h's signature,
// CUuuid has cuda.h's layout (the numbers of probe/nvidia_abi.h, asserted on the real struct), and
// the attribute numbers are cuda.h's. At run time, the error catalog's names and texts against
// cuda.h, driver_types.h and the toolkit's libcudart.
//
// __CUDA_API_VERSION_INTERNAL makes cuda.h declare the unversioned symbols
// under their own names with their own (old) signatures, as the library
// exports them, next to the _v2 ones; without it cuDeviceTotalMem is a macro
// for cuDeviceTotalMem_v2.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "abi_compat.h"
#include "catalog/cuda_errors.h"
#include "probe/cuda_api.h"

namespace gd::abi {

// The project's stand-ins for cuda.h's types.
GD_ABI_CU_UUID(::CUuuid);  // the transcribed layout is the header's
template <>
struct StandsFor<gd::cuda::CUuuid, ::CUuuid> : std::true_type {};
template <>
struct StandsFor<gd::cuda::CUctx_opaque, ::CUctx_st> : std::true_type {};

}  // namespace gd::abi

namespace {

using gd::cuda::Api;

static_assert(sizeof(CUresult) == sizeof(gd::cuda::CUresult));
static_assert(std::is_same_v<CUdevice, gd::cuda::CUdevice>);
static_assert(gd::cuda::kSuccess == CUDA_SUCCESS);
static_assert(gd::cuda::kAttrClockRate == CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
static_assert(gd::cuda::kAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(gd::cuda::kAttrCcMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(gd::cuda::kAttrCcMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);

// Each member against every name resolve_api (src/probe/cuda.cc) tries for it.
GD_ABI_SYMBOL(Api, driver_version, cuDriverGetVersion);
GD_ABI_SYMBOL(Api, init, cuInit);
GD_ABI_SYMBOL(Api, count, cuDeviceGetCount);
GD_ABI_SYMBOL(Api, get, cuDeviceGet);
GD_ABI_SYMBOL(Api, name, cuDeviceGetName);
GD_ABI_SYMBOL(Api, pci_bus_id, cuDeviceGetPCIBusId);
GD_ABI_SYMBOL(Api, uuid, cuDeviceGetUuid_v2);
GD_ABI_SYMBOL(Api, uuid, cuDeviceGetUuid);
GD_ABI_SYMBOL(Api, total_mem, cuDeviceTotalMem_v2);
GD_ABI_SYMBOL(Api, total_mem_v1, cuDeviceTotalMem);
GD_ABI_SYMBOL(Api, attribute, cuDeviceGetAttribute);
GD_ABI_SYMBOL(Api, ctx_retain, cuDevicePrimaryCtxRetain);
GD_ABI_SYMBOL(Api, ctx_release, cuDevicePrimaryCtxRelease_v2);
GD_ABI_SYMBOL(Api, ctx_release, cuDevicePrimaryCtxRelease);
GD_ABI_SYMBOL(Api, ctx_set_current, cuCtxSetCurrent);
GD_ABI_SYMBOL(Api, mem_info, cuMemGetInfo_v2);
GD_ABI_SYMBOL(Api, mem_info_v1, cuMemGetInfo);
// A member added to Api without a line above fails here.
static_assert(sizeof(Api) == 15 * sizeof(gd::Sym<void()>), "a member of cuda::Api is unchecked");

// The runtime's two calls (cuda_runtime_api.h).
static_assert(sizeof(cudaError_t) == sizeof(gd::cuda::cudaError_t));
GD_ABI_SYMBOL(gd::cuda::RuntimeApi, runtime_version, cudaRuntimeGetVersion);
GD_ABI_SYMBOL(gd::cuda::RuntimeApi, device_count, cudaGetDeviceCount);
static_assert(sizeof(gd::cuda::RuntimeApi) == 2 * sizeof(gd::Sym<void()>),
              "a member of cuda::RuntimeApi is unchecked");

#ifdef GD_ABI_PLANT_MISMATCH
// The old declaration: the unversioned cuDeviceTotalMem called through a
// size_t* pointer. The check must reject it (ctest abi_cuda_rejects_mismatch).
static_assert(gd::abi::SameSignature<gd::cuda::CUresult(size_t*, gd::cuda::CUdevice),
                                     decltype(cuDeviceTotalMem)>::value,
              "planted mismatch: cuDeviceTotalMem through size_t*");
#endif

using gd::abi::enum_values;

// The catalog transcribes CUDA 13.0; an older toolkit lacks codes added since.
constexpr bool kCatalogsToolkit = CUDA_VERSION >= 13000;

TEST(CudaAbi, CatalogNamesAreTheHeadersValues) {
  if (!kCatalogsToolkit) GTEST_SKIP() << "cuda.h is CUDA " << CUDA_VERSION << ", before 13.0";
  auto driver = enum_values(GD_CUDA_INCLUDE_DIR "/cuda.h", "CUDA_");
  auto runtime = enum_values(GD_CUDA_INCLUDE_DIR "/driver_types.h", "cuda");
  ASSERT_GT(driver.size(), 50u);
  ASSERT_GT(runtime.size(), 50u);
  int checked = 0;
  for (int code = 0; code < 1000; ++code) {
    const gd::CudaErrorInfo* e = gd::find_cuda_error(code);
    if (e == nullptr) continue;
    ++checked;
    if (e->driver_name != nullptr) {
      ASSERT_TRUE(driver.count(e->driver_name)) << e->driver_name << " is not in cuda.h";
      EXPECT_EQ(driver[e->driver_name], code) << e->driver_name;
    }
    if (e->runtime_name != nullptr) {
      ASSERT_TRUE(runtime.count(e->runtime_name)) << e->runtime_name << " not in driver_types.h";
      EXPECT_EQ(runtime[e->runtime_name], code) << e->runtime_name;
    }
  }
  EXPECT_GT(checked, 40);
}

// Every code of the toolkit's two enums has its row, under that name: explain
// knows every error a CUDA 13 program can print.
TEST(CudaAbi, CatalogHasEveryCodeOfTheHeaders) {
  if (!kCatalogsToolkit) GTEST_SKIP() << "cuda.h is CUDA " << CUDA_VERSION << ", before 13.0";
  auto driver = enum_values(GD_CUDA_INCLUDE_DIR "/cuda.h", "CUDA_ERROR_");
  driver.emplace("CUDA_SUCCESS", 0);
  auto runtime = enum_values(GD_CUDA_INCLUDE_DIR "/driver_types.h", "cudaError");
  runtime.emplace("cudaSuccess", 0);
  for (const auto& [name, code] : driver) {
    const gd::CudaErrorInfo* e = gd::find_cuda_error(code);
    ASSERT_NE(e, nullptr) << name << " = " << code << " has no row";
    EXPECT_NE(e->driver_name, nullptr) << name << " = " << code << ": the row lacks it";
  }
  for (const auto& [name, code] : runtime) {
    if (name.find('_') != std::string::npos) continue;  // cudaError_t itself, not a code
    const gd::CudaErrorInfo* e = gd::find_cuda_error(code);
    ASSERT_NE(e, nullptr) << name << " = " << code << " has no row";
    EXPECT_NE(e->runtime_name, nullptr) << name << " = " << code << ": the row lacks it";
  }
}

// The runtime answers cudaGetErrorName/String without a driver or GPU.
TEST(CudaAbi, CatalogRuntimeTextsAreLibcudartsOwn) {
  void* lib = dlopen(GD_CUDART_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) GTEST_SKIP() << "no " GD_CUDART_LIBRARY ": " << dlerror();
  using Text = const char* (*)(int);
  auto error_string = reinterpret_cast<Text>(dlsym(lib, "cudaGetErrorString"));
  auto error_name = reinterpret_cast<Text>(dlsym(lib, "cudaGetErrorName"));
  ASSERT_NE(error_string, nullptr);
  ASSERT_NE(error_name, nullptr);
  auto runtime_version = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cudaRuntimeGetVersion"));
  int version = 0;
  ASSERT_NE(runtime_version, nullptr);
  ASSERT_EQ(runtime_version(&version), 0);
  if (version < 13000) GTEST_SKIP() << GD_CUDART_LIBRARY " is CUDA " << version << ", before 13.0";
  int checked = 0;
  for (int code = 0; code < 1000; ++code) {
    const gd::CudaErrorInfo* e = gd::find_cuda_error(code);
    if (e == nullptr || e->runtime_name == nullptr) continue;
    ++checked;
    EXPECT_STREQ(e->runtime_name, error_name(code)) << code;
    ASSERT_NE(e->runtime_string, nullptr) << code;
    EXPECT_STREQ(e->runtime_string, error_string(code)) << code;
  }
  EXPECT_GT(checked, 40);
}

}  // namespace
