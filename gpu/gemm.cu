// The sustained GEMM test (level 2+): per dtype the GPU supports, cuBLAS
// GEMMs of m = n = k = 8192 for duration_s / dtypes, in two phases.
//  - Verification (a third of the time): the first product is the golden
//    one, checked against a reference kernel on 1024 sampled elements
//    (gemm_check.h's tolerance); every later product is compared with it bit
//    for bit. cuBLAS gives bitwise identical results for identical calls on
//    one GPU (same handle, stream, shapes), so any difference is silent
//    corruption.
//  - Throughput (the rest): back-to-back GEMMs in batches timed with events;
//    after each batch the last product is compared with the golden one,
//    outside the timed window.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "emit.h"
#include "gemm_check.h"
#include "helper.h"

namespace gdgpu {
namespace {

constexpr int kSamples = 1024;    // elements of the golden product checked against the reference
constexpr int kRefThreads = 256;  // per sampled element (a power of two: the reduction halves)
constexpr int kMaxDim = 8192;     // m = n = k
constexpr int kDimStep = 1024;    // smaller sizes when memory is short
constexpr double kBatchMs = 200;  // target length of one timed batch
constexpr int kMinVerifyCompares = 3;  // so the planted fault (third product) always happens

// Why a dtype's run stopped: the message for the result line, and whether
// the context is lost (the GPU's remaining tests are skipped).
struct Fault {
  std::string message;
  bool sticky = false;
};

bool cuda_ok(cudaError_t rc, const char* what, Fault* f) {
  if (rc == cudaSuccess) return true;
  f->message = cuda_error(what, rc);
  f->sticky = is_sticky(rc);
  return false;
}

// A cuBLAS failure can stand for a lost context (an execution failure after
// an illegal address): the runtime says whether it is.
bool cublas_ok(cublasStatus_t st, const char* what, Fault* f) {
  if (st == CUBLAS_STATUS_SUCCESS) return true;
  f->message = std::string(what) + ": " + cublasGetStatusName(st);
  const cudaError_t rc = cudaDeviceSynchronize();
  if (rc != cudaSuccess) {
    f->message += " (" + cuda_error("then", rc) + ")";
    f->sticky = is_sticky(rc);
  }
  return false;
}

// Counts the elements of x and y whose bits differ (into *differ).
template <class T>
__global__ void compare_kernel(const T* x, const T* y, size_t n, unsigned long long* differ) {
  unsigned long long local = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    local += gemm_bits_differ(x[i], y[i]) ? 1 : 0;
  if (local) atomicAdd(differ, local);
}

// --plant-fault gemm: the lowest significand bit of one element flipped
// (1 ulp), so exactly one mismatch must be reported.
template <class T>
__global__ void plant_kernel(T* c, size_t at) {
  if constexpr (sizeof(T) == 4) {
    uint32_t u;
    memcpy(&u, c + at, sizeof u);
    u ^= 1u;
    memcpy(c + at, &u, sizeof u);
  } else {
    uint16_t u;
    memcpy(&u, c + at, sizeof u);
    u ^= 1u;
    memcpy(c + at, &u, sizeof u);
  }
}

// The position of sample s in a dim x dim product.
__host__ __device__ inline uint64_t sample_position(uint64_t seed, int s, int64_t dim) {
  return mix64(seed ^ 0x6a09e667f3bcc908ULL, static_cast<uint64_t>(s)) %
         static_cast<uint64_t>(dim * dim);
}

// One block per sampled element (i, j) of c: the reference dot product of
// the same stored inputs in double, and the sum of |a b| for the tolerance.
// out[3 s .. 3 s + 2] = c's element, the reference, the absolute sum.
template <class T>
__global__ void reference_kernel(const T* a, const T* b, const T* c, int64_t dim, uint64_t seed,
                                 double* out) {
  __shared__ double dot[kRefThreads];
  __shared__ double abs_sum[kRefThreads];
  const int s = blockIdx.x;
  const uint64_t pos = sample_position(seed, s, dim);
  const int64_t i = static_cast<int64_t>(pos % static_cast<uint64_t>(dim));
  const int64_t j = static_cast<int64_t>(pos / static_cast<uint64_t>(dim));
  gemm_ref_partial(a, dim, b, dim, dim, i, j, threadIdx.x, blockDim.x, &dot[threadIdx.x],
                   &abs_sum[threadIdx.x]);
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      dot[threadIdx.x] += dot[threadIdx.x + w];
      abs_sum[threadIdx.x] += abs_sum[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[3 * s] = static_cast<double>(static_cast<float>(c[pos]));
    out[3 * s + 1] = dot[0];
    out[3 * s + 2] = abs_sum[0];
  }
}

// What one dtype's run measured.
struct GemmFigures {
  int dim = 0;
  int64_t iterations = 0;  // timed GEMMs
  double timed_ms = 0;     // all timed batches
  int64_t checked = 0;     // products compared bit for bit with the golden one
  int64_t mismatches = 0;  // differing elements over them
  GemmCheckStat reference;
};

// The largest multiple of kDimStep (at most kMaxDim) whose four matrices
// (A, B, golden C, work C) fit in a quarter of free_bytes; 0 if none.
int gemm_dim(size_t free_bytes, size_t elem_bytes) {
  for (int dim = kMaxDim; dim >= kDimStep; dim -= kDimStep) {
    const size_t need = 4 * static_cast<size_t>(dim) * static_cast<size_t>(dim) * elem_bytes;
    if (need <= free_bytes / 4) return dim;
  }
  return 0;
}

template <class T>
bool run_typed(const Gpu& gpu, const HelperOptions& opt, GemmDtype d, double budget_ms,
               cublasHandle_t h, cudaStream_t s, GemmFigures* fig, Fault* f) {
  size_t free_bytes = 0, total_bytes = 0;
  if (!cuda_ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", f)) return false;
  const int dim = gemm_dim(free_bytes, sizeof(T));
  if (dim == 0) {
    f->message = "too little free memory: " + std::to_string(free_bytes) + " bytes";
    return false;
  }
  fig->dim = dim;
  const size_t elems = static_cast<size_t>(dim) * static_cast<size_t>(dim);
  DeviceBuffer<T> a, b, golden, work;
  DeviceBuffer<unsigned long long> differ;
  DeviceBuffer<double> samples;
  if (!cuda_ok(a.alloc(elems), "cudaMalloc A", f) || !cuda_ok(b.alloc(elems), "cudaMalloc B", f) ||
      !cuda_ok(golden.alloc(elems), "cudaMalloc C", f) ||
      !cuda_ok(work.alloc(elems), "cudaMalloc C", f) ||
      !cuda_ok(differ.alloc(1), "cudaMalloc", f) ||
      !cuda_ok(samples.alloc(3 * kSamples), "cudaMalloc", f))
    return false;
  // A and B from two seeds' streams (unrelated, patterns.h).
  if (!cuda_ok(gemm_fill(a.get(), elems, d, opt.seed, s), "fill A", f) ||
      !cuda_ok(gemm_fill(b.get(), elems, d, opt.seed + 0x100000001ULL, s), "fill B", f) ||
      !cuda_ok(cudaMemsetAsync(differ.get(), 0, sizeof(unsigned long long), s), "cudaMemsetAsync",
               f))
    return false;

  const unsigned cmp_blocks = static_cast<unsigned>(std::max(1, gpu.multiprocessors) * 8);
  auto compare = [&]() {
    compare_kernel<<<cmp_blocks, 256, 0, s>>>(work.get(), golden.get(), elems, differ.get());
    ++fig->checked;
    return cuda_ok(cudaGetLastError(), "compare kernel", f);
  };
  auto gemm = [&](T* c) {
    return cublas_ok(gemm_run(h, d, dim, a.get(), b.get(), c), "cublasGemmEx", f);
  };

  // Warm-up: cuBLAS picks its kernel and loads it, the clocks ramp.
  if (!gemm(work.get()) || !cuda_ok(cudaStreamSynchronize(s), "warm-up GEMM", f)) return false;

  // Verification phase.
  const double t0 = now_ms();
  const double verify_end = t0 + budget_ms / 3;
  if (!gemm(golden.get())) return false;
  reference_kernel<<<kSamples, kRefThreads, 0, s>>>(a.get(), b.get(), golden.get(), dim, opt.seed,
                                                    samples.get());
  if (!cuda_ok(cudaGetLastError(), "reference kernel", f)) return false;
  std::vector<double> host(3 * kSamples);
  if (!cuda_ok(cudaMemcpyAsync(host.data(), samples.get(), host.size() * sizeof(double),
                               cudaMemcpyDeviceToHost, s),
               "cudaMemcpyAsync", f) ||
      !cuda_ok(cudaStreamSynchronize(s), "reference check", f))
    return false;
  for (int i = 0; i < kSamples; ++i)
    gemm_check_add(&fig->reference, host[3 * i], host[3 * i + 1], host[3 * i + 2], d, dim);
  const bool plant = opt.plant_fault == "gemm";
  const size_t plant_at = mix64(opt.seed, 0x9e37) % elems;
  for (int product = 2; fig->checked < kMinVerifyCompares || now_ms() < verify_end; ++product) {
    if (!gemm(work.get())) return false;
    if (plant && product == 3) {
      plant_kernel<<<1, 1, 0, s>>>(work.get(), plant_at);
      if (!cuda_ok(cudaGetLastError(), "plant kernel", f)) return false;
    }
    // One product at a time, so the phase ends on time.
    if (!compare() || !cuda_ok(cudaStreamSynchronize(s), "verification", f)) return false;
  }

  // Throughput phase. One GEMM timed alone sizes the batches.
  const double end = t0 + budget_ms;
  EventTimer timer;
  if (!cuda_ok(timer.start(s), "cudaEventRecord", f) || !gemm(work.get()) ||
      !cuda_ok(timer.stop(s), "cudaEventSynchronize", f))
    return false;
  const double gemm_ms = std::max(timer.ms(), 1e-3);
  const double batch_ms = std::min(kBatchMs, std::max(0.0, end - now_ms()) / 2);
  const int batch = static_cast<int>(std::clamp(batch_ms / gemm_ms, 1.0, 10000.0));
  do {
    if (!cuda_ok(timer.start(s), "cudaEventRecord", f)) return false;
    for (int i = 0; i < batch; ++i)
      if (!gemm(work.get())) return false;
    if (!cuda_ok(timer.stop(s), "cudaEventSynchronize", f)) return false;
    fig->timed_ms += timer.ms();
    fig->iterations += batch;
    if (!compare()) return false;  // after the stop event: untimed
  } while (now_ms() < end);

  unsigned long long total = 0;
  if (!cuda_ok(cudaMemcpyAsync(&total, differ.get(), sizeof total, cudaMemcpyDeviceToHost, s),
               "cudaMemcpyAsync", f) ||
      !cuda_ok(cudaStreamSynchronize(s), "compare", f))
    return false;
  fig->mismatches = static_cast<int64_t>(total);
  return true;
}

std::string format_double(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Runs one dtype and writes its result line; returns false when the
// context is lost.
bool run_dtype(const Gpu& gpu, const HelperOptions& opt, GemmDtype d, double budget_ms,
               cublasHandle_t h, cudaStream_t s) {
  emit_start("gemm", gpu.bus_id, "dtype", gemm_dtype_name(d));
  const double t0 = now_ms();
  GemmFigures fig;
  Fault f;
  bool ok = false;
  switch (d) {
    case GemmDtype::kBf16:
      ok = run_typed<__nv_bfloat16>(gpu, opt, d, budget_ms, h, s, &fig, &f);
      break;
    case GemmDtype::kFp16:
      ok = run_typed<__half>(gpu, opt, d, budget_ms, h, s, &fig, &f);
      break;
    case GemmDtype::kTf32:
    case GemmDtype::kFp32:
      ok = run_typed<float>(gpu, opt, d, budget_ms, h, s, &fig, &f);
      break;
  }
  Line line("result");
  line.set("test", "gemm").set("gpu", gpu.bus_id).set("dtype", gemm_dtype_name(d));
  line.set("m", fig.dim).set("n", fig.dim).set("k", fig.dim);
  if (!ok) {
    line.set("status", "error").set("message", f.message);
  } else {
    std::string why;
    if (fig.mismatches > 0) {
      why = std::to_string(fig.mismatches) + " elements of " + std::to_string(fig.checked) +
            " products differed from the first product";
    }
    if (fig.reference.failed > 0) {
      if (!why.empty()) why += "; ";
      why += std::to_string(fig.reference.failed) + " of " + std::to_string(kSamples) +
             " sampled elements off the reference (worst relative error " +
             format_double("%.3g", fig.reference.max_rel_error) + ", tolerance " +
             format_double("%.3g", gemm_tolerance(d, fig.dim)) + ")";
    }
    line.set("status", why.empty() ? "pass" : "fail");
    if (!why.empty()) line.set("message", why);
    // FLOP/s over all timed batches (not the best one): the sustained rate,
    // throttling included, which is what a training job gets.
    const double flops = 2.0 * fig.dim * static_cast<double>(fig.dim) * fig.dim;
    line.set("iterations", fig.iterations)
        .set("flops_per_s", fig.timed_ms > 0 ? flops * fig.iterations / (fig.timed_ms / 1e3) : 0.0);
  }
  line.set("checked", fig.checked).set("mismatches", fig.mismatches);
  line.set("max_rel_error", fig.reference.max_rel_error).set("duration_ms", now_ms() - t0);
  line.send();
  return ok || !f.sticky;
}

void emit_skip(const Gpu& gpu, GemmDtype d) {
  const int need = gemm_dtype_min_cc(d);
  Line("result")
      .set("test", "gemm")
      .set("gpu", gpu.bus_id)
      .set("dtype", gemm_dtype_name(d))
      .set("status", "skip")
      .set("message", "needs compute capability " + std::to_string(need / 10) + "." +
                          std::to_string(need % 10) + " (the GPU has " +
                          std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor) + ")")
      .send();
}

}  // namespace

bool run_gemm_tests(const Gpu& gpu, const HelperOptions& opt) {
  const GemmDtype all[] = {GemmDtype::kBf16, GemmDtype::kFp16, GemmDtype::kTf32, GemmDtype::kFp32};
  const int cc = gpu.cc_major * 10 + gpu.cc_minor;
  std::vector<GemmDtype> run;
  for (GemmDtype d : all) {
    if (cc >= gemm_dtype_min_cc(d))
      run.push_back(d);
    else
      emit_skip(gpu, d);
  }
  const double budget_ms = opt.duration_s * 1e3 / static_cast<double>(run.size());

  // One handle and stream for all dtypes: set up once, freed on every path
  // (the handle first: it may still use the stream).
  Fault f;
  CudaStream stream;
  CublasHandle handle;
  if (!cuda_ok(cudaSetDevice(gpu.cuda_index), "cudaSetDevice", &f) ||
      !cuda_ok(stream.create(), "cudaStreamCreate", &f) ||
      !cublas_ok(handle.create(), "cublasCreate", &f) ||
      !cublas_ok(cublasSetStream(handle.get(), stream.get()), "cublasSetStream", &f)) {
    emit_error("gemm", gpu.bus_id, f.message);
    return !f.sticky;
  }
  for (GemmDtype d : run)
    if (!run_dtype(gpu, opt, d, budget_ms, handle.get(), stream.get())) return false;
  return true;
}

}  // namespace gdgpu
