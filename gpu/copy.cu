// Level 1 and the bandwidth tests: context, a small verified kernel, and
// host<->device / device<->device copies, verified (README.md "Levels").
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "emit.h"
#include "helper.h"

namespace gdgpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kLevel1CopyBytes = 64 * kMiB;
constexpr size_t kMaxCopyBytes = 1024 * kMiB;  // >> any L2, so d2d measures HBM
constexpr size_t kMinHostCopyBytes = 64 * kMiB;
constexpr int kThreads = 256;

// A grid that fills the GPU for grid-stride loops.
unsigned blocks_for(const Gpu& gpu, size_t n) {
  const size_t want = (n + kThreads - 1) / kThreads;
  const size_t cap = static_cast<size_t>(std::max(gpu.multiprocessors, 1)) * 8;
  return static_cast<unsigned>(std::max<size_t>(1, std::min(want, cap)));
}

// A failed CUDA call: its message, and whether the GPU is still usable.
struct Failure {
  std::string message;
  bool sticky = false;
};

Failure failure(const char* what, cudaError_t rc) { return {cuda_error(what, rc), is_sticky(rc)}; }

// cudaGetLastError after a launch, then the kernel's own errors.
cudaError_t launch_status(cudaStream_t s) {
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) return rc;
  return cudaStreamSynchronize(s);
}

class Stream {
 public:
  Stream() = default;
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaError_t create() { return cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

void emit_simple_result(const char* test, const Gpu& gpu, const char* status,
                        const std::string& message, double duration_ms) {
  Line line("result");
  line.set("test", test).set("gpu", gpu.bus_id).set("status", status);
  if (!message.empty()) line.set("message", message);
  line.set("duration_ms", duration_ms).send();
}

// ---- kernel test ----------------------------------------------------------

GD_HD inline uint32_t kernel_value(uint64_t seed, uint64_t i) {
  return static_cast<uint32_t>(mix64(seed, i) >> 32);
}

__global__ void fill_values(uint32_t* out, size_t n, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = kernel_value(seed, i);
}

// ---- copies ---------------------------------------------------------------

// The copy tests' data: word i of a buffer holds copy_word(seed, i).
GD_HD inline uint64_t copy_word(uint64_t seed, uint64_t i) {
  return mix64(seed ^ 0xc0b1c0b1ULL, i);
}

__global__ void count_copy_mismatches(const uint64_t* w, size_t n, uint64_t seed,
                                      unsigned long long* mismatches) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    if (w[i] != copy_word(seed, i)) ++bad;
  if (bad) atomicAdd(mismatches, bad);
}

__global__ void fill_copy_words(uint64_t* w, size_t n, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    w[i] = copy_word(seed, i);
}

void fill_host(uint64_t* w, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) w[i] = copy_word(seed, i);
}

int64_t count_host_mismatches(const uint64_t* w, size_t n, uint64_t seed) {
  int64_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += w[i] != copy_word(seed, i);
  return bad;
}

struct CopyBuffers {
  DeviceBuffer<uint64_t> src;  // h2d destination, d2h and d2d source
  DeviceBuffer<uint64_t> dst;  // d2d destination
  PinnedBuffer host_src;       // h2d source
  PinnedBuffer host_dst;       // d2h destination
  size_t device_bytes = 0;
  size_t host_bytes = 0;
  DeviceBuffer<unsigned long long> counter;
};

struct CopyOutcome {
  explicit CopyOutcome(const char* d) : direction(d) {}
  const char* direction;
  std::string status = "pass";
  std::string message;
  uint64_t bytes = 0;
  double bytes_per_s = 0;
  bool verified = false;
  int64_t mismatches = 0;
  double duration_ms = 0;
};

void emit_copy(const Gpu& gpu, const CopyOutcome& c) {
  Line line("result");
  line.set("test", "copy").set("gpu", gpu.bus_id).set("direction", c.direction);
  line.set("status", c.status);
  if (!c.message.empty()) line.set("message", c.message);
  line.set("bytes", c.bytes)
      .set("bytes_per_s", c.bytes_per_s)
      .set("verified", c.verified)
      .set("mismatches", c.mismatches)
      .set("duration_ms", c.duration_ms)
      .send();
}

// Device buffer words that do not hold the copy pattern.
cudaError_t device_mismatches(const Gpu& gpu, CopyBuffers& b, const uint64_t* w, size_t n,
                              uint64_t seed, cudaStream_t s, int64_t* out) {
  cudaError_t rc = cudaMemsetAsync(b.counter.get(), 0, sizeof(unsigned long long), s);
  if (rc != cudaSuccess) return rc;
  count_copy_mismatches<<<blocks_for(gpu, n), kThreads, 0, s>>>(w, n, seed, b.counter.get());
  if ((rc = launch_status(s)) != cudaSuccess) return rc;
  unsigned long long bad = 0;
  rc = cudaMemcpy(&bad, b.counter.get(), sizeof(bad), cudaMemcpyDeviceToHost);
  *out = static_cast<int64_t>(bad);
  return rc;
}

// One direction: a warm-up copy, poison the destination, copy `bytes`
// repeatedly for budget_ms (once at level 1), keep the best timed batch's
// bandwidth, then verify the destination. Errors land in c (status error); returns false
// when the error is sticky.
bool run_direction(const Gpu& gpu, const HelperOptions& opt, CopyBuffers& b, cudaStream_t s,
                   cudaMemcpyKind kind, CopyOutcome& c, double budget_ms, uint64_t seed) {
  const double t0 = now_ms();
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
  if (kind == cudaMemcpyHostToDevice) {
    dst = b.src.get();
    src = b.host_src.get();
    bytes = b.host_bytes;
  } else if (kind == cudaMemcpyDeviceToHost) {
    dst = b.host_dst.get();
    src = b.src.get();
    bytes = b.host_bytes;
  } else {
    dst = b.dst.get();
    src = b.src.get();
    bytes = b.device_bytes;
  }
  c.bytes = bytes;
  // d2d reads and writes every byte: 2 x bytes per copy (bandwidthTest's count).
  const double moved_per_copy =
      static_cast<double>(bytes) * (kind == cudaMemcpyDeviceToDevice ? 2 : 1);
  auto fail = [&](const char* what, cudaError_t rc) {
    c.status = "error";
    c.message = cuda_error(what, rc);
    c.duration_ms = now_ms() - t0;
    return !is_sticky(rc);
  };
  EventTimer timer;
  // Warm-up copy (also the only untimed one), then timed batches.
  cudaError_t rc = cudaSuccess;
  if ((rc = cudaMemcpyAsync(dst, src, bytes, kind, s)) != cudaSuccess)
    return fail("cudaMemcpyAsync", rc);
  if ((rc = cudaStreamSynchronize(s)) != cudaSuccess) return fail("cudaMemcpyAsync", rc);
  // Poison the destination after the warm-up, which already wrote the right
  // data there: only the timed copies can undo it, so timed copies that
  // silently did nothing fail the check.
  if (kind == cudaMemcpyDeviceToHost) {
    std::memset(dst, 0xa5, bytes);
  } else if ((rc = cudaMemsetAsync(dst, 0xa5, bytes, s)) != cudaSuccess) {
    return fail("cudaMemsetAsync", rc);
  }
  int per_batch = 1;
  double best = 0;
  int batches = 0;
  const int min_batches = opt.level >= 2 ? 3 : 1;
  do {
    if ((rc = timer.start(s)) != cudaSuccess) return fail("cudaEventRecord", rc);
    for (int i = 0; i < per_batch; ++i)
      if ((rc = cudaMemcpyAsync(dst, src, bytes, kind, s)) != cudaSuccess)
        return fail("cudaMemcpyAsync", rc);
    if ((rc = timer.stop(s)) != cudaSuccess) return fail("cudaMemcpyAsync", rc);
    ++batches;
    if (timer.ms() > 0) best = std::max(best, moved_per_copy * per_batch / (timer.ms() / 1000));
    // Batches of at least 50 ms, so launch gaps and event resolution do not
    // count. The reported figure is the best batch (a steady-state peak).
    if (timer.ms() > 0 && timer.ms() < 50 && per_batch < 4096) per_batch *= 2;
  } while (batches < min_batches || (opt.level >= 2 && now_ms() - t0 < budget_ms));
  c.bytes_per_s = best;
  // Verify what the last copy left.
  const size_t words = bytes / sizeof(uint64_t);
  if (kind == cudaMemcpyDeviceToHost) {
    c.mismatches = count_host_mismatches(static_cast<const uint64_t*>(dst), words, seed);
  } else if ((rc = device_mismatches(gpu, b, static_cast<const uint64_t*>(dst), words, seed, s,
                                     &c.mismatches)) != cudaSuccess) {
    return fail("verify", rc);
  }
  c.verified = c.mismatches == 0;
  if (c.mismatches > 0) {
    c.status = "fail";
    c.message = std::to_string(c.mismatches) + " of " + std::to_string(words) +
                " 64-bit words arrived wrong";
  }
  c.duration_ms = now_ms() - t0;
  return true;
}

}  // namespace

bool run_context_test(const Gpu& gpu, const HelperOptions&) {
  emit_start("context", gpu.bus_id);
  const double t0 = now_ms();
  auto fail = [&](const char* what, cudaError_t rc) {
    emit_simple_result("context", gpu, "error", cuda_error(what, rc), now_ms() - t0);
    return false;  // no context: nothing else can run on this GPU
  };
  cudaError_t rc = cudaSetDevice(gpu.cuda_index);
  if (rc != cudaSuccess) return fail("cudaSetDevice", rc);
  if ((rc = cudaFree(nullptr)) != cudaSuccess) return fail("cudaFree(0)", rc);
  {
    DeviceBuffer<uint8_t> probe;
    if ((rc = probe.alloc(kMiB)) != cudaSuccess) return fail("cudaMalloc", rc);
    if ((rc = cudaMemset(probe.get(), 0, probe.bytes())) != cudaSuccess)
      return fail("cudaMemset", rc);
    if ((rc = cudaDeviceSynchronize()) != cudaSuccess) return fail("cudaDeviceSynchronize", rc);
  }
  emit_simple_result("context", gpu, "pass", "", now_ms() - t0);
  return true;
}

bool run_kernel_test(const Gpu& gpu, const HelperOptions& opt) {
  emit_start("kernel", gpu.bus_id);
  const double t0 = now_ms();
  auto fail = [&](const char* what, cudaError_t rc) {
    emit_simple_result("kernel", gpu, "error", cuda_error(what, rc), now_ms() - t0);
    return !is_sticky(rc);
  };
  constexpr size_t kN = size_t{1} << 20;
  cudaError_t rc = cudaSetDevice(gpu.cuda_index);
  if (rc != cudaSuccess) return fail("cudaSetDevice", rc);
  DeviceBuffer<uint32_t> out;
  if ((rc = out.alloc(kN)) != cudaSuccess) return fail("cudaMalloc", rc);
  fill_values<<<blocks_for(gpu, kN), kThreads>>>(out.get(), kN, opt.seed);
  if ((rc = launch_status(0)) != cudaSuccess) return fail("fill kernel", rc);
  std::vector<uint32_t> host(kN);
  if ((rc = cudaMemcpy(host.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost)) != cudaSuccess)
    return fail("cudaMemcpy", rc);
  size_t wrong = 0;
  for (size_t i = 0; i < kN; ++i) wrong += host[i] != kernel_value(opt.seed, i);
  const double ms = now_ms() - t0;
  if (wrong) {
    emit_simple_result("kernel", gpu, "fail",
                       std::to_string(wrong) + " of " + std::to_string(kN) + " elements wrong", ms);
  } else {
    emit_simple_result("kernel", gpu, "pass", "", ms);
  }
  return true;
}

bool run_copy_tests(const Gpu& gpu, const HelperOptions& opt) {
  static const char* const kDirections[] = {"h2d", "d2h", "d2d"};
  const double t0 = now_ms();
  // One error for all three directions when the buffers cannot be set up.
  auto fail_all = [&](const Failure& f) {
    for (const char* d : kDirections) {
      emit_start("copy", gpu.bus_id, "direction", d);
      CopyOutcome c(d);
      c.status = "error";
      c.message = f.message;
      c.duration_ms = now_ms() - t0;
      emit_copy(gpu, c);
    }
    return !f.sticky;
  };
  cudaError_t rc = cudaSetDevice(gpu.cuda_index);
  if (rc != cudaSuccess) return fail_all(failure("cudaSetDevice", rc));
  size_t free_bytes = 0, total_bytes = 0;
  if ((rc = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
    return fail_all(failure("cudaMemGetInfo", rc));

  CopyBuffers b;
  // Level 1: 64 MiB. Level 2+: 1 GiB (well past the L2 cache) when a quarter
  // of the free memory allows it, else that quarter; 2 MiB granules.
  size_t bytes = kLevel1CopyBytes;
  if (opt.level >= 2) bytes = std::min(kMaxCopyBytes, free_bytes / 4) & ~(2 * kMiB - 1);
  if (bytes < kMiB || 2 * bytes > free_bytes)
    return fail_all({"too little free GPU memory for the copy test: " + std::to_string(free_bytes) +
                         " bytes free",
                     false});
  if ((rc = b.src.alloc(bytes / sizeof(uint64_t))) != cudaSuccess ||
      (rc = b.dst.alloc(bytes / sizeof(uint64_t))) != cudaSuccess ||
      (rc = b.counter.alloc(1)) != cudaSuccess)
    return fail_all(failure("cudaMalloc", rc));
  b.device_bytes = bytes;
  {
    // Pinned host pages placed on the GPU's NUMA node: halve until the host
    // can lock them (a small host, a low memlock limit).
    CpuPin pin(gpu.cpus);
    size_t host = bytes;
    for (;;) {
      rc = b.host_src.alloc(host);
      if (rc == cudaSuccess) rc = b.host_dst.alloc(host);
      if (rc == cudaSuccess) break;
      b.host_src.reset();
      cudaGetLastError();
      if (rc != cudaErrorMemoryAllocation || host / 2 < std::min(kMinHostCopyBytes, bytes))
        return fail_all(failure("cudaHostAlloc", rc));
      host /= 2;
    }
    b.host_bytes = host;
  }
  Stream stream;
  if ((rc = stream.create()) != cudaSuccess) return fail_all(failure("cudaStreamCreate", rc));
  const uint64_t seed = opt.seed;
  fill_host(static_cast<uint64_t*>(b.host_src.get()), b.host_bytes / sizeof(uint64_t), seed);

  // h2d writes the pattern into src and is checked there. Before d2h and
  // d2d a kernel rewrites src with it, so each direction is checked on its
  // own (an h2d error does not show up again as a d2h one).
  const double budget_ms = opt.duration_s * 1000 / 3;
  bool usable = true;
  for (int d = 0; d < 3 && usable; ++d) {
    emit_start("copy", gpu.bus_id, "direction", kDirections[d]);
    CopyOutcome c(kDirections[d]);
    const cudaMemcpyKind kind = d == 0   ? cudaMemcpyHostToDevice
                                : d == 1 ? cudaMemcpyDeviceToHost
                                         : cudaMemcpyDeviceToDevice;
    if (d > 0) {
      fill_copy_words<<<blocks_for(gpu, b.src.count()), kThreads, 0, stream.get()>>>(
          b.src.get(), b.src.count(), seed);
      if ((rc = launch_status(stream.get())) != cudaSuccess) {
        const Failure f = failure("fill kernel", rc);
        c.status = "error";
        c.message = f.message;
        emit_copy(gpu, c);
        usable = !f.sticky;
        continue;
      }
    }
    usable = run_direction(gpu, opt, b, stream.get(), kind, c, budget_ms, seed);
    emit_copy(gpu, c);
  }
  return usable;
}

}  // namespace gdgpu
