// power.throttled (being written).
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_power(const Snapshot&, const Config&) {
  return not_applicable("power.throttled", "not written yet");
}

}  // namespace gd
