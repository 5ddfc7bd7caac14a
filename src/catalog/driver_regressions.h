// Driver releases with a known regression: which builds, what breaks, the
// build that fixes it, and the public thread where NVIDIA or the affected
// project confirmed it (docs/nvidia-facts.md §14). Read by the
// driver-regression check and, through it, by explain.
#pragma once

#include <string_view>
#include <vector>

#include "catalog/driver_compat.h"

namespace gd {

// Where the regression bites; a machine outside it is not affected.
enum class RegressionScope {
  kAny,
  kMig,       // a GPU with MIG enabled
  kMultiGpu,  // two or more GPUs (peer-to-peer, NCCL)
};

struct DriverRegression {
  // Affected: the exact builds when listed, else every build from `from`
  // up to `to` (inclusive), or up to `fixed` (exclusive) when `to` is "".
  std::vector<const char*> builds;
  const char* from;
  const char* to;
  const char* fixed;  // the build (or branch) that fixes it, as the source names it
  const char* what;   // what breaks, one sentence
  RegressionScope scope;
  // Lower-case words (4 bytes or more: util/substring_index.h) of which
  // one, in pasted error text, shows this regression rather than another.
  std::vector<const char*> symptoms;
  const char* source;   // the thread, and who confirmed it
  const char* seen_in;  // its record in tests/cases/
};

const std::vector<DriverRegression>& driver_regressions();
// The rows whose builds include `v`.
std::vector<const DriverRegression*> regressions_for(const DriverVersion& v);
// True when `lowered` holds one of the row's symptom words.
bool shows_regression(const DriverRegression& r, std::string_view lowered);
// True when `lowered` holds a symptom word of any row (one pass).
bool shows_any_regression(std::string_view lowered);

}  // namespace gd
