// gpu.fallen-off-bus: (being written)
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_fallen_off_bus(const Snapshot&, const Config&) {
  return not_applicable("gpu.fallen-off-bus", "not written yet");
}

}  // namespace gd
