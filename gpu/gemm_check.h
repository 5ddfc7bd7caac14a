// The GEMM test's arithmetic, shared by the device kernels (gemm.cu) and the
// CPU unit tests (tests/unit/gpu_gemm_check_test.cc): the inputs' values, the
// rounding of each dtype, the reference check's tolerance and the bitwise
// compare. Plain C++ under g++ (no CUDA header); GD_HD marks the functions
// nvcc also compiles for the device. Under nvcc only, the end of the file adds
// what gemm.cu and nccl.cu share: the input fill kernel, the cuBLAS call per
// dtype, RAII for a cuBLAS handle and a stream.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "patterns.h"  // GD_HD, mix64

namespace gdgpu {

// The input type of a GEMM; all accumulate in FP32 (CUBLAS_COMPUTE_32F*).
enum class GemmDtype : int { kBf16 = 0, kFp16 = 1, kTf32 = 2, kFp32 = 3 };

inline const char* gemm_dtype_name(GemmDtype d) {
  switch (d) {
    case GemmDtype::kBf16:
      return "bf16";
    case GemmDtype::kFp16:
      return "fp16";
    case GemmDtype::kTf32:
      return "tf32";
    case GemmDtype::kFp32:
      return "fp32";
  }
  return "?";
}

// Bytes of one stored element (A, B and C all have the input type; tf32
// data is stored as fp32).
inline size_t gemm_dtype_bytes(GemmDtype d) {
  return d == GemmDtype::kBf16 || d == GemmDtype::kFp16 ? 2 : 4;
}

// Compute capability the dtype needs (tensor cores for fp16 from Volta,
// bf16 and tf32 from Ampere); fp32 runs everywhere.
inline int gemm_dtype_min_cc(GemmDtype d) {
  switch (d) {
    case GemmDtype::kBf16:
    case GemmDtype::kTf32:
      return 80;
    case GemmDtype::kFp16:
      return 70;
    case GemmDtype::kFp32:
      return 0;
  }
  return 0;
}

// Uniform in [-1, 1) from a 64-bit random word: 24 bits, so the value is
// exact in fp32 (a multiple of 2^-23).
GD_HD inline float uniform_pm1(uint64_t r) {
  const int32_t v = static_cast<int32_t>(r >> 40) - (int32_t{1} << 23);
  return static_cast<float>(v) * (1.0f / 8388608.0f);
}

GD_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

GD_HD inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// Rounds an fp32 value to nearest-even at bit `drop` of the significand (the
// `drop` low bits become 0). A carry into the exponent is the right result
// (the next binade; the largest finite value rounds to infinity).
GD_HD inline float round_low_bits(float x, int drop) {
  if (x != x) return x;  // NaN: keep
  uint32_t u = float_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // infinity
  const uint32_t lsb = (u >> drop) & 1u;
  u += (uint32_t{1} << (drop - 1)) - 1u + lsb;
  u &= ~((uint32_t{1} << drop) - 1u);
  return bits_float(u);
}

// bf16: fp32's exponent, 8 significand bits (7 stored).
GD_HD inline float round_to_bf16(float x) { return round_low_bits(x, 16); }

// tf32: fp32's exponent, 11 significand bits (10 stored).
GD_HD inline float round_to_tf32(float x) { return round_low_bits(x, 13); }

// fp16: 11 significand bits, normal from 2^-14, subnormal step 2^-24,
// largest finite 65504 (65520, half an ulp above it, rounds to infinity).
GD_HD inline float round_to_fp16(float x) {
  if (x != x) return x;
  const float ax = x < 0 ? -x : x;
  if (ax >= 65520.0f) return x < 0 ? -INFINITY : INFINITY;
  if (ax >= 6.103515625e-05f) return round_low_bits(x, 13);  // 2^-14: normal
  // Subnormal: a multiple of 2^-24; ax * 2^24 < 1024 is exact, rintf rounds
  // it to nearest-even.
  const float q = rintf(ax * 16777216.0f) * (1.0f / 16777216.0f);
  return x < 0 ? -q : q;
}

// The value an fp32 number has once stored as `d` (fp32 and tf32 data are
// stored as fp32).
GD_HD inline float round_to_storage(float x, GemmDtype d) {
  switch (d) {
    case GemmDtype::kBf16:
      return round_to_bf16(x);
    case GemmDtype::kFp16:
      return round_to_fp16(x);
    case GemmDtype::kTf32:
    case GemmDtype::kFp32:
      return x;
  }
  return x;
}

// The reference check's tolerance, relative to sum_p |a_ip b_pj| (the scale
// of the dot product's rounding errors; relative to |c| itself the bound
// would be unbounded where terms cancel). The error model, each term a
// worst case (Higham, Accuracy and Stability of Numerical Algorithms, 3.1):
//  - inputs: for fp16 and bf16 the reference reads the very inputs cuBLAS
//    reads (converted on the device), so they add nothing. tf32 data is
//    fp32 that the tensor cores round to 11 significand bits themselves;
//    the hardware may truncate rather than round, so u_in = 2^-10, and each
//    product a*b carries both inputs' errors: 2 u_in.
//  - accumulation: FP32 over k terms in any order (tensor-core blocks,
//    split-K): gamma_k = k u / (1 - k u). Tensor cores align addends to the
//    largest exponent and truncate (Fasi et al., "Numerical behavior of
//    NVIDIA tensor cores", 2021), so u = 2^-23, not the 2^-24 of RNE.
//  - output: fp16 and bf16 results are rounded to the output type: half an
//    ulp, u_out = 2^-11 (fp16, 11 bits) or 2^-8 (bf16, 8 bits) of |c|, and
//    |c| <= sum |a b|; fp32 output adds 2^-24 at most.
// The reference itself (double sums of exact fp32 products) is exact to
// k 2^-53, negligible. A worst-case bound is loose (typical errors grow like
// sqrt(k) u): this check catches a wrong kernel or a large corruption; the
// bitwise compare of repeated products catches the small ones.
GD_HD inline double gemm_tolerance(GemmDtype d, int64_t k) {
  const double u_acc = 1.0 / 8388608.0;  // 2^-23
  const double ku = static_cast<double>(k) * u_acc;
  const double gamma = ku < 0.5 ? ku / (1.0 - ku) : 1.0;
  double in = 0, out = 1.0 / 16777216.0;  // fp32 output: 2^-24
  switch (d) {
    case GemmDtype::kBf16:
      out = 1.0 / 256.0;
      break;
    case GemmDtype::kFp16:
      out = 1.0 / 2048.0;
      break;
    case GemmDtype::kTf32:
      in = 2.0 / 1024.0 + 1.0 / 1048576.0;  // (1 + u)^2 - 1 = 2u + u^2
      break;
    case GemmDtype::kFp32:
      break;
  }
  return in + gamma + out;
}

// An absolute allowance on top: fp16 results below 2^-14 are subnormal,
// rounded to a multiple of 2^-24 (error up to 2^-25 whatever the scale).
// bf16 and fp32 subnormals are far below anything a GEMM of [-1, 1) inputs
// rounds to.
GD_HD inline double gemm_abs_floor(GemmDtype d) {
  return d == GemmDtype::kFp16 ? 1.0 / 33554432.0 : 0.0;  // 2^-25
}

// |c - ref| / abs_sum (abs_sum = sum |a b|): the figure gemm_tolerance
// bounds. A non-finite c is infinitely wrong; abs_sum 0 means ref is exactly
// 0, and so must c be.
GD_HD inline double gemm_rel_error(double c, double ref, double abs_sum) {
  if (!(c - c == 0)) return INFINITY;  // NaN or infinity
  const double diff = c > ref ? c - ref : ref - c;
  if (abs_sum > 0) return diff / abs_sum;
  return diff == 0 ? 0.0 : INFINITY;
}

// Whether one element of the product is within the tolerance of dtype d.
GD_HD inline bool gemm_element_ok(double c, double ref, double abs_sum, GemmDtype d, int64_t k) {
  if (!(c - c == 0)) return false;
  const double diff = c > ref ? c - ref : ref - c;
  return diff <= gemm_tolerance(d, k) * abs_sum + gemm_abs_floor(d);
}

// Part of one element's reference dot product, column-major A (m x k, lda)
// and B (k x n, ldb): the terms p = p0, p0 + step, ... < k of row i, column
// j, added in double (each fp32 x fp32 product is exact in double). T is
// float, or on the device __half / __nv_bfloat16, whose float conversion is
// exact.
template <class T>
GD_HD inline void gemm_ref_partial(const T* a, int64_t lda, const T* b, int64_t ldb, int64_t k,
                                   int64_t i, int64_t j, int64_t p0, int64_t step, double* dot,
                                   double* abs_sum) {
  double s = 0, as = 0;
  for (int64_t p = p0; p < k; p += step) {
    const double t = static_cast<double>(static_cast<float>(a[i + p * lda])) *
                     static_cast<double>(static_cast<float>(b[p + j * ldb]));
    s += t;
    as += t < 0 ? -t : t;
  }
  *dot = s;
  *abs_sum = as;
}

// The bitwise compare of two products' elements: equal only when the stored
// bits are (so -0 differs from +0, and NaNs with different payloads differ;
// a NaN equals itself). T is float, __half or __nv_bfloat16.
template <class T>
GD_HD inline bool gemm_bits_differ(const T& x, const T& y) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "16- or 32-bit elements");
  if constexpr (sizeof(T) == 4) {
    uint32_t a, b;
    memcpy(&a, &x, sizeof a);
    memcpy(&b, &y, sizeof b);
    return a != b;
  } else {
    uint16_t a, b;
    memcpy(&a, &x, sizeof a);
    memcpy(&b, &y, sizeof b);
    return a != b;
  }
}

// Host reference for small matrices (the unit tests): C = A B in double,
// column-major, with the sum of |a b| per element for the tolerance.
struct GemmReference {
  std::vector<double> c;        // m x n, ldc = m
  std::vector<double> abs_sum;  // m x n
};

inline GemmReference gemm_reference_host(int64_t m, int64_t n, int64_t k, const float* a,
                                         int64_t lda, const float* b, int64_t ldb) {
  GemmReference r;
  r.c.resize(static_cast<size_t>(m * n));
  r.abs_sum.resize(static_cast<size_t>(m * n));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      gemm_ref_partial(a, lda, b, ldb, k, i, j, 0, 1, &r.c[static_cast<size_t>(i + j * m)],
                       &r.abs_sum[static_cast<size_t>(i + j * m)]);
    }
  }
  return r;
}

// What the reference check found over a set of elements.
struct GemmCheckStat {
  int64_t checked = 0;
  int64_t failed = 0;        // elements beyond the tolerance
  double max_rel_error = 0;  // gemm_rel_error's worst
};

inline void gemm_check_add(GemmCheckStat* s, double c, double ref, double abs_sum, GemmDtype d,
                           int64_t k) {
  ++s->checked;
  if (!gemm_element_ok(c, ref, abs_sum, d, k)) ++s->failed;
  const double e = gemm_rel_error(c, ref, abs_sum);
  if (e > s->max_rel_error) s->max_rel_error = e;
}

}  // namespace gdgpu

#ifdef __CUDACC__
// Device side, shared by gemm.cu and nccl.cu (the scaling step runs the same
// GEMM): filling the inputs, the cuBLAS call per dtype, RAII for the handle
// and the stream.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

namespace gdgpu {

// cuBLAS handle of the current device (cublasCreate binds it to the device
// current when it is created); destroyed with the object.
class CublasHandle {
 public:
  CublasHandle() = default;
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasStatus_t create() { return cublasCreate(&h_); }
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// A non-blocking stream of the current device: it does not wait for the
// legacy default stream, so no stray work of another library times into it.
class CudaStream {
 public:
  CudaStream() = default;
  ~CudaStream() {
    if (s_) cudaStreamDestroy(s_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaError_t create() { return cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// Element i of a GEMM input: uniform in [-1, 1), rounded once to the stored
// type (fp16 and bf16 round to nearest-even, as round_to_storage does).
template <class T>
__global__ void gemm_fill_kernel(T* p, size_t n, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = uniform_pm1(mix64(seed, i));
    if constexpr (std::is_same_v<T, __half>) {
      p[i] = __float2half_rn(v);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      p[i] = __float2bfloat16_rn(v);
    } else {
      p[i] = v;
    }
  }
}

// Fills count elements of dtype d at p (device memory of the current
// device) on stream s; returns the launch's error.
inline cudaError_t gemm_fill(void* p, size_t count, GemmDtype d, uint64_t seed, cudaStream_t s) {
  const unsigned blocks = 1024, threads = 256;
  switch (d) {
    case GemmDtype::kBf16:
      gemm_fill_kernel<<<blocks, threads, 0, s>>>(static_cast<__nv_bfloat16*>(p), count, seed);
      break;
    case GemmDtype::kFp16:
      gemm_fill_kernel<<<blocks, threads, 0, s>>>(static_cast<__half*>(p), count, seed);
      break;
    case GemmDtype::kTf32:
    case GemmDtype::kFp32:
      gemm_fill_kernel<<<blocks, threads, 0, s>>>(static_cast<float*>(p), count, seed);
      break;
  }
  return cudaGetLastError();
}

inline cudaDataType_t gemm_cuda_type(GemmDtype d) {
  switch (d) {
    case GemmDtype::kBf16:
      return CUDA_R_16BF;
    case GemmDtype::kFp16:
      return CUDA_R_16F;
    case GemmDtype::kTf32:
    case GemmDtype::kFp32:
      return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

// C = A B for square column-major dim x dim matrices, no transpose, all of
// dtype d, FP32 accumulation: what PyTorch's matmul asks of cuBLAS (fp16 and
// bf16 in and out with CUBLAS_COMPUTE_32F; tf32 is fp32 data with
// CUBLAS_COMPUTE_32F_FAST_TF32; fp32 plain CUBLAS_COMPUTE_32F, which with
// the handle's default math mode never uses TF32).
inline cublasStatus_t gemm_run(cublasHandle_t h, GemmDtype d, int dim, const void* a, const void* b,
                               void* c) {
  const float alpha = 1.0f, beta = 0.0f;  // host scalars: the default pointer mode
  const cudaDataType_t t = gemm_cuda_type(d);
  const cublasComputeType_t compute =
      d == GemmDtype::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &alpha, a, t, dim, b, t, dim,
                      &beta, c, t, dim, compute, CUBLAS_GEMM_DEFAULT);
}

}  // namespace gdgpu
#endif  // __CUDACC__
