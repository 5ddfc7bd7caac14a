// node-problem-detector's custom-plugin protocol (`gpudoctor check --format
// npd`): one short status line on stdout and an exit code NPD understands.
//
// NPD (pkg/custompluginmonitor/plugin/plugin.go) maps the exit code to a
// status: 0 OK (a permanent rule's condition turns False), 1 NonOK (True,
// with our line as the condition's message), anything else Unknown. It trims
// the output and cuts it at max_output_length bytes (default 80), so the line
// names the verdict, the root-cause finding and its first GPU first, and fits
// in kNpdMaxMessage bytes on its own (docs/kubernetes.md).
//
// A warning is not a node problem by default: NPD conditions are binary and a
// warn (a hot GPU, persistence mode off) must not make operators cordon a
// node. It exits 0; NpdOptions::warn_is_problem turns it into NonOK for a
// second, temporary rule that would report warnings as events.
#pragma once

#include <string>

#include "checks/finding.h"

namespace gd {

inline constexpr size_t kNpdMaxMessage = 80;  // NPD's default max_output_length, bytes

struct NpdResult {
  int exit_code = 2;    // 0 OK, 1 NonOK (a problem), 2 Unknown (could not decide)
  std::string message;  // one line, newline-terminated, short enough for NPD's limit
};

struct NpdOptions {
  bool warn_is_problem = false;  // exit 1 (NonOK) on a warn verdict too
};

// Examples:
//   gpudoctor: ok (8 GPUs)                                   exit 0
//   gpudoctor: warn thermal.high GPU 0000:41:00.0            exit 0
//   gpudoctor: fail xid.79 GPU 0000:17:00.0 +1 GPU; +2 more  exit 1
//   gpudoctor: unknown (no report)                           exit 2
NpdResult render_npd(const Report& r);
NpdResult render_npd(const Report& r, const NpdOptions& opt);

}  // namespace gd
