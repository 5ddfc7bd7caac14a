// What `gpudoctor diag` tests, level by level, and the finding ids each test
// can give: `gpudoctor diag --list-tests` prints it and docs/checks.md is
// generated from it, as from the check registry for `gpudoctor check`.
// evaluate_diag() gives exactly these ids, in this order (a unit test holds
// the two together).
#pragma once

#include <string>
#include <vector>

namespace gd {

struct DiagTestInfo {
  const char* name;         // "gemm"
  int level;                // the lowest --level that runs it
  const char* description;  // what a pass means, one line
  std::vector<std::string> ids;
};

const std::vector<DiagTestInfo>& diag_tests();

}  // namespace gd
