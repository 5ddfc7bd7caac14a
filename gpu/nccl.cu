// NCCL (level 3), one process driving all tested GPUs:
//  - "nccl": all-reduce (sum, float) over sizes 1 MiB .. 1 GiB, bus bandwidth
//    by nccl-tests' convention, every result element verified;
//  - "scaling": a data-parallel step (the same GEMM work on every GPU, then
//    an all-reduce of a 256 MiB gradient) on all GPUs against the compute
//    alone on one: speedup = n x one / all.
// A hung NCCL (peer-to-peer broken) is the parent's deadline's business; the
// "start" line before each phase says which one hung.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "emit.h"
#include "gemm_check.h"
#include "helper.h"

namespace gdgpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kSizes[] = {1 * kMiB, 8 * kMiB, 64 * kMiB, 256 * kMiB, 1024 * kMiB};
constexpr int kMinIters = 5;
constexpr int kMaxIters = 1000;
constexpr size_t kGradientBytes = 256 * kMiB;
constexpr double kStepMs = 50;  // the scaling step's compute, on the first GPU
constexpr int kSteps = 7;       // timed steps per measurement (median)
constexpr int kMaxDim = 8192;
constexpr int kDimStep = 1024;

struct Fault {
  std::string message;
};

bool cuda_ok(cudaError_t rc, const char* what, Fault* f) {
  if (rc == cudaSuccess) return true;
  f->message = cuda_error(what, rc);
  return false;
}

bool nccl_ok(ncclResult_t rc, const char* what, Fault* f) {
  if (rc == ncclSuccess) return true;
  f->message = std::string(what) + ": " + ncclGetErrorString(rc);
  // NCCL's own detail ("Cuda failure 'out of memory'"), on one line.
  const char* last = ncclGetLastError(nullptr);
  if (last && *last) {
    std::string detail = last;
    for (char& c : detail)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    f->message += " (" + detail + ")";
  }
  return false;
}

bool cublas_ok(cublasStatus_t st, const char* what, Fault* f) {
  if (st == CUBLAS_STATUS_SUCCESS) return true;
  f->message = std::string(what) + ": " + cublasGetStatusName(st);
  return false;
}

// The communicators of ncclCommInitAll; destroyed at the end, aborted when
// an operation failed (destroying waits for outstanding work that may never
// finish).
class Comms {
 public:
  explicit Comms(size_t n) : comms_(n, nullptr) {}
  ~Comms() {
    for (ncclComm_t c : comms_) {
      if (!c) continue;
      if (failed_)
        ncclCommAbort(c);
      else
        ncclCommDestroy(c);
    }
  }
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  ncclComm_t* data() { return comms_.data(); }
  ncclComm_t operator[](size_t i) const { return comms_[i]; }
  void set_failed() { failed_ = true; }

 private:
  std::vector<ncclComm_t> comms_;
  bool failed_ = false;
};

// A pair of events on one device, destroyed with the object.
class EventPair {
 public:
  EventPair() = default;
  ~EventPair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  // On the current device.
  cudaError_t create() {
    if (cudaError_t rc = cudaEventCreate(&start); rc != cudaSuccess) return rc;
    return cudaEventCreate(&stop);
  }
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

// One GPU's share: its stream, events, buffers and (scaling) cuBLAS handle.
struct Rank {
  int dev = -1;
  CudaStream stream;
  EventPair events;
  CublasHandle cublas;  // after the stream: destroyed before it
  DeviceBuffer<float> send, recv;
  DeviceBuffer<unsigned long long> mismatches;
  DeviceBuffer<unsigned char> a, b, c;  // the scaling GEMM's matrices
  DeviceBuffer<float> gradient;
  explicit Rank(int d) : dev(d) {}
  // Frees its resources with its device current.
  ~Rank() { cudaSetDevice(dev); }
};

using Ranks = std::vector<std::unique_ptr<Rank>>;

__global__ void fill_float_kernel(float* p, size_t n, float v) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = v;
}

__global__ void count_not_equal_kernel(const float* p, size_t n, float expected,
                                       unsigned long long* mismatches) {
  unsigned long long local = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    local += p[i] == expected ? 0 : 1;  // NaN too
  if (local) atomicAdd(mismatches, local);
}

// One all-reduce (sum, float, count elements) on every rank, in a group as
// one thread driving several GPUs must; ptrs(rank) gives its send and
// receive buffers. ncclGroupEnd runs even when a call in the group failed.
template <class Ptrs>
bool all_reduce(const Ranks& ranks, Comms& comms, size_t count, Ptrs ptrs, Fault* f) {
  bool ok = nccl_ok(ncclGroupStart(), "ncclGroupStart", f);
  if (!ok) {
    comms.set_failed();
    return false;
  }
  for (size_t r = 0; r < ranks.size() && ok; ++r) {
    ok = cuda_ok(cudaSetDevice(ranks[r]->dev), "cudaSetDevice", f);
    if (!ok) break;
    const auto [send, recv] = ptrs(*ranks[r]);
    ok = nccl_ok(
        ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comms[r], ranks[r]->stream.get()),
        "ncclAllReduce", f);
  }
  Fault end;
  if (!nccl_ok(ncclGroupEnd(), "ncclGroupEnd", &end) && ok) {
    ok = false;
    *f = end;
  }
  if (!ok) comms.set_failed();
  return ok;
}

bool sync_all(const Ranks& ranks, Fault* f) {
  for (const auto& r : ranks) {
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cuda_ok(cudaStreamSynchronize(r->stream.get()), "cudaStreamSynchronize", f))
      return false;
  }
  return true;
}

bool min_free_bytes(const Ranks& ranks, size_t* out, Fault* f) {
  size_t least = SIZE_MAX;
  for (const auto& r : ranks) {
    size_t free_bytes = 0, total = 0;
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cuda_ok(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo", f))
      return false;
    least = std::min(least, free_bytes);
  }
  *out = least;
  return true;
}

// `iters` all-reduces of count floats from each rank's send to recv; *ms is
// one's time on the slowest GPU (events on each GPU's stream around all).
bool time_all_reduces(const Ranks& ranks, Comms& comms, size_t count, int iters, double* ms,
                      Fault* f) {
  for (const auto& r : ranks) {
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cuda_ok(cudaEventRecord(r->events.start, r->stream.get()), "cudaEventRecord", f))
      return false;
  }
  auto ptrs = [](Rank& r) { return std::pair<const float*, float*>(r.send.get(), r.recv.get()); };
  for (int i = 0; i < iters; ++i)
    if (!all_reduce(ranks, comms, count, ptrs, f)) return false;
  // All stop events recorded before waiting for any, so none is recorded late.
  for (const auto& r : ranks) {
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cuda_ok(cudaEventRecord(r->events.stop, r->stream.get()), "cudaEventRecord", f))
      return false;
  }
  double slowest = 0;
  for (const auto& r : ranks) {
    float one = 0;
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cuda_ok(cudaEventSynchronize(r->events.stop), "cudaEventSynchronize", f) ||
        !cuda_ok(cudaEventElapsedTime(&one, r->events.start, r->events.stop),
                 "cudaEventElapsedTime", f))
      return false;
    slowest = std::max(slowest, static_cast<double>(one));
  }
  *ms = slowest / iters;
  return true;
}

struct Point {
  uint64_t bytes = 0;
  double time_us = 0;
  double algbw = 0;  // bytes/s
  double busbw = 0;  // bytes/s
};

// The all-reduce sweep. Rank r sends (r + 1) everywhere (exact in float), so
// every received element must be n (n + 1) / 2.
bool run_all_reduce(const Ranks& ranks, Comms& comms, const HelperOptions& opt,
                    std::vector<Point>* points, int64_t* mismatches, Fault* f) {
  const size_t n = ranks.size();
  size_t least = 0;
  if (!min_free_bytes(ranks, &least, f)) return false;
  std::vector<size_t> sizes;
  for (size_t s : kSizes)
    if (2 * s <= least / 4) sizes.push_back(s);  // send + receive buffers
  if (sizes.empty()) {
    f->message = "too little free memory: " + std::to_string(least) + " bytes";
    return false;
  }
  const size_t max_count = sizes.back() / sizeof(float);
  for (size_t r = 0; r < n; ++r) {
    Rank& k = *ranks[r];
    if (!cuda_ok(cudaSetDevice(k.dev), "cudaSetDevice", f) ||
        !cuda_ok(k.send.alloc(max_count), "cudaMalloc", f) ||
        !cuda_ok(k.recv.alloc(max_count), "cudaMalloc", f) ||
        !cuda_ok(k.mismatches.alloc(1), "cudaMalloc", f) ||
        !cuda_ok(cudaMemsetAsync(k.mismatches.get(), 0, k.mismatches.bytes(), k.stream.get()),
                 "cudaMemsetAsync", f))
      return false;
    fill_float_kernel<<<1024, 256, 0, k.stream.get()>>>(k.send.get(), max_count,
                                                        static_cast<float>(r + 1));
    if (!cuda_ok(cudaGetLastError(), "fill kernel", f)) return false;
  }
  const float expected = static_cast<float>(n * (n + 1) / 2);
  const double per_size_ms = opt.duration_s * 1e3 / 2 / static_cast<double>(sizes.size());
  auto ptrs = [](Rank& r) { return std::pair<const float*, float*>(r.send.get(), r.recv.get()); };
  for (size_t bytes : sizes) {
    const size_t count = bytes / sizeof(float);
    // A stale sum from the previous size must not pass for this one.
    for (const auto& r : ranks) {
      if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
          !cuda_ok(cudaMemsetAsync(r->recv.get(), 0, bytes, r->stream.get()), "cudaMemsetAsync", f))
        return false;
    }
    // Warm-up (NCCL sets up its channels and buffers on first use), then
    // one timed alone sizes the run.
    double ms = 0;
    if (!all_reduce(ranks, comms, count, ptrs, f) || !sync_all(ranks, f) ||
        !time_all_reduces(ranks, comms, count, 1, &ms, f))
      return false;
    const int iters = static_cast<int>(
        std::clamp(per_size_ms / std::max(ms, 1e-3), double{kMinIters}, double{kMaxIters}));
    if (!time_all_reduces(ranks, comms, count, iters, &ms, f)) return false;
    for (const auto& r : ranks) {
      if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f)) return false;
      count_not_equal_kernel<<<1024, 256, 0, r->stream.get()>>>(r->recv.get(), count, expected,
                                                                r->mismatches.get());
      if (!cuda_ok(cudaGetLastError(), "verify kernel", f)) return false;
    }
    Point p;
    p.bytes = bytes;
    p.time_us = ms * 1e3;
    p.algbw = static_cast<double>(bytes) / (ms / 1e3);
    p.busbw = p.algbw * 2.0 * static_cast<double>(n - 1) / static_cast<double>(n);
    points->push_back(p);
  }
  *mismatches = 0;
  for (const auto& r : ranks) {
    unsigned long long bad = 0;
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cuda_ok(cudaMemcpyAsync(&bad, r->mismatches.get(), sizeof bad, cudaMemcpyDeviceToHost,
                                 r->stream.get()),
                 "cudaMemcpyAsync", f) ||
        !cuda_ok(cudaStreamSynchronize(r->stream.get()), "cudaStreamSynchronize", f))
      return false;
    *mismatches += static_cast<int64_t>(bad);
  }
  return true;
}

struct Scaling {
  double one_ms = 0;
  double all_ms = 0;
  std::vector<double> per_gpu_ms;
  GemmDtype dtype = GemmDtype::kFp32;
  int dim = 0;
  int gemms_per_step = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The step's compute on one rank: gemms GEMMs, queued on its stream.
bool compute(Rank& r, const Scaling& sc, Fault* f) {
  for (int i = 0; i < sc.gemms_per_step; ++i) {
    if (!cublas_ok(gemm_run(r.cublas.get(), sc.dtype, sc.dim, r.a.get(), r.b.get(), r.c.get()),
                   "cublasGemmEx", f))
      return false;
  }
  return true;
}

bool run_scaling(const Ranks& ranks, Comms& comms, const std::vector<Gpu>& gpus,
                 const HelperOptions& opt, Scaling* sc, Fault* f) {
  int cc = 1000;
  for (const Gpu& g : gpus) cc = std::min(cc, g.cc_major * 10 + g.cc_minor);
  sc->dtype = cc >= 80 ? GemmDtype::kBf16 : cc >= 70 ? GemmDtype::kFp16 : GemmDtype::kFp32;
  const size_t esz = gemm_dtype_bytes(sc->dtype);
  for (const auto& r : ranks) {  // the all-reduce sweep's buffers make room
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f)) return false;
    r->send.reset();
    r->recv.reset();
  }
  size_t least = 0;
  if (!min_free_bytes(ranks, &least, f)) return false;
  for (int dim = kMaxDim; dim >= kDimStep && sc->dim == 0; dim -= kDimStep) {
    const size_t matrix = static_cast<size_t>(dim) * static_cast<size_t>(dim) * esz;
    if (3 * matrix + kGradientBytes <= least / 4) sc->dim = dim;
  }
  if (sc->dim == 0) {
    f->message = "too little free memory: " + std::to_string(least) + " bytes";
    return false;
  }
  const size_t elems = static_cast<size_t>(sc->dim) * static_cast<size_t>(sc->dim);
  const size_t grad_count = kGradientBytes / sizeof(float);
  for (const auto& r : ranks) {
    const cudaStream_t s = r->stream.get();
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) ||
        !cublas_ok(r->cublas.create(), "cublasCreate", f) ||
        !cublas_ok(cublasSetStream(r->cublas.get(), s), "cublasSetStream", f) ||
        !cuda_ok(r->a.alloc(elems * esz), "cudaMalloc", f) ||
        !cuda_ok(r->b.alloc(elems * esz), "cudaMalloc", f) ||
        !cuda_ok(r->c.alloc(elems * esz), "cudaMalloc", f) ||
        !cuda_ok(r->gradient.alloc(grad_count), "cudaMalloc", f) ||
        // Zeros: their sum stays zero however often it is reduced in place.
        !cuda_ok(cudaMemsetAsync(r->gradient.get(), 0, kGradientBytes, s), "cudaMemsetAsync", f) ||
        !cuda_ok(gemm_fill(r->a.get(), elems, sc->dtype, opt.seed, s), "fill A", f) ||
        !cuda_ok(gemm_fill(r->b.get(), elems, sc->dtype, opt.seed + 0x100000001ULL, s), "fill B",
                 f))
      return false;
  }
  if (!sync_all(ranks, f)) return false;

  // GEMMs per step, from the first GPU (warmed up): about kStepMs.
  Rank& first = *ranks[0];
  EventTimer timer;
  sc->gemms_per_step = 1;
  if (!cuda_ok(cudaSetDevice(first.dev), "cudaSetDevice", f) || !compute(first, *sc, f) ||
      !cuda_ok(cudaStreamSynchronize(first.stream.get()), "cudaStreamSynchronize", f))
    return false;
  sc->gemms_per_step = 3;
  if (!cuda_ok(timer.start(first.stream.get()), "cudaEventRecord", f) || !compute(first, *sc, f) ||
      !cuda_ok(timer.stop(first.stream.get()), "cudaEventSynchronize", f))
    return false;
  const double gemm_ms = std::max(timer.ms() / 3, 1e-3);
  sc->gemms_per_step = static_cast<int>(std::clamp(std::round(kStepMs / gemm_ms), 1.0, 1000.0));

  // Each GPU alone (the others idle): one warm-up step, then the median of
  // kSteps, wall time to the stream's end.
  for (const auto& r : ranks) {
    std::vector<double> ms;
    if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f)) return false;
    for (int i = 0; i <= kSteps; ++i) {
      const double t0 = now_ms();
      if (!compute(*r, *sc, f) ||
          !cuda_ok(cudaStreamSynchronize(r->stream.get()), "cudaStreamSynchronize", f))
        return false;
      if (i > 0) ms.push_back(now_ms() - t0);
    }
    sc->per_gpu_ms.push_back(median(ms));
  }
  sc->one_ms = sc->per_gpu_ms[0];

  // All GPUs: compute, then the gradient's all-reduce queued behind it on
  // each stream (no overlap), wall time until every GPU is done.
  auto grad = [](Rank& r) {
    return std::pair<const float*, float*>(r.gradient.get(), r.gradient.get());
  };
  std::vector<double> ms;
  for (int i = 0; i <= kSteps; ++i) {
    const double t0 = now_ms();
    for (const auto& r : ranks) {
      if (!cuda_ok(cudaSetDevice(r->dev), "cudaSetDevice", f) || !compute(*r, *sc, f)) return false;
    }
    if (!all_reduce(ranks, comms, grad_count, grad, f) || !sync_all(ranks, f)) return false;
    if (i > 0) ms.push_back(now_ms() - t0);
  }
  sc->all_ms = median(ms);
  return true;
}

}  // namespace

void run_nccl_tests(const std::vector<Gpu>& gpus, const HelperOptions& opt) {
  std::vector<std::string> ids;
  for (const Gpu& g : gpus) ids.push_back(g.bus_id);
  if (gpus.size() < 2) {
    for (const char* test : {"nccl", "scaling"})
      Line("result")
          .set("test", test)
          .set("gpus", ids)
          .set("status", "skip")
          .set("message", "one GPU")
          .send();
    return;
  }
  const size_t n = gpus.size();
  emit_start("nccl", gpus[0].bus_id);
  int version = 0;
  ncclGetVersion(&version);  // a failure leaves 0: "unknown"
  Fault f;
  // Ranks before Comms: locals are destroyed in reverse order, so the
  // communicators are aborted (unblocking kernels waiting on a failed peer)
  // before a rank's cudaFree waits for its device to go idle.
  Ranks ranks;
  Comms comms(n);
  std::vector<int> devs;
  for (const Gpu& g : gpus) devs.push_back(g.cuda_index);
  bool ok = nccl_ok(ncclCommInitAll(comms.data(), static_cast<int>(n), devs.data()),
                    "ncclCommInitAll", &f);
  if (!ok) comms.set_failed();
  for (size_t r = 0; ok && r < n; ++r) {
    ranks.push_back(std::make_unique<Rank>(devs[r]));
    ok = cuda_ok(cudaSetDevice(devs[r]), "cudaSetDevice", &f) &&
         cuda_ok(ranks.back()->stream.create(), "cudaStreamCreate", &f) &&
         cuda_ok(ranks.back()->events.create(), "cudaEventCreate", &f);
  }
  std::vector<Point> points;
  int64_t mismatches = 0;
  if (ok) ok = run_all_reduce(ranks, comms, opt, &points, &mismatches, &f);
  // Any failure, a stream sync too, may leave kernels waiting on a peer:
  // abort, never destroy (ncclCommDestroy would wait for them).
  if (!ok) comms.set_failed();
  Line line("result");
  line.set("test", "nccl").set("gpus", ids).set("nccl_version", version);
  if (!ok)
    line.set("status", "error").set("message", f.message);
  else if (mismatches > 0)
    line.set("status", "fail")
        .set("message", std::to_string(mismatches) + " result elements differed from the sum");
  else
    line.set("status", "pass");
  line.set("mismatches", mismatches);
  for (const Point& p : points) {
    line.add_object("points")
        .set_in("bytes", p.bytes)
        .set_in("time_us", p.time_us)
        .set_in("algbw_bytes_per_s", p.algbw)
        .set_in("busbw_bytes_per_s", p.busbw);
  }
  line.send();

  emit_start("scaling", gpus[0].bus_id);
  Line scaling("result");
  scaling.set("test", "scaling").set("gpus", ids);
  Scaling sc;
  Fault sf;
  if (!ok) {
    scaling.set("status", "error")
        .set("message", "not run: the all-reduce test failed: " + f.message);
  } else if (!run_scaling(ranks, comms, gpus, opt, &sc, &sf)) {
    comms.set_failed();
    scaling.set("status", "error").set("message", sf.message);
  } else {
    const double speedup = sc.all_ms > 0 ? static_cast<double>(n) * sc.one_ms / sc.all_ms : 0.0;
    scaling.set("status", "pass")
        .set("one_gpu_step_ms", sc.one_ms)
        .set("all_gpu_step_ms", sc.all_ms)
        .set("per_gpu_compute_ms", sc.per_gpu_ms)
        .set("gradient_bytes", static_cast<uint64_t>(kGradientBytes))
        .set("speedup", speedup)
        .set("efficiency", speedup / static_cast<double>(n))
        .set("dtype", gemm_dtype_name(sc.dtype))
        .set("m", sc.dim)
        .set("gemms_per_step", sc.gemms_per_step);
  }
  scaling.send();
}

}  // namespace gdgpu
