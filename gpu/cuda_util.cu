#include <chrono>

#include "cuda_util.h"

namespace gdgpu {

std::string cuda_error(const char* what, cudaError_t rc) {
  const char* text = cudaGetErrorString(rc);
  const char* name = cudaGetErrorName(rc);
  std::string s = what;
  s += ": ";
  s += text ? text : "unknown error";
  s += " (";
  s += name ? name : "cudaError";
  s += ")";
  return s;
}

bool is_sticky(cudaError_t rc) {
  switch (rc) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
    case cudaErrorNvlinkUncorrectable:
      return true;
    default:
      return false;
  }
}

EventTimer::~EventTimer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

cudaError_t EventTimer::start(cudaStream_t s) {
  if (!start_) {
    if (cudaError_t rc = cudaEventCreate(&start_); rc != cudaSuccess) {
      start_ = nullptr;
      return rc;
    }
  }
  if (!stop_) {
    if (cudaError_t rc = cudaEventCreate(&stop_); rc != cudaSuccess) {
      stop_ = nullptr;
      return rc;
    }
  }
  ms_ = 0;
  return cudaEventRecord(start_, s);
}

cudaError_t EventTimer::stop(cudaStream_t s) {
  if (!start_ || !stop_) return cudaErrorInvalidResourceHandle;
  if (cudaError_t rc = cudaEventRecord(stop_, s); rc != cudaSuccess) return rc;
  if (cudaError_t rc = cudaEventSynchronize(stop_); rc != cudaSuccess) return rc;
  float ms = 0;
  if (cudaError_t rc = cudaEventElapsedTime(&ms, start_, stop_); rc != cudaSuccess) return rc;
  ms_ = ms;
  return cudaSuccess;
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace gdgpu
