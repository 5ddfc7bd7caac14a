// Small helpers shared by the checks: making findings and quoting evidence.
// The snapshot queries they use are in facts/query.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "facts/query.h"

namespace gd {

// A finding with id, severity and summary; the check adds the rest.
Finding make_finding(std::string id, Severity severity, std::string summary);
// The single "not applicable on this machine" finding for an id.
std::vector<Finding> not_applicable(std::string id, std::string why);
// The single "ok" finding for an id.
std::vector<Finding> all_ok(std::string id, std::string summary);

// A line explain read, as evidence: "line 12: <the line>" (at most 300 bytes of it).
std::string line_ref(const ReportedError& r);
}  // namespace gd
