// Running the checks and ranking their findings into a Report.
#pragma once

#include <string>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "util/result.h"

namespace gd {

// --only / --skip: each item is a check name ("devnodes"), a finding id
// ("devnodes.missing", "xid.79"), an area ("devnodes") or a glob over ids
// and check names ("advice.*", "xid.4?"). An item that names nothing is an
// error, so a typo never silently runs nothing.
Result<std::vector<const CheckEntry*>> select_checks(const std::vector<std::string>& only,
                                                     const std::vector<std::string>& skip);

// The checks a command runs: --only / --skip merged into the config's
// [checks] lists (--only replaces its only, --skip adds to its skip), which
// then go with the config into run_checks. Error: an item names nothing.
Result<std::vector<const CheckEntry*>> select_for(const std::vector<std::string>& only,
                                                  const std::vector<std::string>& skip,
                                                  Config* config);
// Runs the checks, drops findings that --only/--skip exclude by id, ranks
// the rest (rank_findings) and computes the verdict.
Report run_checks(const Snapshot& s, const Config& c, const std::vector<const CheckEntry*>& checks,
                  const std::vector<std::string>& only = {},
                  const std::vector<std::string>& skip = {});

// Orders findings most likely root cause first: by severity (fail, warn,
// info, ok, n/a), then by the catalog rank; marks symptoms and explained
// causes with follows_from.
void rank_findings(std::vector<Finding>* findings);

// The verdict on findings: the worst warn or fail, else ok. Notes (info,
// the advice.* findings) and n/a never lift it, so a healthy node reads OK
// everywhere: exit code, metrics, labels, Slurm.
Severity verdict_of(const std::vector<Finding>& findings);

}  // namespace gd
