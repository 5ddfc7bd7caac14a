// pcie.errors: (being written)
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_pcie_errors(const Snapshot&, const Config&) {
  return not_applicable("pcie.errors", "not written yet");
}

}  // namespace gd
