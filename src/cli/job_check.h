// What `env` and `run` share with `check`: probe the machine (or load a
// snapshot), load the config, run every check, and judge which GPUs are fit.
#pragma once

#include <string>
#include <vector>

#include "checks/check.h"
#include "probe/probe.h"
#include "checks/finding.h"
#include "report/gpu_fitness.h"
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

// `command` names the subcommand in error messages ("env", "run"); only and
// skip are its --only / --skip (select_for); `job` is the command `run` will
// start, whose launcher may ask for a number of GPUs (probe/job_request.h). Returns 0, or the exit
// code after printing a one-line error: kExitUsage for a bad --config or selection, kExitInternal
// for an unreadable --from snapshot.
int check_for_job(const std::string& command, const ProbeOptions& probe, const std::string& from,
                  const std::string& config, const std::vector<std::string>& only,
                  const std::vector<std::string>& skip, const std::vector<std::string>& job,
                  JobCheck* out);

}  // namespace gd
