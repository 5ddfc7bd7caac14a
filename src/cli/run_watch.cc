// gpudoctor run --watch: the command as a child in its own process group,
// watched for its lifetime by one NVML sampler child and a kernel-log
// follower (docs/run.md "Watching the job"). At a fatal event the diagnosis
// is written at once (and with --stop-on-fatal the job is signalled); when
// the job ends, its health summary. The exit code is the job's main
// process's. This process is the job's subreaper: what the job leaves
// running when its main process ends is stopped and reaped before the
// summary, so no process of the job outlives `run --watch`.
#include <errno.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "job/processes.h"
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
constexpr std::chrono::seconds kStopGrace{kJobKillGraceS};
// After SIGKILL, how long the job's processes have to be gone. One stuck in
// the kernel (D state: a driver call on a lost GPU) may never go; it is
// named in the summary, not waited for.
constexpr std::chrono::seconds kGoneWait{2};
// The watch loop's tick while the main process runs (a fatal event is
// reported within it; the main process's end and a signal wake it at once),
// and while its other processes are ending (their ends wake nothing).
constexpr long kTickNs = 500L * 1000 * 1000;
constexpr long kEndingTickNs = 50L * 1000 * 1000;

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

// The job's processes (job/processes.h): the descendants of this process's
// main thread (which starts the job and, as the subreaper, adopts its
// orphans) less the children it had before. The sampler child hangs off the
// sampler thread and is never among them.
class JobProcesses {
 public:
  // Before the job starts: a probe child of the check that is stuck in the
  // kernel is ours, not the job's.
  JobProcesses() : self_(getpid()) {
    if (auto c = thread_children(kProc, self_, self_); c.ok()) {
      before_.insert(c->begin(), c->end());
    } else {
      error_ = c.error();
    }
  }

  // The job's running processes now, its main one included while it runs.
  std::vector<JobProcess> live() const {
    return error_.empty() ? live_processes(kProc, roots()) : std::vector<JobProcess>{};
  }

  // Reaps the job's processes re-parented here that have ended; never
  // `main`, whose status is the job's and is waited for by the caller.
  void reap(pid_t main) const {
    if (!error_.empty()) return;
    for (pid_t c : roots()) {
      if (c != main) waitpid(c, nullptr, WNOHANG);
    }
  }

  // Why the job's processes cannot be listed ("" when they can).
  const std::string& error() const { return error_; }

 private:
  static constexpr char kProc[] = "/proc";

  std::vector<pid_t> roots() const {
    std::vector<pid_t> out;
    auto c = thread_children(kProc, self_, self_);
    if (!c.ok()) return out;
    for (pid_t p : *c) {
      if (before_.count(p) == 0) out.push_back(p);
    }
    return out;
  }

  pid_t self_;
  std::set<pid_t> before_;
  std::string error_;
};

// What became of the job's other processes, for the summary: one entry per
// pid, in the order they were first signalled.
class OtherProcesses {
 public:
  JobOtherProcess& note(const JobProcess& p) {
    for (JobOtherProcess& o : list_) {
      if (o.pid == p.pid) return o;
    }
    JobOtherProcess& o = list_.emplace_back();
    o.pid = p.pid;
    o.name = p.name;
    return o;
  }
  std::vector<JobOtherProcess> take() { return std::move(list_); }

 private:
  std::vector<JobOtherProcess> list_;
};

// `sig` to each process of `ps` but those in process group `signalled`
// (0: none), which has just had it: one signal each, never two.
void signal_each(const std::vector<JobProcess>& ps, int sig, pid_t signalled = 0) {
  for (const JobProcess& p : ps) {
    if (signalled == 0 || p.pgid != signalled) kill(p.pid, sig);
  }
}

}  // namespace

int run_watched(const RunArgs& args, double interval_s) {
  const std::string name = args.command[0];
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts: they inherit it

  const bool terminal = owns_terminal();
  JobWatch w(now_unix_ms());
  // Orphans of the job come here, not to init, whatever session or process
  // group they made for themselves: they can be found, stopped and reaped.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    say(std::string("PR_SET_CHILD_SUBREAPER: ") + std::strerror(errno) +
        "; processes the job leaves behind may not be found");
  }
  const JobProcesses procs;
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
        w.on_sample(r.nvml, r.ok, now_unix_ms(), {r.error, r.call, r.timed_out});
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

  // The job ends in two steps: its main process exits (its status is the
  // job's), then the processes it left running are stopped: SIGTERM, and
  // SIGKILL kStopGrace later to those still running. --stop-on-fatal starts
  // the same while the main process still runs.
  bool stopped_by_us = false;
  bool main_ended = false;
  bool term_sent = false;
  bool kill_sent = false;
  Clock::time_point kill_at{};
  Clock::time_point give_up_at{};
  OtherProcesses others;
  int64_t ended_ms = 0;
  bool follow_noted = false;
  int status = 0;
  for (;;) {
    timespec tick{0, main_ended ? kEndingTickNs : kTickNs};
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig > 0 && sig != SIGCHLD) {
      if (!main_ended) {
        kill(-pid, sig);  // the scheduler's or the terminal's word
      } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
        kill_at = Clock::now();  // asked again while the rest ends: SIGKILL now
      }
    }
    if (!main_ended && waitpid(pid, &status, WNOHANG) == pid) {
      main_ended = true;
      ended_ms = now_unix_ms();
      if (terminal) take_terminal_back();
      std::vector<JobProcess> left = procs.live();
      if (left.empty()) break;
      for (const JobProcess& p : left) others.note(p).outlived = true;
      // The job is over when its main process is (as a scheduler's step,
      // a service, a container): what it left running is stopped. Only by
      // pid from now on: with its leader gone the group's number is free
      // for another process to take.
      if (!term_sent) {
        term_sent = true;
        signal_each(left, SIGTERM);
        kill_at = Clock::now() + kStopGrace;
      }
    }
    procs.reap(pid);
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
      if (args.stop_on_fatal && !main_ended && !term_sent) {
        stopped_by_us = true;
        term_sent = true;
        std::vector<JobProcess> all = procs.live();
        for (const JobProcess& p : all) {
          if (p.pid != pid) others.note(p);
        }
        kill(-pid, SIGTERM);  // the group first: all of it when /proc cannot be listed
        signal_each(all, SIGTERM, pid);
        kill_at = Clock::now() + kStopGrace;
      }
    }
    if (term_sent && !kill_sent && Clock::now() >= kill_at) {
      kill_sent = true;
      std::vector<JobProcess> all = procs.live();
      for (const JobProcess& p : all) {
        if (p.pid != pid || main_ended) others.note(p).sigkill = true;
      }
      if (!main_ended) kill(-pid, SIGKILL);
      signal_each(all, SIGKILL, main_ended ? 0 : pid);
      give_up_at = Clock::now() + kGoneWait;
    }
    if (main_ended) {
      std::vector<JobProcess> left = procs.live();
      if (left.empty()) break;
      // Started while the rest was stopping: listed too, and killed with it.
      for (const JobProcess& p : left) others.note(p).outlived = true;
      if (kill_sent && Clock::now() >= give_up_at) {
        for (const JobProcess& p : left) others.note(p).alive = true;
        break;
      }
    }
  }

  // Those that ended since the loop's last reap (it stops once none runs,
  // zombies aside): reaped here, not left to init, which may never do it.
  procs.reap(pid);
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
  end.ended_ms = ended_ms;
  end.exited = WIFEXITED(status);
  end.exit_code = end.exited ? WEXITSTATUS(status) : 0;
  end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  end.stopped_by_us = stopped_by_us;
  end.others = others.take();
  end.others_error = procs.error();
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
