// Peer-to-peer (level 3): for every ordered pair of GPUs, cudaMemcpyPeerAsync
// bandwidth (large copies, unidirectional) and latency (4-byte copies), the
// arrived data verified. Peer access is enabled where the driver allows it;
// where it does not, the copy is still measured: the driver stages it through
// host memory, which is what NCCL would suffer, and the result says
// access: false.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "emit.h"
#include "gemm_check.h"  // CudaStream
#include "helper.h"

namespace gdgpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kCopyBytes = 256 * kMiB;
constexpr double kMaxPairMs = 2000;
constexpr int kMinCopies = 3;
constexpr int kLatencyCopies = 100;
constexpr double kBatchMs = 100;

// Word i of the source: random, so a copy of the wrong range or a stale
// destination cannot match by chance.
__device__ inline uint32_t p2p_word(uint64_t seed, size_t i) {
  return static_cast<uint32_t>(mix64(seed, i));
}

__global__ void p2p_fill_kernel(uint32_t* p, size_t n, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = p2p_word(seed, i);
}

__global__ void p2p_verify_kernel(const uint32_t* p, size_t n, uint64_t seed,
                                  unsigned long long* mismatches) {
  unsigned long long local = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    local += p[i] != p2p_word(seed, i) ? 1 : 0;
  if (local) atomicAdd(mismatches, local);
}

// Peer access from `from` to `to`'s memory, enabled for the life of the
// object when the driver allows it and it was not already on; disabled
// again after, so later pairs and NCCL start from the driver's state.
class PeerAccess {
 public:
  PeerAccess() = default;
  ~PeerAccess() {
    if (enabled_ && cudaSetDevice(from_) == cudaSuccess) cudaDeviceDisablePeerAccess(to_);
  }
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;

  // Enables it (from `from`, which becomes the current device); access
  // already on counts as success and is left on.
  cudaError_t enable(int from, int to) {
    from_ = from;
    to_ = to;
    if (cudaError_t rc = cudaSetDevice(from); rc != cudaSuccess) return rc;
    const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
    if (rc == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();  // the runtime keeps it as the last error: clear it
      return cudaSuccess;
    }
    if (rc == cudaSuccess) enabled_ = true;
    return rc;
  }

 private:
  int from_ = -1, to_ = -1;
  bool enabled_ = false;
};

struct PairFigures {
  bool access = false;
  double bytes_per_s = 0;
  double latency_us = 0;
  bool verified = false;
  int64_t mismatches = 0;
  uint64_t bytes = 0;
};

bool cuda_ok(cudaError_t rc, const char* what, std::string* err) {
  if (rc == cudaSuccess) return true;
  *err = cuda_error(what, rc);
  return false;
}

bool measure_pair(const Gpu& src, const Gpu& dst, const HelperOptions& opt, double budget_ms,
                  PairFigures* fig, std::string* err) {
  int can = 0, back = 0;
  if (!cuda_ok(cudaDeviceCanAccessPeer(&can, src.cuda_index, dst.cuda_index),
               "cudaDeviceCanAccessPeer", err) ||
      !cuda_ok(cudaDeviceCanAccessPeer(&back, dst.cuda_index, src.cuda_index),
               "cudaDeviceCanAccessPeer", err))
    return false;
  fig->access = can != 0;
  // Both directions, as cuda-samples' p2pBandwidthLatencyTest does: the
  // driver may drive the copy from either side's engines.
  PeerAccess forward, backward;
  if (can &&
      !cuda_ok(forward.enable(src.cuda_index, dst.cuda_index), "cudaDeviceEnablePeerAccess", err))
    return false;
  if (back &&
      !cuda_ok(backward.enable(dst.cuda_index, src.cuda_index), "cudaDeviceEnablePeerAccess", err))
    return false;

  // Size: 256 MiB, less when either side is short of memory.
  size_t free_src = 0, free_dst = 0, total = 0;
  if (!cuda_ok(cudaSetDevice(dst.cuda_index), "cudaSetDevice", err) ||
      !cuda_ok(cudaMemGetInfo(&free_dst, &total), "cudaMemGetInfo", err) ||
      !cuda_ok(cudaSetDevice(src.cuda_index), "cudaSetDevice", err) ||
      !cuda_ok(cudaMemGetInfo(&free_src, &total), "cudaMemGetInfo", err))
    return false;
  const size_t bytes = std::min({kCopyBytes, free_src / 4, free_dst / 4}) / kMiB * kMiB;
  if (bytes == 0) {
    *err = "too little free memory";
    return false;
  }
  const size_t words = bytes / sizeof(uint32_t);
  fig->bytes = bytes;

  // Device buffers of each side, allocated with that side current; the
  // destination's verify counter with it.
  DeviceBuffer<uint32_t> to;
  DeviceBuffer<unsigned long long> counter;
  if (!cuda_ok(cudaSetDevice(dst.cuda_index), "cudaSetDevice", err) ||
      !cuda_ok(to.alloc(words), "cudaMalloc", err) ||
      !cuda_ok(counter.alloc(1), "cudaMalloc", err) ||
      !cuda_ok(cudaMemset(to.get(), 0, bytes), "cudaMemset", err) ||
      !cuda_ok(cudaMemset(counter.get(), 0, counter.bytes()), "cudaMemset", err) ||
      !cuda_ok(cudaDeviceSynchronize(), "cudaMemset", err))
    return false;
  DeviceBuffer<uint32_t> from;
  CudaStream stream;  // on the source: its engines push the copy
  EventTimer timer;   // its events on the source, created by its first start()
  if (!cuda_ok(cudaSetDevice(src.cuda_index), "cudaSetDevice", err) ||
      !cuda_ok(from.alloc(words), "cudaMalloc", err) ||
      !cuda_ok(stream.create(), "cudaStreamCreate", err))
    return false;
  const cudaStream_t s = stream.get();
  p2p_fill_kernel<<<1024, 256, 0, s>>>(from.get(), words, opt.seed);
  if (!cuda_ok(cudaGetLastError(), "fill kernel", err)) return false;
  auto copy = [&](size_t n) {
    return cuda_ok(cudaMemcpyPeerAsync(to.get(), dst.cuda_index, from.get(), src.cuda_index, n, s),
                   "cudaMemcpyPeerAsync", err);
  };
  // Warm-up (peer mappings, staging buffers), then one copy timed alone
  // sizes the batches.
  if (!copy(bytes) || !cuda_ok(cudaStreamSynchronize(s), "cudaMemcpyPeerAsync", err) ||
      !cuda_ok(timer.start(s), "cudaEventRecord", err) || !copy(bytes) ||
      !cuda_ok(timer.stop(s), "cudaEventSynchronize", err))
    return false;
  const int batch = static_cast<int>(
      std::clamp(std::min(kBatchMs, budget_ms / 4) / std::max(timer.ms(), 1e-3), 1.0, 1000.0));
  double timed_ms = 0;
  int64_t copies = 0;
  const double end = now_ms() + budget_ms;
  while (copies < kMinCopies || now_ms() < end) {
    if (!cuda_ok(timer.start(s), "cudaEventRecord", err)) return false;
    for (int i = 0; i < batch; ++i)
      if (!copy(bytes)) return false;
    if (!cuda_ok(timer.stop(s), "cudaEventSynchronize", err)) return false;
    timed_ms += timer.ms();
    copies += batch;
  }
  fig->bytes_per_s =
      timed_ms > 0 ? static_cast<double>(bytes) * static_cast<double>(copies) / (timed_ms / 1e3)
                   : 0;

  // Latency: each 4-byte copy timed alone (the first word again: the
  // destination keeps its content).
  std::vector<double> us;
  for (int i = 0; i < kLatencyCopies; ++i) {
    if (!cuda_ok(timer.start(s), "cudaEventRecord", err) || !copy(sizeof(uint32_t)) ||
        !cuda_ok(timer.stop(s), "cudaEventSynchronize", err))
      return false;
    us.push_back(timer.ms() * 1e3);
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  fig->latency_us = us[us.size() / 2];

  // Verify on the destination, after the source stream finished the copies.
  unsigned long long bad = 0;
  if (!cuda_ok(cudaStreamSynchronize(s), "cudaStreamSynchronize", err) ||
      !cuda_ok(cudaSetDevice(dst.cuda_index), "cudaSetDevice", err))
    return false;
  p2p_verify_kernel<<<1024, 256>>>(to.get(), words, opt.seed, counter.get());
  if (!cuda_ok(cudaGetLastError(), "verify kernel", err) ||
      !cuda_ok(cudaMemcpy(&bad, counter.get(), sizeof bad, cudaMemcpyDeviceToHost), "cudaMemcpy",
               err))
    return false;
  fig->verified = true;
  fig->mismatches = static_cast<int64_t>(bad);
  // The source current again: its stream and events are destroyed next.
  return cuda_ok(cudaSetDevice(src.cuda_index), "cudaSetDevice", err);
}

void run_pair(const Gpu& src, const Gpu& dst, const HelperOptions& opt, double budget_ms) {
  // The pair, not only the source: a hang is pinned to the link that hung.
  Line("start").set("test", "p2p").set("src", src.bus_id).set("dst", dst.bus_id).send();
  PairFigures fig;
  std::string err;
  const bool ok = measure_pair(src, dst, opt, budget_ms, &fig, &err);
  Line line("result");
  line.set("test", "p2p").set("src", src.bus_id).set("dst", dst.bus_id).set("access", fig.access);
  if (!ok) {
    line.set("status", "error").set("message", err);
  } else if (fig.mismatches > 0) {
    line.set("status", "fail")
        .set("message", std::to_string(fig.mismatches) + " of " + std::to_string(fig.bytes / 4) +
                            " words differed at the destination");
  } else {
    line.set("status", "pass");
  }
  line.set("bytes", fig.bytes)
      .set("bytes_per_s", fig.bytes_per_s)
      .set("latency_us", fig.latency_us)
      .set("verified", fig.verified)
      .set("mismatches", fig.mismatches)
      .send();
}

}  // namespace

void run_p2p_tests(const std::vector<Gpu>& gpus, const HelperOptions& opt) {
  if (gpus.size() < 2) {
    Line line("result");
    line.set("test", "p2p");
    if (!gpus.empty()) line.set("src", gpus[0].bus_id);
    line.set("status", "skip").set("message", "one GPU").send();
    return;
  }
  const double pairs = static_cast<double>(gpus.size() * (gpus.size() - 1));
  const double budget_ms = std::min(kMaxPairMs, opt.duration_s * 1e3 / pairs);
  for (const Gpu& src : gpus)
    for (const Gpu& dst : gpus)
      if (&src != &dst) run_pair(src, dst, opt, budget_ms);
}

}  // namespace gdgpu
