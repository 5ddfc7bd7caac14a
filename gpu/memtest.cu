// The memory test (level 2+): most of the free memory, written and verified
// with each pattern of patterns.h (the same functions the CPU unit tests
// check), pass after pass until --duration is spent.
#include <algorithm>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "emit.h"
#include "helper.h"
#include "patterns.h"

namespace gdgpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kMinTestBytes = 64 * kMiB;
constexpr size_t kGranule = 2 * kMiB;  // allocation granularity of the driver
constexpr int kThreads = 256;
constexpr Pattern kPatterns[kPatternCount] = {Pattern::kAddress, Pattern::kWalkingOnes,
                                              Pattern::kWalkingZeros, Pattern::kRandom};

__global__ void memtest_write(uint64_t* w, size_t n, uint64_t base, Pattern p, uint64_t pass,
                              uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    w[i] = pattern_word(p, base, i, pass, seed);
}

// Counts every failing word; the first kMaxMemFailures claim a slot of the
// log by the count they saw (record_failure ignores the rest).
__global__ void memtest_verify(const uint64_t* w, size_t n, uint64_t base, Pattern p, uint64_t pass,
                               uint64_t seed, MemFailureLog* log) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    // volatile: read the word from memory now, not a value the compiler kept.
    const uint64_t actual = *static_cast<const volatile uint64_t*>(w + i);
    const uint64_t expected = pattern_word(p, base, i, pass, seed);
    if (actual != expected) {
      const unsigned long long slot = atomicAdd(&log->count, 1ULL);
      record_failure(log, slot, p, base, i, expected, actual);
    }
  }
}

// Allocates as much of the free memory as the test may take: all but
// max(5 %, 512 MiB), which the driver, cuBLAS and the later tests need.
// When the allocation fails (fragmentation, another process) it gives up
// half of what it asked above the minimum, and tries again.
cudaError_t alloc_most(DeviceBuffer<uint64_t>* buf, size_t free_bytes) {
  const size_t reserve = std::max(free_bytes / 20, 512 * kMiB);
  if (free_bytes < reserve + kMinTestBytes) return cudaErrorMemoryAllocation;
  size_t want = (free_bytes - reserve) & ~(kGranule - 1);
  for (;;) {
    const cudaError_t rc = buf->alloc(want / sizeof(uint64_t));
    if (rc == cudaSuccess) return rc;
    if (rc != cudaErrorMemoryAllocation || want <= kMinTestBytes) return rc;
    cudaGetLastError();  // out of memory is not sticky; clear it
    want = (kMinTestBytes + (want - kMinTestBytes) / 2) & ~(kGranule - 1);
  }
}

}  // namespace

bool run_memtest(const Gpu& gpu, const HelperOptions& opt) {
  emit_start("memtest", gpu.bus_id);
  const double t0 = now_ms();
  std::vector<std::string> pattern_names;
  for (Pattern p : kPatterns) pattern_names.push_back(pattern_name(p));
  uint64_t tested_bytes = 0;
  int passes = 0;
  int64_t errors = 0;
  std::vector<MemFailure> failures;

  auto emit = [&](const char* status, const std::string& message) {
    Line line("result");
    line.set("test", "memtest").set("gpu", gpu.bus_id).set("status", status);
    if (!message.empty()) line.set("message", message);
    line.set("bytes", tested_bytes)
        .set("passes", passes)
        .set("patterns", pattern_names)
        .set("seed", opt.seed)
        .set("errors", errors);
    if (failures.empty()) line.set("failures", std::vector<std::string>{});
    for (const MemFailure& f : failures) {
      line.add_object("failures")
          .set_in("offset", f.offset)
          .set_in("address", f.address)
          .set_in("expected", f.expected)
          .set_in("actual", f.actual)
          .set_in("pattern", std::string(pattern_name(static_cast<Pattern>(f.pattern))));
    }
    line.set("duration_ms", now_ms() - t0).send();
  };
  auto fail = [&](const char* what, cudaError_t rc) {
    emit("error", cuda_error(what, rc));
    return !is_sticky(rc);
  };

  cudaError_t rc = cudaSetDevice(gpu.cuda_index);
  if (rc != cudaSuccess) return fail("cudaSetDevice", rc);
  size_t free_bytes = 0, total_bytes = 0;
  if ((rc = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
    return fail("cudaMemGetInfo", rc);
  DeviceBuffer<uint64_t> words;
  if ((rc = alloc_most(&words, free_bytes)) != cudaSuccess) {
    if (rc == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      emit("error", "too little free GPU memory for the memory test: " +
                        std::to_string(free_bytes) + " bytes free");
      return true;
    }
    return fail("cudaMalloc", rc);
  }
  DeviceBuffer<MemFailureLog> log;
  if ((rc = log.alloc(1)) != cudaSuccess) return fail("cudaMalloc", rc);
  tested_bytes = words.bytes();
  const size_t n = words.count();
  const uint64_t base = reinterpret_cast<uint64_t>(words.get());
  const unsigned blocks = static_cast<unsigned>(std::max(gpu.multiprocessors, 1) * 16);
  bool planted = opt.plant_fault != "memory";
  const size_t plant_index = n / 2;
  const double budget_ms = opt.duration_s * 1000;

  // Full passes over all patterns until the time is spent (at least one).
  for (uint64_t pass = 0; passes == 0 || now_ms() - t0 < budget_ms; ++pass) {
    for (Pattern p : kPatterns) {
      memtest_write<<<blocks, kThreads>>>(words.get(), n, base, p, pass, opt.seed);
      if ((rc = cudaGetLastError()) != cudaSuccess) return fail("memtest write kernel", rc);
      if (!planted && p == Pattern::kRandom) {
        // --plant-fault memory: flip one bit of one written word, so the
        // verify below must report exactly that word.
        uint64_t w = 0;
        if ((rc = cudaMemcpy(&w, words.get() + plant_index, sizeof(w), cudaMemcpyDeviceToHost)) !=
            cudaSuccess)
          return fail("cudaMemcpy (plant)", rc);
        w ^= uint64_t{1} << 17;
        if ((rc = cudaMemcpy(words.get() + plant_index, &w, sizeof(w), cudaMemcpyHostToDevice)) !=
            cudaSuccess)
          return fail("cudaMemcpy (plant)", rc);
        planted = true;
      }
      if ((rc = cudaMemset(log.get(), 0, sizeof(MemFailureLog))) != cudaSuccess)
        return fail("cudaMemset", rc);
      memtest_verify<<<blocks, kThreads>>>(words.get(), n, base, p, pass, opt.seed, log.get());
      if ((rc = cudaGetLastError()) != cudaSuccess) return fail("memtest verify kernel", rc);
      MemFailureLog host_log;
      // cudaMemcpy waits for both kernels: their errors surface here.
      if ((rc = cudaMemcpy(&host_log, log.get(), sizeof(host_log), cudaMemcpyDeviceToHost)) !=
          cudaSuccess)
        return fail("memtest kernels", rc);
      errors += static_cast<int64_t>(host_log.count);
      const size_t logged = std::min<unsigned long long>(host_log.count, kMaxMemFailures);
      for (size_t k = 0; k < logged && failures.size() < kMaxMemFailures; ++k) {
        // A weak cell fails pass after pass: list each word once, so the
        // list shows as many distinct addresses as it can.
        const MemFailure& f = host_log.first[k];
        const bool seen = std::any_of(failures.begin(), failures.end(),
                                      [&](const MemFailure& g) { return g.offset == f.offset; });
        if (!seen) failures.push_back(f);
      }
    }
    ++passes;
  }
  if (errors > 0) {
    emit("fail", std::to_string(errors) + " failing 64-bit word reads");
  } else {
    emit("pass", "");
  }
  return true;
}

}  // namespace gdgpu
