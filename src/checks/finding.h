// Findings and the report: what checks produce and sinks render.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// Ordered from best to worst except kNotApplicable, which never counts
// towards the verdict ("not applicable on this machine" is not "ok").
enum class Severity { kOk, kInfo, kWarn, kFail, kNotApplicable };

const char* severity_name(Severity s);  // "ok", "info", "warn", "fail", "n/a"
// The severity severity_name() gives that name; n/a for "n/a" and for
// anything else (a stored name this version does not know).
Severity severity_from_name(std::string_view name);
// info, warn or fail: a finding that says something, the ones the history
// keeps and the exporter lists (not ok, not n/a).
bool says_something(Severity s);
// How bad a severity is: n/a 0 < ok 1 < info 2 < warn 3 < fail 4.
int severity_weight(Severity s);
// The worse of two severities (n/a counts as better than ok).
Severity worse(Severity a, Severity b);

// A comparison of two numbers that a check's verdict rests on, stated as the
// requirement for health ("RLIMIT_AS >= what CUDA needs"), so that a reader
// and the invariant test (tests/invariants) can see the verdict follow from
// it: a warn/fail finding has a requirement not met, an ok one has all met.
struct Comparison {
  std::string what;      // "RLIMIT_AS (ulimit -v) vs the address space cuInit took"
  std::string kind;      // how to read the values: "version", "bytes" or "number"
  std::string actual;    // the observed value, machine-readable: "16384000000", "550.54.14"
  std::string op;        // the requirement, actual OP required: "<", "<=", "==", ">=", ">"
  std::string required;  // the bound: "13925089280", "525.60.13"
  bool met = false;      // the check's reading of the requirement
};

struct Finding {
  std::string id;  // stable catalog id, "area.condition" (see catalog/findings.h)
  Severity severity = Severity::kOk;
  std::vector<std::string> gpus;        // PCI bus ids concerned ("0000:17:00.0")
  std::string summary;                  // one line a newcomer understands
  std::vector<std::string> evidence;    // exact values or lines that prove it
  std::vector<std::string> remedy;      // exact commands or steps, in order
  std::string follows_from;             // id of the root cause this is a consequence of
  std::string check;                    // name of the check that produced it
  std::vector<Comparison> comparisons;  // the numbers the verdict rests on
  // explain: what decided this finding's place in the ranking ("confirmed by
  // check ...", "possible cause of CUDA error 999, ..."); "" elsewhere.
  std::string ranked_by;
  // explain: the table rows that put it in the ranking ("cuda:999",
  // "phrase:<case id>", "check:uvm"), for tests/cases/eval.py's per-rule
  // accounting; empty elsewhere.
  std::vector<std::string> signals;
  // One short line for a scheduler's reason field (Slurm's Reason=, a
  // taint), where the id and GPUs do not say enough ("orphan pid 1234 (slurm
  // job 4711 ended) holds 70.0 GiB on GPU 0000:41:00.0"); "" = id and GPUs.
  std::string brief;
};

// The verdict is the worst warn or fail among findings, else ok (verdict_of).
struct Report {
  std::string schema = "gpudoctor.report/v1";
  Severity verdict = Severity::kOk;
  std::vector<Finding> findings;       // rank order: most likely root cause first
  const Snapshot* snapshot = nullptr;  // gpus[] and probes[] come from here
  // What the user silenced (--only, --skip, the config file), kept with the
  // report so that a silence is visible wherever the report goes.
  std::vector<std::string> only;
  std::vector<std::string> skip;
  // explain: the text shows an error no finding attributes; the verdict is
  // "unknown" (exit 3), whatever the findings' severities say.
  bool undecided = false;
};

// Monitoring-plugin exit code for a verdict: 0 ok (or info), 1 warn, 2 fail.
int exit_code_for(Severity verdict);

}  // namespace gd
