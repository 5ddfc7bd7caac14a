// The NVML sampler, parent side (`gpudoctor serve`, `gpudoctor diag`): one
// long-lived child (`gpudoctor __probe-nvml-sampler`, src/probe/nvml_sampler.h) that keeps
// NVML initialised and answers one request per sample. A child that hangs
// past the deadline is killed (SIGKILL to its process group) and reaped; one
// that died or answered garbage is replaced on the next call. A child stuck
// in the kernel (D state, a driver ioctl on a lost GPU) may not die even
// after SIGKILL: it is recorded and left behind, never waited for.
//
// Not thread-safe except cancel() and request_restart(): one thread (serve's sampler loop) calls
// sample(). The child is spawned by the calling thread and dies with it
// (PR_SET_PDEATHSIG), so call sample() from a thread that outlives the
// sampler.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct SamplerOptions {
  std::string exe;  // the gpudoctor binary, re-executed as the child
  std::string nvml_lib = "libnvidia-ml.so.1";
  std::vector<std::string> env;  // the child's complete environment, "NAME=value"
  double deadline_s = 10;        // per sample, a fresh child's nvmlInit included
};

struct SampleResult {
  bool ok = false;         // NVML answered (initialised, sample read)
  NvmlInfo nvml;           // the sample when ok; else what the child said, if anything
  double duration_ms = 0;  // request to answer (or to the kill)
  std::string error;       // why not ok: "timeout after 2.0 s in nvmlDeviceGetTemperature (GPU 3)",
                           // "crashed: SIGSEGV in ...", "nvmlInit_v2 returned ...", ...
  bool timed_out = false;  // not ok because the child hung past the deadline
  std::string call;        // the NVML call in progress when it hung or crashed:
                           // "nvmlDeviceGetTemperature (GPU 3)"; "" when none was
};

// Why an NVML answer is no sample ("" when it is one): the library did not
// load, nvmlInit failed, or the child hung or crashed (a recorded snapshot's
// child_error).
std::string nvml_sample_problem(const NvmlInfo& n);

class NvmlSampler {
 public:
  explicit NvmlSampler(SamplerOptions opt);
  ~NvmlSampler();  // kills the child (and forgets one that will not die)
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  // Asks the child for one sample, starting a child first when there is
  // none; returns within the deadline (plus a short kill grace).
  SampleResult sample();
  // From any thread: a sample() in progress ends at once (its child is
  // killed) and later ones fail. For shutdown.
  void cancel();
  // From any thread: the next sample() ends the child first and starts a
  // fresh one (a fresh nvmlInit: serve's recovery gate, after a GPU came
  // back, which an old session may still see as lost).
  void request_restart();

  uint64_t attempts() const { return attempts_; }
  uint64_t failures() const { return failures_; }
  uint64_t restarts() const { return restarts_; }  // children started after the first
  // Children that did not die after SIGKILL (stuck in the kernel), still
  // unreaped; each later call tries to reap them again.
  size_t stuck_children() const { return stuck_.size(); }
  pid_t child_pid() const { return pid_; }  // -1 when none is running

 private:
  using Clock = std::chrono::steady_clock;
  Result<Done> start_child();
  // Kills the child's process group and reaps it within a short grace;
  // returns the signal or exit status description ("SIGKILL", "exit 3").
  std::string kill_child();
  // Reaps an exited child (short grace); "crashed: SIGSEGV", "exited with code 3".
  std::string reap_child();
  void close_child();
  // Ends the child politely (end of input), killing it after a grace.
  void end_child();
  // Reaps a child that is exiting, or kills it when it does not within a
  // short grace.
  void reap_or_kill();
  void reap_stuck();

  SamplerOptions opt_;
  pid_t pid_ = -1;
  int sock_ = -1;  // our end of the child's stdin/stdout (a socketpair)
  int err_ = -1;   // the child's stderr, drained into err_tail_
  std::string err_tail_;
  int cancel_fd_ = -1;  // eventfd: cancel() makes it readable
  bool started_once_ = false;
  std::atomic<bool> restart_requested_{false};
  std::vector<pid_t> stuck_;
  uint64_t attempts_ = 0;
  uint64_t failures_ = 0;
  uint64_t restarts_ = 0;
};

}  // namespace gd
