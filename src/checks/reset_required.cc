// gpu.reset-required: (being written)
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_reset_required(const Snapshot&, const Config&) {
  return not_applicable("gpu.reset-required", "not written yet");
}

}  // namespace gd
