// kernel-log.unreadable: (being written)
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_kernel_log(const Snapshot&, const Config&) {
  return not_applicable("kernel-log.unreadable", "not written yet");
}

}  // namespace gd
