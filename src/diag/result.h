// `gpudoctor diag`: what one run of the active tests measured. The GPU
// helper (gpu/, its own binary) answers in JSON lines (docs/diag.md
// "Helper protocol"); diag/protocol.h parses them into a DiagRun, the
// parent adds the NVML samples it took during the load, diag/evaluate.h
// turns the run into findings, diag/json.h writes it into the report and the
// history. Units are base units: bytes, bytes/s, FLOP/s, ms, µs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gd {

inline constexpr const char* kDiagHelperSchema = "gpudoctor.diag-helper/v1";
inline constexpr const char* kDiagRunSchema = "gpudoctor.diag/v1";

// How a test ended: pass (ran, verified), fail (ran and the hardware was
// wrong: a mismatch, a failing address), error (could not run: a CUDA,
// cuBLAS or NCCL error, too little free memory), skip (not applicable: one
// GPU for a multi-GPU test, a dtype the GPU lacks).
enum class DiagStatus { kPass, kFail, kError, kSkip };
const char* diag_status_name(DiagStatus s);  // "pass", "fail", "error", "skip"

// A GPU as the helper's CUDA runtime sees it.
struct DiagDevice {
  std::string bus_id;  // normalized "0000:17:00.0"
  int cuda_index = -1;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
  uint64_t memory_bytes = 0;
  uint64_t free_bytes = 0;  // when the helper started
  int clock_khz = 0;        // SM clock the runtime reports (max boost)
  int mem_clock_khz = 0;
  int mem_bus_width_bits = 0;
};

// One test on one GPU without test-specific figures: "context" (create a
// context, allocate), "kernel" (a small kernel, result verified).
struct DiagTestResult {
  std::string test;
  std::string bus_id;
  DiagStatus status = DiagStatus::kPass;
  std::string message;  // why fail/error/skip; "" on pass
  double duration_ms = 0;
};

// A copy's bandwidth: h2d / d2h (pinned host memory, over PCIe or C2C) and
// d2d (device memory read + written, both counted: 2 x bytes / time, as
// NVIDIA's bandwidthTest counts it).
struct DiagCopyResult {
  std::string bus_id;
  std::string direction;  // "h2d", "d2h", "d2d"
  DiagStatus status = DiagStatus::kPass;
  std::string message;
  uint64_t bytes = 0;  // per copy
  double bytes_per_s = 0;
  bool verified = false;   // the data arrived intact (checked)
  int64_t mismatches = 0;  // elements that did not
  double duration_ms = 0;
};

// One failing address of the memory test.
struct DiagMemFailure {
  uint64_t offset = 0;    // bytes from the start of the tested allocation
  uint64_t address = 0;   // device virtual address
  uint64_t expected = 0;  // the 64-bit word written
  uint64_t actual = 0;    // the word read back
  std::string pattern;    // "address", "walking-ones", "walking-zeros", "random"
};

struct DiagMemtestResult {
  std::string bus_id;
  DiagStatus status = DiagStatus::kPass;
  std::string message;
  uint64_t bytes = 0;  // tested
  int passes = 0;
  std::vector<std::string> patterns;
  uint64_t seed = 0;                     // of the "random" pattern
  int64_t errors = 0;                    // failing words, all patterns and passes
  std::vector<DiagMemFailure> failures;  // the first few (the helper caps them)
  double duration_ms = 0;
};

// A sustained GEMM: the throughput phase's FLOP/s; the verification phase
// compares every product with the first one bit for bit (cuBLAS is
// deterministic on one GPU), and that one with a reference kernel.
struct DiagGemmResult {
  std::string bus_id;
  std::string dtype;  // "fp32", "tf32", "fp16", "bf16" (inputs; FP32 accumulate)
  DiagStatus status = DiagStatus::kPass;
  std::string message;
  int m = 0, n = 0, k = 0;
  int64_t iterations = 0;  // timed
  double flops_per_s = 0;
  int64_t checked = 0;       // products compared
  int64_t mismatches = 0;    // elements that differed, over all compared products
  double max_rel_error = 0;  // of the first product against the reference
  double duration_ms = 0;
};

// Peer-to-peer from src to dst (cudaMemcpyPeer with access enabled).
struct DiagP2pResult {
  std::string src;  // bus ids
  std::string dst;
  DiagStatus status = DiagStatus::kPass;
  std::string message;
  bool access = false;     // cudaDeviceCanAccessPeer
  double bytes_per_s = 0;  // unidirectional, large copies
  double latency_us = 0;   // one small copy, median
  bool verified = false;
  int64_t mismatches = 0;
};

// NCCL all-reduce (sum, float) over all tested GPUs, one process.
struct DiagNcclPoint {
  uint64_t bytes = 0;
  double time_us = 0;
  double algbw_bytes_per_s = 0;  // bytes / time
  double busbw_bytes_per_s = 0;  // algbw x 2(n-1)/n (nccl-tests' convention)
};

struct DiagNcclResult {
  std::vector<std::string> bus_ids;
  DiagStatus status = DiagStatus::kPass;
  std::string message;
  std::vector<DiagNcclPoint> points;  // ascending bytes
  int64_t mismatches = 0;             // result elements not equal to the expected sum
  int nccl_version = 0;
};

// Weak scaling of a data-parallel step: every GPU computes the same GEMM
// work, then all-reduces a gradient buffer. speedup = n x one / all.
struct DiagScalingResult {
  std::vector<std::string> bus_ids;
  DiagStatus status = DiagStatus::kPass;
  std::string message;
  double one_gpu_step_ms = 0;              // the compute alone, on the first GPU
  double all_gpu_step_ms = 0;              // compute + all-reduce, all GPUs
  std::vector<double> per_gpu_compute_ms;  // the compute alone, each GPU (bus_ids order)
  uint64_t gradient_bytes = 0;
  double speedup = 0;
  double efficiency = 0;  // speedup / n
};

// One NVML sample the parent took while the helper ran.
struct DiagSample {
  double t_ms = 0;  // since the helper started
  std::string bus_id;
  std::optional<int> temperature_c;
  std::optional<uint32_t> power_mw;
  std::optional<uint32_t> sm_clock_mhz;
  std::optional<uint64_t> clock_event_reasons;  // nvidia-facts.md §4.5 bits
  std::optional<uint32_t> utilization_pct;
};

// A helper error not tied to one test's result (a device that would not
// open, an unknown GPU, an error line).
struct DiagError {
  std::string test;    // "" when none
  std::string bus_id;  // "" when none
  std::string message;
};

struct DiagRun {
  std::string schema = kDiagRunSchema;
  int level = 1;
  double duration_s = 0;  // --duration: the sustained tests' length each
  uint64_t seed = 0;
  std::string helper;      // the helper binary run
  std::string started_at;  // ISO 8601 UTC
  double wall_ms = 0;      // helper start to exit

  // From the helper's hello line.
  int cuda_runtime_version = 0;  // 13000 = 13.0
  int cuda_driver_version = 0;
  int cublas_version = 0;
  int nccl_version = 0;  // 22809 = 2.28.9

  std::vector<DiagDevice> devices;
  std::vector<DiagTestResult> tests;
  std::vector<DiagCopyResult> copies;
  std::vector<DiagMemtestResult> memtests;
  std::vector<DiagGemmResult> gemms;
  std::vector<DiagP2pResult> p2p;
  std::optional<DiagNcclResult> nccl;
  std::optional<DiagScalingResult> scaling;
  std::vector<DiagSample> samples;
  std::vector<DiagError> errors;

  // Why the helper's answer ended early: "" when it said "done"; else
  // "timeout after 95.0 s in memtest on 0000:17:00.0", "crashed: SIGSEGV in
  // gemm on ...", "exit 1", "no answer: ...". The results before it stand.
  std::string incomplete;
  std::string last_started;  // "memtest 0000:17:00.0": the test running when it ended
  std::string stderr_tail;   // the helper's last stderr lines, for evidence
};

}  // namespace gd
