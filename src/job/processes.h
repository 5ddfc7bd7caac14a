// The processes of a job that `gpudoctor run --watch` started, read from
// /proc (docs/run.md "Every process of the job"). run --watch is the job's
// subreaper (PR_SET_CHILD_SUBREAPER): a process of the job whose parent
// ends is re-parented to it, not to init, whatever process group or
// session it made for itself. So the job is every descendant of the
// watcher's main thread that the watcher did not have before the job
// started; the sampler child hangs off another thread and is never one.
//
// The real /proc, never --root's: these are this machine's live processes,
// not a recorded tree. The directory is a parameter for the unit tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "util/result.h"

namespace gd {

struct JobProcess {
  pid_t pid = 0;
  pid_t pgid = 0;    // its process group
  std::string name;  // comm, as ps shows it
};

// The children of thread `tid` of process `pid`: PROC/PID/task/TID/children
// (Linux 3.5, CONFIG_PROC_CHILDREN, set by every distribution kernel we
// know). The error says why the file could not be read.
Result<std::vector<pid_t>> thread_children(const std::string& proc, pid_t pid, pid_t tid);

// `roots` and their descendants, transitively, that are still running:
// zombies (ended, not yet reaped) and processes gone meanwhile are left
// out. Each process once, parents before their children.
std::vector<JobProcess> live_processes(const std::string& proc, const std::vector<pid_t>& roots);

}  // namespace gd
