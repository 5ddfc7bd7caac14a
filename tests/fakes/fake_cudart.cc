// Fake libcudart.so.13: the four CUDA runtime calls the probe makes, with
// the runtime's real behaviour where it shapes what a framework reports.
// Like the real runtime it loads the driver as "libcuda.so.1" through the
// ordinary library search (so it meets the same libcuda the user's program
// would), and cudaGetDeviceCount reports:
//  - cudaErrorInsufficientDriver (35) when no libcuda loads, or when the
//    driver's CUDA major version is below the runtime's (minor-version
//    compatibility lets a 12.x runtime run on any 12.x driver: nvidia-facts
//    §5.2);
//  - the driver's cuInit / cuDeviceGetCount error otherwise (runtime and
//    driver codes are equal for these since CUDA 10.1, §3);
//  - cudaErrorNoDevice (100) for zero devices.
// The count is left untouched on error.
#include <dlfcn.h>

#include "scenario.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

typedef int cudaError_t;

namespace {

enum : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kInsufficientDriver = 35,
  kNoDevice = 100,
  kUnknown = 999,
};

struct Driver {
  void* handle = nullptr;
  int (*init)(unsigned int) = nullptr;
  int (*driver_version)(int*) = nullptr;
  int (*device_count)(int*) = nullptr;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver out;
    out.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (out.handle == nullptr) return out;
    out.init = reinterpret_cast<int (*)(unsigned int)>(dlsym(out.handle, "cuInit"));
    out.driver_version = reinterpret_cast<int (*)(int*)>(dlsym(out.handle, "cuDriverGetVersion"));
    out.device_count = reinterpret_cast<int (*)(int*)>(dlsym(out.handle, "cuDeviceGetCount"));
    return out;
  }();
  return d;
}

}  // namespace

FAKE_EXPORT cudaError_t cudaRuntimeGetVersion(int* version) {
  if (int rc = fake::inject("cudaRuntimeGetVersion")) return rc;
  if (version == nullptr) return kInvalidValue;
  *version = fake::scenario().cudart_runtime_version;
  return kSuccess;
}

FAKE_EXPORT cudaError_t cudaDriverGetVersion(int* version) {
  if (int rc = fake::inject("cudaDriverGetVersion")) return rc;
  if (version == nullptr) return kInvalidValue;
  *version = 0;  // no driver
  const Driver& d = driver();
  if (d.driver_version != nullptr && d.driver_version(version) != 0) *version = 0;
  return kSuccess;
}

FAKE_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  if (int rc = fake::inject("cudaGetDeviceCount")) return rc;
  if (count == nullptr) return kInvalidValue;
  const Driver& d = driver();
  if (d.init == nullptr || d.driver_version == nullptr || d.device_count == nullptr) {
    return kInsufficientDriver;
  }
  int have = 0;
  if (int rc = d.driver_version(&have)) return rc;
  int need = fake::scenario().cudart_runtime_version;
  if (have / 1000 < need / 1000) return kInsufficientDriver;
  if (int rc = d.init(0)) return rc;
  int n = 0;
  if (int rc = d.device_count(&n)) return rc;
  if (n == 0) return kNoDevice;
  *count = n;
  return kSuccess;
}

FAKE_EXPORT const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case 0:
      return "no error";
    case 1:
      return "invalid argument";
    case 2:
      return "out of memory";
    case 3:
      return "initialization error";
    case 34:
      return "CUDA driver is a stub library";
    case 35:
      return "CUDA driver version is insufficient for CUDA runtime version";
    case 46:
      return "CUDA-capable device(s) is/are busy or unavailable";
    case 100:
      return "no CUDA-capable device is detected";
    case 101:
      return "invalid device ordinal";
    case 802:
      return "system not yet initialized";
    case 803:
      return "system has unsupported display driver / cuda driver combination";
    case 804:
      return "forward compatibility was attempted on non supported HW";
    case 999:
      return "unknown error";
    default:
      return "unrecognized error code";
  }
}
