// ecc.uncorrectable (being written).
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_ecc(const Snapshot&, const Config&) {
  return not_applicable("ecc.uncorrectable", "not written yet");
}

}  // namespace gd
