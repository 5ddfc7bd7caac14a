// STUB: to be replaced by the real check.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_gpu_missing(const Snapshot&, const Config&) { return {}; }

}  // namespace gd
