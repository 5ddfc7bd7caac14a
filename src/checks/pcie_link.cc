// pcie.link-degraded (being written).
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_pcie_link(const Snapshot&, const Config&) {
  return not_applicable("pcie.link-degraded", "not written yet");
}

}  // namespace gd
