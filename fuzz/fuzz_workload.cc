// libFuzzer target: the workload probe's parsers of /proc files (probe/
// workload.h) and the CUDA child's gate line (probe/context_policy.h), on
// any bytes. Each either refuses the text or returns values taken from it;
// a parsed gate line survives a round trip.
//
//   4711 (python) S 1 4711 4711 0 -1 4194560 ... 100 ...     /proc/PID/stat
//   0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0
//   slurmstepd: [4711.batch]                                 its cmdline
//   {"allow":["0000:17:00.0"],"deny":{},"other":"..."}       the gate line
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "probe/context_policy.h"
#include "probe/workload.h"

namespace {

bool within(std::string_view part, std::string_view whole) { return part.size() <= whole.size(); }

// What reaches a report from a file's text is printable (probe/workload.cc
// escapes the rest): no control byte.
bool printable_text(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto st = gd::parse_proc_stat(text)) GD_REQUIRE(within(st->state, text));
  gd::parse_status_real_uid(text);
  if (auto path = gd::select_cgroup_path(text)) {
    GD_REQUIRE(within(*path, text));
    gd::JobRef job = gd::job_from_cgroup(*path);
    GD_REQUIRE(job.kind.empty() == job.id.empty());
  }
  gd::JobRef job = gd::job_from_cgroup(text);
  GD_REQUIRE(job.kind.empty() == job.id.empty());
  GD_REQUIRE(within(gd::slurm_job_from_environ(text), text));
  if (auto step = gd::parse_slurmstepd_cmdline(text)) {
    GD_REQUIRE(!step->job.empty() && printable_text(step->step));
  }
  for (const auto& [uid, name] : gd::parse_passwd(text)) GD_REQUIRE(printable_text(name));
  auto gate = gd::parse_context_gate(text);
  if (!gate.ok()) {
    GD_REQUIRE(gate.error().find('\n') == std::string::npos);
    return 0;
  }
  std::string line = gd::context_gate_line(*gate);
  GD_REQUIRE(!line.empty() && line.back() == '\n');
  auto again = gd::parse_context_gate(std::string_view(line).substr(0, line.size() - 1));
  GD_REQUIRE(again.ok());
  GD_REQUIRE(again->allow == gate->allow && again->deny == gate->deny &&
             again->other == gate->other);
  return 0;
}
