// The probe-child runner: the only fork/exec in gpudoctor besides
// `gpudoctor run`. NVML and CUDA are called in child processes because a
// GPU that fell off the bus makes driver calls hang or crash; the parent
// enforces one absolute deadline, kills a child's whole process group when
// it passes, and reports what happened as data.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace gd {

struct ChildSpec {
  std::string exe;                      // path to execute (no PATH search)
  std::vector<std::string> args;        // argv[1..]; argv[0] is exe
  std::vector<std::string> env;         // the complete environment, "NAME=value"
  size_t max_stdout_bytes = 4u << 20;   // the rest is read and dropped
  size_t max_stderr_bytes = 16u << 10;  // the tail is kept
  // Called with each whole stdout line (no newline) as it arrives, within
  // the bytes kept; for progress while a long child runs.
  std::function<void(std::string_view line)> on_stdout_line;
  // true: the child's stdin is a stream the parent writes once with
  // ChildRunner::send() (the CUDA probe's gate); false: /dev/null.
  bool stdin_pipe = false;
};

struct ChildResult {
  bool started = false;
  std::string start_error;  // why it could not start ("execve ...: No such file")
  bool exited = false;      // exited normally: exit_code is valid
  int exit_code = -1;
  int signal = 0;          // the signal that ended it, 0 if none
  bool timed_out = false;  // killed at the deadline
  bool reaped = false;     // false: it did not die even after SIGKILL (stuck in the kernel)
  std::string out;         // stdout, at most max_stdout_bytes
  bool out_truncated = false;
  std::string err_tail;    // the last max_stderr_bytes of stderr
  double duration_ms = 0;  // start to exit (or to the kill)
};

// "SIGSEGV"; "signal 77" for one without a name.
std::string signal_name(int sig);

// This process's environment as "NAME=value" entries: what a probe child
// gets unless a caller changes it.
std::vector<std::string> current_environment();

// A waitpid() status into r: reaped, and the exit code or the signal.
void record_exit(int status, ChildResult* r);

// posix_spawn of a probe child (ChildRunner's children, the exporter's NVML
// sampler): no PATH search, `env` as its whole environment, stdin from
// `in_fd` (-1: /dev/null), stdout and stderr to `out_fd`/`err_fd`, no other
// descriptor inherited, every signal unblocked and `default_signals` (and
// SIGPIPE) reset to their default action, in a process group of its own so
// a kill reaches whatever it starts. Returns the pid; error: "cannot run EXE: why".
Result<pid_t> spawn_in_own_group(const std::string& exe, const std::vector<std::string>& args,
                                 const std::vector<std::string>& env, int in_fd, int out_fd,
                                 int err_fd, std::initializer_list<int> default_signals);

// Runs children concurrently under one absolute deadline: start() them all,
// then wait() for each or wait_all(). Waiting services every child's pipes,
// so one child's output never blocks another. At the deadline every child
// still running is killed (SIGKILL to its process group) and marked
// timed_out. Destroying the runner kills and forgets what is left.
// A child started with stdin_pipe gets one message on its stdin: send()
// writes it and closes the stream, so the child reads up to EOF.
class ChildRunner {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ChildRunner(Clock::time_point deadline);
  ~ChildRunner();
  ChildRunner(const ChildRunner&) = delete;
  ChildRunner& operator=(const ChildRunner&) = delete;

  // Never fails: a child that cannot start is finished at once, with
  // result().started false and start_error set. Returns its id.
  size_t start(const ChildSpec& spec);
  // Writes `text` to the child's stdin (spec.stdin_pipe) and closes it.
  // Never blocks for long: the text is one short line, which the stream's
  // buffer holds whole; where it does not, send waits at most 100 ms (and
  // never past the deadline) for room. A child that is gone (EPIPE) or had
  // no stdin stream, or a second send: false, and nothing else happens (no
  // SIGPIPE, whoever hosts this process).
  bool send(size_t id, std::string_view text);
  const ChildResult& wait(size_t id);
  // Services every child's pipes until child `id` finished or `until`
  // passed (or the deadline, whichever is first). true: it finished, its
  // result() is final.
  bool wait_until(size_t id, Clock::time_point until);
  void wait_all();
  const ChildResult& result(size_t id) const;
  Clock::time_point deadline() const { return deadline_; }

 private:
  struct Proc;
  // One poll round, sleeping at most until `until`; false when nothing is
  // running.
  bool step(Clock::time_point until = Clock::time_point::max());
  void finish(Proc* p);

  Clock::time_point deadline_;
  bool killed_ = false;
  Clock::time_point kill_grace_end_{};
  std::vector<std::unique_ptr<Proc>> procs_;
};

}  // namespace gd
