// gpudoctor run --watch: the command as a child in its own process group,
// watched for its lifetime by one NVML sampler child and a kernel-log
// follower (docs/run.md "Watching the job"). At a fatal event the diagnosis
// is written at once (and with --stop-on-fatal the job is signalled); when
// the job ends, its health summary. The exit code is the job's.
#include <errno.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "cli/commands.h"
#include "job/watch.h"
#include "probe/child.h"
#include "probe/kernel_log.h"
#include "probe/sampler.h"
#include "util/host.h"
#include "util/time.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// After SIGTERM, how long the job has to end before SIGKILL.
constexpr std::chrono::seconds kStopGrace{10};

// Signals the watcher takes from the kernel itself (sigtimedwait), so no
// handler runs on the sampler or follower threads.
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT}) {
    sigaddset(&set, sig);
  }
  return set;
}

void say(const std::string& line) { print_error("run --watch: " + line); }

// The job, in a process group of its own so that --stop-on-fatal reaches
// every process it starts. When this process owns the terminal, the job
// gets it (as a shell does for a foreground job): Ctrl-C reaches the job.
pid_t spawn_job(const std::vector<std::string>& command, bool own_terminal) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid != 0) {
    if (pid > 0) setpgid(pid, pid);  // also here: no race with the child's exec
    return pid;
  }
  setpgid(0, 0);
  if (own_terminal) {
    signal(SIGTTOU, SIG_IGN);
    tcsetpgrp(STDIN_FILENO, getpid());
    signal(SIGTTOU, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  exec_command(command);
}

bool owns_terminal() { return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp(); }

void take_terminal_back() {
  signal(SIGTTOU, SIG_IGN);
  tcsetpgrp(STDIN_FILENO, getpgrp());
  signal(SIGTTOU, SIG_DFL);
}

// Writes a report file; a failure is said (`flag` names which) and the
// job's exit code stands.
void write_text(const char* flag, const std::string& path, const std::string& text) {
  if (auto w = write_text_file(path, text); !w.ok()) {
    say(fmt::format("{} {}: {}", flag, path, w.error()));
  }
}

}  // namespace

int run_watched(const RunArgs& args, double interval_s) {
  const std::string name = args.command[0];
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts: they inherit it

  const bool terminal = owns_terminal();
  JobWatch w(now_unix_ms());
  pid_t pid = spawn_job(args.command, terminal);
  if (pid < 0) {
    say(std::string("fork: ") + std::strerror(errno));
    return kExitInternal;
  }
  std::mutex mu;  // guards w
  std::atomic<bool> stop{false};

  // The NVML sampler child, on a thread of its own (the child dies with the
  // thread that spawned it, PR_SET_PDEATHSIG).
  NvmlSampler* live = nullptr;  // for cancel() at the end; guarded by sampler_mu
  std::mutex sampler_mu;
  std::condition_variable wake;  // the sampler's sleep, cut short at the end
  std::thread sampler_thread([&] {
    SamplerOptions so;
    so.exe = self_exe_path();
    so.nvml_lib = args.probe.nvml_lib;
    so.env = current_environment();
    so.deadline_s = args.probe.deadline_s;
    NvmlSampler sampler(so);
    {
      std::lock_guard<std::mutex> lock(sampler_mu);
      live = &sampler;
    }
    auto next = Clock::now();
    while (!stop) {
      SampleResult r = sampler.sample();
      if (stop) break;
      {
        std::lock_guard<std::mutex> lock(mu);
        w.on_sample(r.nvml, r.ok, now_unix_ms());
      }
      next = std::max(next + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(interval_s)),
                      Clock::now());
      std::unique_lock<std::mutex> lock(sampler_mu);
      wake.wait_until(lock, next, [&] { return stop.load(); });
    }
    std::lock_guard<std::mutex> lock(sampler_mu);
    live = nullptr;
  });

  // The kernel-log follower: events logged from now on.
  std::string follow_error;
  std::thread follower_thread([&] {
    KernelLogOptions ko;
    ko.root = args.probe.root;
    auto r = follow_kernel_log(
        ko,
        [&](const KernelEvent& e) {
          std::lock_guard<std::mutex> lock(mu);
          w.on_event(e, now_unix_ms());
          return !stop;
        },
        stop);
    if (!r.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      follow_error = r.error();
    }
  });

  bool stopped_by_us = false;
  bool kill_pending = false;
  Clock::time_point kill_at{};
  bool follow_noted = false;
  int status = 0;
  for (;;) {
    // A fatal event is reported within this tick; the job's end and a
    // signal wake the loop at once.
    timespec tick{0, 500 * 1000 * 1000};
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig > 0 && sig != SIGCHLD) kill(-pid, sig);  // the scheduler's or the terminal's word
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    std::optional<WatchFatal> fatal;
    std::string follow_note;
    {
      std::lock_guard<std::mutex> lock(mu);
      fatal = w.take_new_fatal();
      if (!follow_noted && !follow_error.empty()) follow_note = follow_error;
    }
    if (!follow_note.empty()) {
      follow_noted = true;
      say("kernel log: " + follow_note + " (Xid events are not watched)");
    }
    if (fatal) {
      for (const std::string& line : watch_fatal_lines(*fatal, name, args.stop_on_fatal)) say(line);
      if (!args.json_report.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        write_text("--json-report", args.json_report, watch_json(w, nullptr, name));
      }
      if (args.stop_on_fatal && !stopped_by_us) {
        stopped_by_us = true;
        kill(-pid, SIGTERM);
        kill_pending = true;
        kill_at = Clock::now() + kStopGrace;
      }
    }
    if (kill_pending && Clock::now() >= kill_at) {
      kill(-pid, SIGKILL);
      kill_pending = false;
    }
  }
  if (terminal) take_terminal_back();

  {
    std::lock_guard<std::mutex> lock(sampler_mu);
    stop = true;
    if (live != nullptr) live->cancel();  // a sample waiting on a hung GPU ends now
  }
  wake.notify_all();
  sampler_thread.join();
  follower_thread.join();

  JobEnd end;
  end.command = name;
  end.ended_ms = now_unix_ms();
  end.exited = WIFEXITED(status);
  end.exit_code = end.exited ? WEXITSTATUS(status) : 0;
  end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  end.stopped_by_us = stopped_by_us;
  if (auto late = w.take_new_fatal()) {
    for (const std::string& line : watch_fatal_lines(*late, name, false)) say(line);
  }
  std::vector<std::string> summary = watch_summary_lines(w, end);
  for (const std::string& line : summary) say(line);
  if (!args.json_report.empty()) {
    write_text("--json-report", args.json_report, watch_json(w, &end, name));
  }
  if (!args.summary_file.empty()) {
    std::string host = host_name();
    std::string text = "gpudoctor run --watch on " + (host.empty() ? "this host" : host) + "\n";
    for (const std::string& line : summary) text += line + "\n";
    write_text("--summary-file", args.summary_file, text);
  }
  // As a shell reports it: the exit code, or 128 + the signal.
  return end.exited ? end.exit_code : 128 + end.signal;
}

}  // namespace gd
