// The memory test's patterns, shared by the device kernels (memtest.cu) and a
// host reference (memtest_host) so the CPU unit tests cover the very
// functions the GPU runs. Plain C++ under g++; GD_HD marks them for nvcc.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define GD_HD __host__ __device__
#else
#define GD_HD
#endif

namespace gdgpu {

// Counter-based random 64-bit value for index i: element i of a splitmix64
// stream whose start is derived from the seed, so each word is computable
// alone (no state between threads), the same on host and device, and two
// seeds give unrelated streams (not shifted or permuted copies).
GD_HD inline uint64_t splitmix64_final(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

GD_HD inline uint64_t mix64(uint64_t seed, uint64_t i) {
  const uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  const uint64_t start = splitmix64_final(seed * kGolden + kGolden);
  return splitmix64_final(start + (i + 1) * kGolden);
}

enum class Pattern : int { kAddress = 0, kWalkingOnes = 1, kWalkingZeros = 2, kRandom = 3 };
inline constexpr int kPatternCount = 4;
inline constexpr int kMaxMemFailures = 16;  // failures recorded; all are counted

inline const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::kAddress:
      return "address";
    case Pattern::kWalkingOnes:
      return "walking-ones";
    case Pattern::kWalkingZeros:
      return "walking-zeros";
    case Pattern::kRandom:
      return "random";
  }
  return "?";
}

// The word that word i (at byte address base + 8 i) holds under pattern p in
// pass `pass` (0-based). Passes shift the walking bit and reseed the random
// pattern so repeated passes do not write the same values.
GD_HD inline uint64_t pattern_word(Pattern p, uint64_t base_address, uint64_t i, uint64_t pass,
                                   uint64_t seed) {
  switch (p) {
    case Pattern::kAddress:
      return base_address + i * sizeof(uint64_t);
    case Pattern::kWalkingOnes:
      return uint64_t{1} << ((i + pass) % 64);
    case Pattern::kWalkingZeros:
      return ~(uint64_t{1} << ((i + pass) % 64));
    case Pattern::kRandom:
      return mix64(seed + pass, i);
  }
  return 0;
}

// One failing word, as the device verify kernel records it.
struct MemFailure {
  uint64_t offset;  // bytes from the start of the buffer
  uint64_t address;
  uint64_t expected;
  uint64_t actual;
  int pattern;  // Pattern
};

// What the verify step found: all failing words, the first kMaxMemFailures
// of them (in the order found; on the GPU that order is not by address).
struct MemFailureLog {
  unsigned long long count;  // failing words
  MemFailure first[kMaxMemFailures];
};

// Records failing word i; `slot` is the index the caller claimed (the count
// before it was incremented), so the log stays consistent under atomics.
GD_HD inline void record_failure(MemFailureLog* log, unsigned long long slot, Pattern p,
                                 uint64_t base_address, uint64_t i, uint64_t expected,
                                 uint64_t actual) {
  if (slot < static_cast<unsigned long long>(kMaxMemFailures)) {
    MemFailure& f = log->first[slot];
    f.offset = i * sizeof(uint64_t);
    f.address = base_address + i * sizeof(uint64_t);
    f.expected = expected;
    f.actual = actual;
    f.pattern = static_cast<int>(p);
  }
}

// Host reference of one pattern: write words[0..n), then verify them into
// log (which the caller zeroes). base_address stands for the device address
// of words[0]. Returns the failing words found by this call.
inline uint64_t memtest_host_write(uint64_t* words, size_t n, uint64_t base_address, Pattern p,
                                   uint64_t pass, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) words[i] = pattern_word(p, base_address, i, pass, seed);
  return n;
}

inline uint64_t memtest_host_verify(const uint64_t* words, size_t n, uint64_t base_address,
                                    Pattern p, uint64_t pass, uint64_t seed, MemFailureLog* log) {
  uint64_t found = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t expected = pattern_word(p, base_address, i, pass, seed);
    const uint64_t actual = words[i];
    if (actual != expected) {
      const unsigned long long slot = log->count++;
      record_failure(log, slot, p, base_address, i, expected, actual);
      ++found;
    }
  }
  return found;
}

// Writes and verifies pattern p on host memory (the CPU twin of one
// write + verify kernel pair).
inline uint64_t memtest_host(uint64_t* words, size_t n, uint64_t base_address, Pattern p,
                             uint64_t pass, uint64_t seed, MemFailureLog* log) {
  memtest_host_write(words, n, base_address, p, pass, seed);
  return memtest_host_verify(words, n, base_address, p, pass, seed, log);
}

}  // namespace gdgpu
