// The GEMM test's arithmetic on the CPU (gpu/gemm_check.h): the dtype
// roundings, the reference check's tolerance (a correct product of each dtype
// passes, a corrupted element fails) and the bitwise compare.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gpu/gemm_check.h"

namespace gdgpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(GemmCheck, Bf16RoundsToNearestEven) {
  EXPECT_EQ(round_to_bf16(1.0f), 1.0f);
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);  // tie, to even
  EXPECT_EQ(round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -7));  // above the tie
  EXPECT_EQ(round_to_bf16(-3.0f), -3.0f);
  EXPECT_EQ(round_to_bf16(std::numeric_limits<float>::max()), kInf);
  EXPECT_TRUE(std::isnan(round_to_bf16(std::nanf(""))));
}

TEST(GemmCheck, Tf32RoundsToNearestEven) {
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));
  // tf32 keeps fp32's exponent: no overflow at fp16's limit.
  EXPECT_EQ(round_to_tf32(1e30f), round_to_tf32(round_to_tf32(1e30f)));
  EXPECT_LT(std::fabs(round_to_tf32(1e30f) - 1e30f), 1e30f * std::ldexp(1.0f, -11) * 1.0001f);
}

TEST(GemmCheck, Fp16RoundsToNearestEvenWithSubnormalsAndOverflow) {
  EXPECT_EQ(round_to_fp16(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(round_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(round_to_fp16(65504.0f), 65504.0f);
  EXPECT_EQ(round_to_fp16(65519.0f), 65504.0f);
  EXPECT_EQ(round_to_fp16(65520.0f), kInf);
  EXPECT_EQ(round_to_fp16(-65520.0f), -kInf);
  // Subnormals: multiples of 2^-24.
  EXPECT_EQ(round_to_fp16(std::ldexp(1.0f, -25)), 0.0f);  // tie, to even (0)
  EXPECT_EQ(round_to_fp16(3 * std::ldexp(1.0f, -25)), std::ldexp(1.0f, -23));
  EXPECT_EQ(round_to_fp16(1.4f * std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));
  EXPECT_EQ(round_to_fp16(-5 * std::ldexp(1.0f, -24)), -5 * std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(round_to_fp16(std::nanf(""))));
}

TEST(GemmCheck, UniformInputsAreExactInMinusOneToOne) {
  EXPECT_EQ(uniform_pm1(0), -1.0f);
  EXPECT_EQ(uniform_pm1(~uint64_t{0}), 1.0f - std::ldexp(1.0f, -23));
  double sum = 0;
  for (uint64_t i = 0; i < 10000; ++i) {
    const float v = uniform_pm1(mix64(7, i));
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    // Exact in every dtype's reference: a multiple of 2^-23.
    ASSERT_EQ(std::ldexp(v, 23), std::trunc(std::ldexp(v, 23)));
    sum += v;
  }
  EXPECT_LT(std::fabs(sum / 10000), 0.05);  // centered
}

// A GEMM as the GPU computes it, emulated: inputs stored in the dtype (tf32:
// fp32 data the "tensor core" rounds or truncates), products accumulated in
// fp32 in blocks of 8 (an order unlike the reference's), the result rounded
// to the output type.
struct Emulated {
  int64_t m, n, k;
  std::vector<float> a, b;  // the stored inputs (what the reference reads)
  std::vector<float> c;     // the "GPU" result, as stored
};

float truncate_tf32(float x) { return bits_float(float_bits(x) & ~0x1fffu); }

Emulated emulate(GemmDtype d, int64_t m, int64_t n, int64_t k, uint64_t seed,
                 bool tf32_truncates = false) {
  Emulated e{m, n, k, {}, {}, {}};
  e.a.resize(static_cast<size_t>(m * k));
  e.b.resize(static_cast<size_t>(k * n));
  for (size_t i = 0; i < e.a.size(); ++i) e.a[i] = round_to_storage(uniform_pm1(mix64(seed, i)), d);
  for (size_t i = 0; i < e.b.size(); ++i)
    e.b[i] = round_to_storage(uniform_pm1(mix64(seed + 1, i)), d);
  auto in = [&](float x) {
    if (d != GemmDtype::kTf32) return x;
    return tf32_truncates ? truncate_tf32(x) : round_to_tf32(x);
  };
  e.c.resize(static_cast<size_t>(m * n));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0;
      for (int64_t p0 = 0; p0 < k; p0 += 8) {
        float block = 0;
        for (int64_t p = p0; p < p0 + 8 && p < k; ++p)
          block +=
              in(e.a[static_cast<size_t>(i + p * m)]) * in(e.b[static_cast<size_t>(p + j * k)]);
        acc += block;
      }
      e.c[static_cast<size_t>(i + j * m)] = round_to_storage(acc, d);
    }
  }
  return e;
}

GemmCheckStat check_all(const Emulated& e, GemmDtype d) {
  const GemmReference ref = gemm_reference_host(e.m, e.n, e.k, e.a.data(), e.m, e.b.data(), e.k);
  GemmCheckStat s;
  for (size_t i = 0; i < e.c.size(); ++i)
    gemm_check_add(&s, e.c[i], ref.c[i], ref.abs_sum[i], d, e.k);
  return s;
}

constexpr GemmDtype kDtypes[] = {GemmDtype::kBf16, GemmDtype::kFp16, GemmDtype::kTf32,
                                 GemmDtype::kFp32};

TEST(GemmCheck, HostReferenceIsColumnMajor) {
  // A = [1 2; 3 4] (rows), B = [5 6; 7 8]: column-major storage.
  const float a[] = {1, 3, 2, 4};
  const float b[] = {5, 7, 6, 8};
  const GemmReference r = gemm_reference_host(2, 2, 2, a, 2, b, 2);
  EXPECT_EQ(r.c, (std::vector<double>{19, 43, 22, 50}));
  const float an[] = {-1, 3, 2, -4};
  const GemmReference rn = gemm_reference_host(2, 2, 2, an, 2, b, 2);
  EXPECT_EQ(rn.c[0], -5 + 14);
  EXPECT_EQ(rn.abs_sum[0], 5 + 14);
}

TEST(GemmCheck, CorrectProductOfEveryDtypePasses) {
  for (GemmDtype d : kDtypes) {
    for (int64_t k : {1, 7, 256, 4096}) {
      const int64_t m = k >= 4096 ? 4 : 24, n = k >= 4096 ? 3 : 20;
      const GemmCheckStat s = check_all(emulate(d, m, n, k, 11), d);
      EXPECT_EQ(s.checked, m * n);
      EXPECT_EQ(s.failed, 0) << gemm_dtype_name(d) << " k=" << k;
      EXPECT_LE(s.max_rel_error, gemm_tolerance(d, k)) << gemm_dtype_name(d);
    }
  }
  // The low-precision types do round: the check sees an error, within the
  // tolerance.
  EXPECT_GT(check_all(emulate(GemmDtype::kBf16, 24, 20, 256, 3), GemmDtype::kBf16).max_rel_error,
            0.0);
  const GemmCheckStat t =
      check_all(emulate(GemmDtype::kTf32, 24, 20, 256, 5, true), GemmDtype::kTf32);
  EXPECT_EQ(t.failed, 0);  // truncating tensor cores too
  EXPECT_GT(t.max_rel_error, 0.0);
}

// Index of the element whose |c| is largest against its error scale, so a
// corruption there is surely beyond any tolerance of a correct product.
size_t largest(const Emulated& e) {
  const GemmReference ref = gemm_reference_host(e.m, e.n, e.k, e.a.data(), e.m, e.b.data(), e.k);
  size_t best = 0;
  for (size_t i = 1; i < e.c.size(); ++i)
    if (std::fabs(ref.c[i]) / ref.abs_sum[i] > std::fabs(ref.c[best]) / ref.abs_sum[best]) best = i;
  return best;
}

TEST(GemmCheck, OneCorruptedElementFails) {
  for (GemmDtype d : kDtypes) {
    const Emulated good = emulate(d, 24, 20, 256, 21);
    const size_t at = largest(good);
    // The lowest exponent bit (x2 or /2), then the top significand bit.
    for (uint32_t bit : {uint32_t{1} << 23, uint32_t{1} << 22}) {
      Emulated bad = good;
      bad.c[at] = bits_float(float_bits(bad.c[at]) ^ bit);
      const GemmCheckStat s = check_all(bad, d);
      EXPECT_EQ(s.failed, 1) << gemm_dtype_name(d) << " bit " << bit;
      EXPECT_GT(s.max_rel_error, gemm_tolerance(d, 256));
    }
    Emulated nan = good;
    nan.c[at] = std::nanf("");
    EXPECT_EQ(check_all(nan, d).failed, 1);
    EXPECT_EQ(check_all(nan, d).max_rel_error, std::numeric_limits<double>::infinity());
  }
}

TEST(GemmCheck, OneUlpPassesTheReferenceButNotTheBitwiseCompare) {
  // Why every product is also compared bit for bit with the first.
  const Emulated good = emulate(GemmDtype::kFp32, 24, 20, 256, 31);
  Emulated bad = good;
  bad.c[5] = std::nextafter(bad.c[5], kInf);
  EXPECT_EQ(check_all(bad, GemmDtype::kFp32).failed, 0);
  int64_t differ = 0;
  for (size_t i = 0; i < good.c.size(); ++i) differ += gemm_bits_differ(good.c[i], bad.c[i]);
  EXPECT_EQ(differ, 1);
}

TEST(GemmCheck, ToleranceGrowsWithKAndShrinksWithPrecision) {
  for (GemmDtype d : kDtypes) {
    EXPECT_LT(gemm_tolerance(d, 64), gemm_tolerance(d, 1024)) << gemm_dtype_name(d);
    EXPECT_LT(gemm_tolerance(d, 1024), gemm_tolerance(d, 8192)) << gemm_dtype_name(d);
    // Worst case of fp32 accumulation at least: k u.
    EXPECT_GE(gemm_tolerance(d, 8192), 8192 * std::ldexp(1.0, -24));
    EXPECT_LE(gemm_tolerance(d, 8192), 0.01);  // still catches a doubled element
  }
  EXPECT_GT(gemm_tolerance(GemmDtype::kBf16, 1024), gemm_tolerance(GemmDtype::kFp16, 1024));
  EXPECT_GT(gemm_tolerance(GemmDtype::kTf32, 1024), gemm_tolerance(GemmDtype::kFp32, 1024));
  EXPECT_GT(gemm_tolerance(GemmDtype::kFp16, 1024), gemm_tolerance(GemmDtype::kFp32, 1024));
  // bf16 output rounding alone is half an ulp of 8 bits.
  EXPECT_GE(gemm_tolerance(GemmDtype::kBf16, 1), std::ldexp(1.0, -8));
}

TEST(GemmCheck, RelativeErrorIsAgainstTheAbsoluteSum) {
  EXPECT_EQ(gemm_rel_error(1.5, 1.0, 10.0), 0.05);
  EXPECT_EQ(gemm_rel_error(1.0, 1.5, 10.0), 0.05);
  EXPECT_EQ(gemm_rel_error(0.0, 0.0, 0.0), 0.0);
  EXPECT_EQ(gemm_rel_error(1e-30, 0.0, 0.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(gemm_rel_error(std::nan(""), 1.0, 1.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(gemm_rel_error(-std::numeric_limits<double>::infinity(), 1.0, 1.0),
            std::numeric_limits<double>::infinity());
  EXPECT_FALSE(
      gemm_element_ok(std::numeric_limits<double>::infinity(), 1.0, 1.0, GemmDtype::kBf16, 8));
  // fp16's subnormal floor: a tiny result off by less than 2^-25 passes.
  EXPECT_TRUE(gemm_element_ok(std::ldexp(1.0, -25), 0.0, 0.0, GemmDtype::kFp16, 8));
  EXPECT_FALSE(gemm_element_ok(std::ldexp(1.0, -25), 0.0, 0.0, GemmDtype::kFp32, 8));
}

struct Bits16 {
  uint16_t v;
};

TEST(GemmCheck, BitwiseCompareIsOnRawBits) {
  EXPECT_FALSE(gemm_bits_differ(1.0f, 1.0f));
  EXPECT_TRUE(gemm_bits_differ(0.0f, -0.0f));  // equal as numbers
  const float nan_a = bits_float(0x7fc00000u), nan_b = bits_float(0x7fc00001u);
  EXPECT_TRUE(gemm_bits_differ(nan_a, nan_b));   // payloads
  EXPECT_FALSE(gemm_bits_differ(nan_a, nan_a));  // unequal as numbers
  EXPECT_TRUE(gemm_bits_differ(1.0f, std::nextafter(1.0f, 2.0f)));
  // 16-bit elements (__half, __nv_bfloat16 on the device).
  EXPECT_FALSE(gemm_bits_differ(Bits16{0x3c00}, Bits16{0x3c00}));
  EXPECT_TRUE(gemm_bits_differ(Bits16{0x0000}, Bits16{0x8000}));
  EXPECT_TRUE(gemm_bits_differ(Bits16{0x7e00}, Bits16{0x7e01}));
}

TEST(GemmCheck, DtypeTable) {
  EXPECT_STREQ(gemm_dtype_name(GemmDtype::kBf16), "bf16");
  EXPECT_STREQ(gemm_dtype_name(GemmDtype::kTf32), "tf32");
  EXPECT_EQ(gemm_dtype_bytes(GemmDtype::kFp16), 2u);
  EXPECT_EQ(gemm_dtype_bytes(GemmDtype::kTf32), 4u);
  EXPECT_EQ(gemm_dtype_min_cc(GemmDtype::kFp16), 70);
  EXPECT_EQ(gemm_dtype_min_cc(GemmDtype::kBf16), 80);
  EXPECT_EQ(gemm_dtype_min_cc(GemmDtype::kFp32), 0);
}

}  // namespace
}  // namespace gdgpu
