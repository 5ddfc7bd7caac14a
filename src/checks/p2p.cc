// p2p.blocked (being written).
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_p2p(const Snapshot&, const Config&) {
  return not_applicable("p2p.blocked", "not written yet");
}

}  // namespace gd
