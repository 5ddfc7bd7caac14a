// Small CUDA runtime helpers shared by the helper's tests: error strings,
// RAII buffers (freed on every path), event timing, a wall clock.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "patterns.h"  // mix64, GD_HD

namespace gdgpu {

// "cudaMalloc: out of memory (cudaErrorMemoryAllocation)"
std::string cuda_error(const char* what, cudaError_t rc);

// True for errors after which the context is lost (every later call fails):
// illegal address, launch failure, ECC uncorrectable, hardware stack error,
// illegal instruction, misaligned address, invalid pc, ...
bool is_sticky(cudaError_t rc);

// Device memory for count elements of T; cudaFree in the destructor.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  // Frees what it held first; on failure holds nothing.
  cudaError_t alloc(size_t count) {
    reset();
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, count * sizeof(T));
    if (rc != cudaSuccess) return rc;
    ptr_ = static_cast<T*>(p);
    count_ = count;
    return cudaSuccess;
  }
  void reset() {
    if (ptr_) cudaFree(ptr_);  // an error here has nowhere to go; the context may be lost
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() { return ptr_; }
  const T* get() const { return ptr_; }
  size_t count() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// Pinned (page-locked) host memory, portable across contexts; cudaFreeHost
// in the destructor. Allocate it under a CpuPin for NUMA-local pages.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }

  cudaError_t alloc(size_t bytes) {
    reset();
    void* p = nullptr;
    const cudaError_t rc = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (rc != cudaSuccess) return rc;
    ptr_ = p;
    bytes_ = bytes;
    return cudaSuccess;
  }
  void reset() {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() { return ptr_; }
  const void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// GPU time between start() and stop() on a stream, from a pair of events
// created on first use (on the current device) and destroyed with it.
class EventTimer {
 public:
  EventTimer() = default;
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  cudaError_t start(cudaStream_t s = 0);
  // Records the stop event and waits for it; ms() is valid after success.
  cudaError_t stop(cudaStream_t s = 0);
  double ms() const { return ms_; }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  double ms_ = 0;
};

// A monotonic wall clock in ms (steady_clock), for duration loops.
double now_ms();

}  // namespace gdgpu
