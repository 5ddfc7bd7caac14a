// The causes an observed error points at but the text cannot decide: for
// each error code the snapshot holds (CUDA, NVML, container runtime, kernel
// log), the catalog ids it may come from, with what tells them apart.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "snapshot/snapshot.h"

namespace gd {

// "Possible cause" findings (severity warn), most likely first, for every
// id the snapshot's errors point at that is not in `decided` (ids of checks
// that ran and so answered themselves).
std::vector<Finding> suspect_findings(const Snapshot& s, const std::set<std::string>& decided);

}  // namespace gd
