// The parsers of the workload probe (workload.cc), exposed for their unit
// tests: pure functions of one file's text or one cgroup path.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gd {

// At most this many GPU processes are read; the rest is a gap.
inline constexpr size_t kWorkloadMaxProcesses = 4096;
// At most this many /proc entries in the node-wide scan.
inline constexpr size_t kWorkloadMaxScan = 65536;

struct ProcStat {
  std::string state;             // "R", "S", "D", "Z", ...
  uint64_t starttime_ticks = 0;  // clock ticks since boot
};
// /proc/PID/stat; nullopt when garbled.
std::optional<ProcStat> parse_proc_stat(std::string_view text);
// The real uid: the first number of /proc/PID/status's "Uid:" line.
std::optional<uint32_t> parse_status_real_uid(std::string_view text);
// The one path of /proc/PID/cgroup that tells most about the job; nullopt
// when no line has the "hierarchy:controllers:path" shape.
std::optional<std::string> select_cgroup_path(std::string_view text);

struct JobRef {
  std::string kind;  // "slurm", "kubernetes", "container"; "" none
  std::string id;    // job id, pod uid (with dashes), container id
};
// The job a cgroup path names.
JobRef job_from_cgroup(std::string_view path);
// SLURM_JOB_ID's value in a NUL-separated /proc/PID/environ; "" when absent
// or not a job id.
std::string slurm_job_from_environ(std::string_view environ);

struct SlurmStep {
  std::string job;   // "4711"
  std::string step;  // "batch", "0", "extern", "interactive"; "" none
};
// A slurmstepd's /proc/PID/cmdline; nullopt when it names no job.
std::optional<SlurmStep> parse_slurmstepd_cmdline(std::string_view cmdline);
// uid -> user name from /etc/passwd (the first name of each uid).
std::map<uint32_t, std::string> parse_passwd(std::string_view text);

}  // namespace gd
