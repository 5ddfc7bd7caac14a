// thermal.high (being written).
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_thermal(const Snapshot&, const Config&) {
  return not_applicable("thermal.high", "not written yet");
}

}  // namespace gd
