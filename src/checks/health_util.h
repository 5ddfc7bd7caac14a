// Helpers shared by the health checks (thermal.high, power.throttled,
// clocks.throttled, ecc.uncorrectable, ecc.rows-pending, gpu.reset-required):
// folding per-GPU verdicts into one finding. How an NVML reading went, GPU
// labels and clock-event reasons are in facts/health.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checks/check.h"
#include "facts/health.h"

namespace gd {

Severity to_severity(ConfigSeverity s);

// Collects per-GPU verdicts of one check into its single finding: the worst
// severity, the GPUs at info or worse, and their evidence lines in order.
struct HealthTally {
  Severity worst = Severity::kOk;
  std::vector<std::string> gpus;      // bus ids at info or worse
  std::vector<std::string> evidence;  // lines of GPUs at info or worse
  std::vector<std::string> ok_lines;  // lines of healthy GPUs (for the ok finding)
  size_t judged = 0;                  // GPUs with a reading (value or error)
  int unopened = 0;                   // GPUs NVML could not open (note_unopened)
  std::vector<std::string> unopened_gpus;
  // bdf: finding_bdf(g) ("" leaves Finding::gpus alone).
  void add(Severity s, const std::string& bdf, std::string line);
  // Finding::gpus: the GPUs at info or worse, then the unopened ones.
  std::vector<std::string> all_gpus() const;
};

// A GPU NVML could not open (handle_rc != 0) has no readings to judge. The
// health checks do not call it healthy: a lost GPU (GPU_IS_LOST) is left to
// gpu.fallen-off-bus alone, so one lost GPU does not read as five health
// problems; any other code (NO_PERMISSION, ...) is noted as info ("GPU
// 0000:41:00.0: not checked: ... returned NVML_ERROR_NO_PERMISSION (4)").
// True when the GPU was skipped or noted.
bool note_unopened(const NvmlGpu& g, HealthTally* t);
// The remedy line for unreadable or unopened GPUs.
inline constexpr const char* kUnreadableRemedy =
    "A GPU NVML cannot read is lost or needs a reset: see gpu.fallen-off-bus and "
    "gpu.reset-required.";
// ", 1 not opened by NVML" style summary part; "" when none.
std::string unopened_part(const HealthTally& t);
// The finding of a tally: its worst severity, the summary parts (empty ones
// dropped) joined by "; " plus the unopened part, its GPUs and evidence.
Finding tally_finding(const char* id, const HealthTally& t, std::vector<std::string> parts);

}  // namespace gd
