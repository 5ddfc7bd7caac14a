// STUB: to be replaced by the real check.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_too_old_for_cuda(const Snapshot&, const Config&) { return {}; }

}  // namespace gd
