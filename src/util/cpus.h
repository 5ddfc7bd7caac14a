// The CPUs this process may run on (sched_getaffinity), and pinning to some.
#pragma once

#include <vector>

#include "util/result.h"

namespace gd {

// The CPUs of this process's affinity mask, ascending.
Result<std::vector<int>> allowed_cpus();
// Pins this process (its calling thread) to `cpus` (not empty).
Result<Done> set_cpus(const std::vector<int>& cpus);

}  // namespace gd
