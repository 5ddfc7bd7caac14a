// Tests of the memory test's patterns (gpu/patterns.h), on the CPU: the very
// pattern_word / record_failure functions the device kernels of
// gpu/memtest.cu run, driven by the host reference memtest_host.
#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "gpu/patterns.h"

namespace gdgpu {
namespace {

constexpr uint64_t kBase = 0x7f0000200000ULL;  // a device-like address, 2 MiB aligned

TEST(GpuPatterns, Mix64IsSplitmix64) {
  // splitmix64 seeded with 0: its first output is the published reference
  // value (Vigna's splitmix64.c), so mix64's seeds stay comparable.
  EXPECT_EQ(splitmix64_final(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
  // mix64 is element i of a splitmix64 stream: consecutive i step the state
  // by the golden ratio.
  const uint64_t start = splitmix64_final(7 * 0x9e3779b97f4a7c15ULL + 0x9e3779b97f4a7c15ULL);
  EXPECT_EQ(mix64(7, 0), splitmix64_final(start + 0x9e3779b97f4a7c15ULL));
  EXPECT_EQ(mix64(7, 5), splitmix64_final(start + 6 * 0x9e3779b97f4a7c15ULL));
}

TEST(GpuPatterns, AddressPatternHoldsEachWordsOwnAddress) {
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < 100000; ++i) {
    const uint64_t w = pattern_word(Pattern::kAddress, kBase, i, 0, 1);
    EXPECT_EQ(w, kBase + 8 * i);
    // The same in every pass and for every seed: it is the address.
    EXPECT_EQ(w, pattern_word(Pattern::kAddress, kBase, i, 3, 99));
    seen.insert(w);
  }
  EXPECT_EQ(seen.size(), 100000u);
}

TEST(GpuPatterns, WalkingOnesCoversEveryBit) {
  for (uint64_t pass = 0; pass < 3; ++pass) {
    uint64_t all = 0;
    for (uint64_t i = 0; i < 64; ++i) {
      const uint64_t w = pattern_word(Pattern::kWalkingOnes, kBase, 1000 + i, pass, 1);
      EXPECT_EQ(std::bitset<64>(w).count(), 1u) << i;
      EXPECT_EQ(all & w, 0u) << "bit repeated within 64 words at " << i;
      all |= w;
      // Walking zeros is its complement.
      EXPECT_EQ(pattern_word(Pattern::kWalkingZeros, kBase, 1000 + i, pass, 1), ~w);
    }
    EXPECT_EQ(all, ~uint64_t{0});
  }
  // A pass shifts the bit: word i sees a different bit in the next pass.
  EXPECT_EQ(pattern_word(Pattern::kWalkingOnes, kBase, 5, 0, 1), uint64_t{1} << 5);
  EXPECT_EQ(pattern_word(Pattern::kWalkingOnes, kBase, 5, 1, 1), uint64_t{1} << 6);
  EXPECT_EQ(pattern_word(Pattern::kWalkingOnes, kBase, 63, 1, 1), uint64_t{1});
}

TEST(GpuPatterns, RandomIsReproducibleAndDiffersBySeedAndPass) {
  constexpr uint64_t kN = 4096;
  std::set<uint64_t> seed1, seed2;
  uint64_t bits = 0;
  for (uint64_t i = 0; i < kN; ++i) {
    const uint64_t a = pattern_word(Pattern::kRandom, kBase, i, 0, 1);
    EXPECT_EQ(a, pattern_word(Pattern::kRandom, kBase + 4096, i, 0, 1)) << "depends on address";
    EXPECT_EQ(a, mix64(1, i));
    seed1.insert(a);
    seed2.insert(pattern_word(Pattern::kRandom, kBase, i, 0, 2));
    bits += std::bitset<64>(a).count();
  }
  EXPECT_EQ(seed1.size(), kN);  // no repeats
  // Seeds 1 and 2 give unrelated streams, not shifted or permuted copies;
  // and each pass reseeds (seed + pass), so pass 1 differs from pass 0.
  size_t common = 0;
  for (uint64_t v : seed2) common += seed1.count(v);
  EXPECT_EQ(common, 0u);
  EXPECT_NE(pattern_word(Pattern::kRandom, kBase, 0, 1, 1),
            pattern_word(Pattern::kRandom, kBase, 0, 0, 1));
  // About half the bits set (32 per word): a stuck-at cell sees both values.
  const double mean = static_cast<double>(bits) / kN;
  EXPECT_GT(mean, 31.0);
  EXPECT_LT(mean, 33.0);
}

TEST(GpuPatterns, PatternNames) {
  EXPECT_STREQ(pattern_name(Pattern::kAddress), "address");
  EXPECT_STREQ(pattern_name(Pattern::kWalkingOnes), "walking-ones");
  EXPECT_STREQ(pattern_name(Pattern::kWalkingZeros), "walking-zeros");
  EXPECT_STREQ(pattern_name(Pattern::kRandom), "random");
}

MemFailureLog empty_log() {
  MemFailureLog log{};
  return log;
}

TEST(GpuMemtestHost, CleanMemoryPassesEveryPattern) {
  std::vector<uint64_t> words(1 << 16);
  for (Pattern p :
       {Pattern::kAddress, Pattern::kWalkingOnes, Pattern::kWalkingZeros, Pattern::kRandom}) {
    for (uint64_t pass = 0; pass < 2; ++pass) {
      MemFailureLog log = empty_log();
      EXPECT_EQ(memtest_host(words.data(), words.size(), kBase, p, pass, 1, &log), 0u);
      EXPECT_EQ(log.count, 0u);
    }
  }
}

TEST(GpuMemtestHost, PlantedBitFlipIsFoundAtItsOffset) {
  for (Pattern p :
       {Pattern::kAddress, Pattern::kWalkingOnes, Pattern::kWalkingZeros, Pattern::kRandom}) {
    std::vector<uint64_t> words(1 << 16);
    const size_t k = words.size() / 2 + 3;
    memtest_host_write(words.data(), words.size(), kBase, p, 0, 1);
    const uint64_t expected = words[k];
    words[k] ^= uint64_t{1} << 17;  // what --plant-fault memory does on the GPU
    MemFailureLog log = empty_log();
    EXPECT_EQ(memtest_host_verify(words.data(), words.size(), kBase, p, 0, 1, &log), 1u);
    ASSERT_EQ(log.count, 1u);
    EXPECT_EQ(log.first[0].offset, k * 8);
    EXPECT_EQ(log.first[0].address, kBase + k * 8);
    EXPECT_EQ(log.first[0].expected, expected);
    EXPECT_EQ(log.first[0].expected, pattern_word(p, kBase, k, 0, 1));
    EXPECT_EQ(log.first[0].actual, expected ^ (uint64_t{1} << 17));
    EXPECT_EQ(log.first[0].pattern, static_cast<int>(p));
  }
}

TEST(GpuMemtestHost, WrongSeedOrPassIsCaught) {
  std::vector<uint64_t> words(1024);
  memtest_host_write(words.data(), words.size(), kBase, Pattern::kRandom, 0, 1);
  MemFailureLog log = empty_log();
  EXPECT_EQ(memtest_host_verify(words.data(), words.size(), kBase, Pattern::kRandom, 0, 2, &log),
            1024u);
  memtest_host_write(words.data(), words.size(), kBase, Pattern::kWalkingOnes, 0, 1);
  log = empty_log();
  EXPECT_EQ(
      memtest_host_verify(words.data(), words.size(), kBase, Pattern::kWalkingOnes, 1, 1, &log),
      1024u);
}

TEST(GpuMemtestHost, FailuresAreCappedAtSixteenButAllCounted) {
  std::vector<uint64_t> words(4096);
  memtest_host_write(words.data(), words.size(), kBase, Pattern::kWalkingZeros, 2, 9);
  for (size_t k = 100; k < 140; ++k) words[k] = 0;  // 40 failing words
  MemFailureLog log = empty_log();
  EXPECT_EQ(
      memtest_host_verify(words.data(), words.size(), kBase, Pattern::kWalkingZeros, 2, 9, &log),
      40u);
  EXPECT_EQ(log.count, 40u);
  for (int s = 0; s < kMaxMemFailures; ++s) {
    EXPECT_EQ(log.first[s].offset, (100 + s) * 8u) << s;
    EXPECT_EQ(log.first[s].actual, 0u);
    EXPECT_EQ(log.first[s].pattern, static_cast<int>(Pattern::kWalkingZeros));
  }
  // A second verify appends to the count; slots stay the first sixteen.
  EXPECT_EQ(
      memtest_host_verify(words.data(), words.size(), kBase, Pattern::kWalkingZeros, 2, 9, &log),
      40u);
  EXPECT_EQ(log.count, 80u);
  EXPECT_EQ(log.first[0].offset, 800u);
}

TEST(GpuMemtestHost, RecordFailureIgnoresSlotsPastTheCap) {
  // A canary after the log: a slot past the cap must not be written at all
  // (on the GPU that would be memory after the device log).
  struct Guarded {
    MemFailureLog log;
    MemFailure canary[4];
  } g{};
  std::memset(g.canary, 0xab, sizeof(g.canary));
  record_failure(&g.log, kMaxMemFailures, Pattern::kRandom, kBase, 7, 1, 2);
  record_failure(&g.log, kMaxMemFailures + 1, Pattern::kRandom, kBase, 7, 1, 2);
  record_failure(&g.log, ~0ULL, Pattern::kRandom, kBase, 7, 1, 2);
  for (const MemFailure& f : g.log.first) EXPECT_EQ(f.address, 0u);
  for (const MemFailure& f : g.canary) EXPECT_EQ(f.address, 0xababababababababULL);
  record_failure(&g.log, kMaxMemFailures - 1, Pattern::kRandom, kBase, 7, 1, 2);
  EXPECT_EQ(g.log.first[kMaxMemFailures - 1].address, kBase + 56);
  EXPECT_EQ(g.log.first[kMaxMemFailures - 1].offset, 56u);
  EXPECT_EQ(g.log.first[kMaxMemFailures - 1].expected, 1u);
  EXPECT_EQ(g.log.first[kMaxMemFailures - 1].actual, 2u);
}

}  // namespace
}  // namespace gdgpu
