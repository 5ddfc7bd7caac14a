// node-problem-detector's custom-plugin protocol (`gpudoctor check --format
// npd`): one short status line on stdout and an exit code NPD understands.
#pragma once

#include <string>

#include "report/finding.h"

namespace gd {

struct NpdResult {
  int exit_code = 2;    // 0 OK, 1 NonOK (a problem), 2 Unknown (could not decide)
  std::string message;  // one line, newline-terminated, short enough for NPD's limit
};

NpdResult render_npd(const Report& r);

}  // namespace gd
