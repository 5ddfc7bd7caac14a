// What `env` and `run` share with `check`: probe the machine (or load a
// snapshot), load the config, run every check, and judge which GPUs are fit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "job/fitness.h"
#include "probe/probe.h"
#include "snapshot/snapshot.h"

namespace gd {

struct JobCheck {
  Snapshot snapshot;
  Report report;  // report.snapshot points at `snapshot`: a JobCheck stays put
  Fitness fitness;

  JobCheck() = default;
  JobCheck(const JobCheck&) = delete;
  JobCheck& operator=(const JobCheck&) = delete;
};

// Why check_for_job could not judge the machine: its one-line error, and
// whose fault it was (a bad --config or selection is the user's, a usage
// error; an unreadable --from snapshot is not).
struct JobCheckError {
  bool usage = false;
  std::string message;
};

// `only` and `skip` are the command's --only / --skip (select_for); `job` is
// the command `run` will start, whose launcher may ask for a number of GPUs
// (probe/job_request.h). Empty when `out` holds the judged machine.
std::optional<JobCheckError> check_for_job(const ProbeOptions& probe, const std::string& from,
                                           const std::string& config,
                                           const std::vector<std::string>& only,
                                           const std::vector<std::string>& skip,
                                           const std::vector<std::string>& job, JobCheck* out);

}  // namespace gd
