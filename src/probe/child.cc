// The probe-child runner (see child.h). posix_spawn starts each child in
// its own process group with stdin on /dev/null and stdout/stderr on
// close-on-exec pipes, so concurrent children never hold each other's pipes.
// A child that is sent a message gets a Unix stream socket as stdin rather
// than a pipe: send(MSG_NOSIGNAL) reports a dead reader as EPIPE without
// raising SIGPIPE, which a pipe's write() cannot do without changing the
// signal mask of a process we may merely be hosted in (libgpudoctor).
// One ppoll loop reads every pipe and every child's pidfd until the
// deadline; then SIGKILL goes to each remaining process group. A process
// stuck in the kernel (a driver ioctl on a lost GPU) may not die even then:
// the runner waits a short grace and gives up on it rather than hang too.
#include "probe/child.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/fd.h"

extern char** environ;

namespace gd {
namespace {

using Clock = ChildRunner::Clock;

// How long a killed child may take to die, and how long the pipes of an
// exited child are drained (a grandchild may still hold them).
constexpr auto kKillGrace = std::chrono::milliseconds(300);
constexpr auto kDrainGrace = std::chrono::milliseconds(100);
// Poll interval where no pidfd tells us that a child exited.
constexpr auto kReapPoll = std::chrono::milliseconds(5);
// The longest send() waits for room in a child's stdin stream (a full
// buffer: a message far beyond one line, and a child not reading it).
constexpr auto kSendLimit = std::chrono::milliseconds(100);

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#else
  (void)pid;
#endif
  return -1;  // kernel before 5.3: poll waitpid instead
}

void close_fd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Every descriptor from 3 up closed in the child, after the dup2s onto
// 0-2. glibc 2.34's posix_spawn_file_actions_addclosefrom_np does it in one
// step; the release binaries run on 2.31 too (docs/install.md), so it is
// looked up at run time, and where it is missing each descriptor open now
// (/proc/self/fd) gets its own close action. (One opened by another thread
// after that reading would stay open, as before glibc 2.34.)
void close_inherited_fds(posix_spawn_file_actions_t* fa) {
  using CloseFrom = int (*)(posix_spawn_file_actions_t*, int);
  static const auto close_from =
      reinterpret_cast<CloseFrom>(dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addclosefrom_np"));
  if (close_from != nullptr) {
    close_from(fa, 3);
    return;
  }
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd < 3 || fd == own) continue;
    posix_spawn_file_actions_addclose(fa, static_cast<int>(fd));
  }
  closedir(dir);
}

std::vector<char*> c_strings(const std::string& first, const std::vector<std::string>& rest) {
  std::vector<char*> v;
  if (!first.empty()) v.push_back(const_cast<char*>(first.c_str()));
  for (const auto& s : rest) v.push_back(const_cast<char*>(s.c_str()));
  v.push_back(nullptr);
  return v;
}

}  // namespace

std::string signal_name(int sig) {
  // Our own table, not sigabbrev_np: that is glibc 2.32, above the release
  // binaries' floor (docs/install.md). Linux numbers these alike on x86_64
  // and aarch64; the names are the macros'.
  struct Named {
    int number;
    const char* name;
  };
#define GD_SIGNAL(name) \
  Named { name, #name }
  static constexpr Named kSignals[] = {
      GD_SIGNAL(SIGHUP),  GD_SIGNAL(SIGINT),    GD_SIGNAL(SIGQUIT), GD_SIGNAL(SIGILL),
      GD_SIGNAL(SIGTRAP), GD_SIGNAL(SIGABRT),   GD_SIGNAL(SIGBUS),  GD_SIGNAL(SIGFPE),
      GD_SIGNAL(SIGKILL), GD_SIGNAL(SIGUSR1),   GD_SIGNAL(SIGSEGV), GD_SIGNAL(SIGUSR2),
      GD_SIGNAL(SIGPIPE), GD_SIGNAL(SIGALRM),   GD_SIGNAL(SIGTERM), GD_SIGNAL(SIGSTKFLT),
      GD_SIGNAL(SIGCHLD), GD_SIGNAL(SIGCONT),   GD_SIGNAL(SIGSTOP), GD_SIGNAL(SIGTSTP),
      GD_SIGNAL(SIGTTIN), GD_SIGNAL(SIGTTOU),   GD_SIGNAL(SIGURG),  GD_SIGNAL(SIGXCPU),
      GD_SIGNAL(SIGXFSZ), GD_SIGNAL(SIGVTALRM), GD_SIGNAL(SIGPROF), GD_SIGNAL(SIGWINCH),
      GD_SIGNAL(SIGIO),   GD_SIGNAL(SIGPWR),    GD_SIGNAL(SIGSYS)};
#undef GD_SIGNAL
  for (const Named& s : kSignals) {
    if (s.number == sig) return s.name;
  }
  return "signal " + std::to_string(sig);
}

std::vector<std::string> current_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

void record_exit(int status, ChildResult* r) {
  r->reaped = true;
  if (WIFEXITED(status)) {
    r->exited = true;
    r->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r->signal = WTERMSIG(status);
  }
}

Result<pid_t> spawn_in_own_group(const std::string& exe, const std::vector<std::string>& args,
                                 const std::vector<std::string>& env, int in_fd, int out_fd,
                                 int err_fd, std::initializer_list<int> default_signals) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (in_fd < 0) {
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
  }
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  // A library's host (a Python process) may hold descriptors without
  // close-on-exec, the exporter its listening sockets and the history
  // database: a child that may outlive us stuck in the kernel keeps none.
  close_inherited_fds(&fa);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  for (int sig : default_signals) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: the kill reaches its children too
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv = c_strings(exe, args);
  std::vector<char*> envp = c_strings("", env);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Error{"cannot run " + exe + ": " + std::strerror(rc)};
  return pid;
}

struct ChildRunner::Proc {
  ChildResult result;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  int pid_fd = -1;
  int in_fd = -1;          // our end of its stdin stream, until send()
  bool exit_seen = false;  // waitpid collected it
  bool done = false;
  Clock::time_point start;
  Clock::time_point exit_time;
  size_t max_out = 0;
  size_t max_err = 0;
  std::function<void(std::string_view)> on_line;
  size_t lines_to = 0;  // result.out up to here went to on_line

  // Hands on_line the whole lines that arrived since the last call.
  void emit_lines() {
    if (!on_line) return;
    const std::string& out = result.out;
    for (size_t nl; (nl = out.find('\n', lines_to)) != std::string::npos; lines_to = nl + 1) {
      on_line(std::string_view(out).substr(lines_to, nl - lines_to));
    }
  }
};

ChildRunner::ChildRunner(Clock::time_point deadline) : deadline_(deadline) {}

ChildRunner::~ChildRunner() {
  for (auto& p : procs_) {
    if (p->done) continue;
    if (!p->exit_seen && p->pid > 0) {
      kill(-p->pid, SIGKILL);
      kill(p->pid, SIGKILL);
      int status = 0;
      waitpid(p->pid, &status, WNOHANG);
    }
    finish(p.get());
  }
}

size_t ChildRunner::start(const ChildSpec& spec) {
  auto p = std::make_unique<Proc>();
  p->start = Clock::now();
  p->max_out = spec.max_stdout_bytes;
  p->max_err = spec.max_stderr_bytes;
  p->on_line = spec.on_stdout_line;
  size_t id = procs_.size();
  procs_.push_back(std::move(p));
  Proc* proc = procs_.back().get();

  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int in[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {out[0], out[1], err[0], err[1], in[0], in[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    proc->result.start_error = std::string("pipe: ") + std::strerror(errno);
    close_all();
    proc->done = true;
    return id;
  }
  if (spec.stdin_pipe && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    proc->result.start_error = std::string("socketpair: ") + std::strerror(errno);
    close_all();
    proc->done = true;
    return id;
  }

  auto pid = spawn_in_own_group(spec.exe, spec.args, spec.env, in[1], out[1], err[1], {});
  close(out[1]);
  close(err[1]);
  if (in[1] >= 0) close(in[1]);
  if (!pid.ok()) {
    proc->result.start_error = pid.error();
    close(out[0]);
    close(err[0]);
    if (in[0] >= 0) close(in[0]);
    proc->done = true;
    return id;
  }
  proc->in_fd = in[0];
  proc->result.started = true;
  proc->pid = *pid;
  proc->out_fd = out[0];
  proc->err_fd = err[0];
  fcntl(proc->out_fd, F_SETFL, O_NONBLOCK);
  fcntl(proc->err_fd, F_SETFL, O_NONBLOCK);
  proc->pid_fd = open_pidfd(*pid);
  return id;
}

bool ChildRunner::send(size_t id, std::string_view text) {
  Proc* p = procs_[id].get();
  if (p->in_fd < 0) return false;
  Clock::time_point give_up = std::min(deadline_, Clock::now() + kSendLimit);
  bool ok = true;
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::send(p->in_fd, text.data() + off, text.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    Clock::time_point now = Clock::now();
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && now < give_up) {
      pollfd pfd{p->in_fd, POLLOUT, 0};
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(give_up - now).count();
      poll(&pfd, 1, static_cast<int>(ms));
      continue;
    }
    ok = false;  // EPIPE, ECONNRESET: the child is gone or closed its stdin
    break;
  }
  close_fd(&p->in_fd);
  return ok;
}

const ChildResult& ChildRunner::wait(size_t id) {
  while (!procs_[id]->done && step()) {
  }
  return procs_[id]->result;
}

bool ChildRunner::wait_until(size_t id, Clock::time_point until) {
  while (!procs_[id]->done && Clock::now() < until && step(until)) {
  }
  return procs_[id]->done;
}

void ChildRunner::wait_all() {
  while (step()) {
  }
}

const ChildResult& ChildRunner::result(size_t id) const { return procs_[id]->result; }

void ChildRunner::finish(Proc* p) {
  close_fd(&p->out_fd);
  close_fd(&p->err_fd);
  close_fd(&p->pid_fd);
  close_fd(&p->in_fd);
  ChildResult& r = p->result;
  if (r.err_tail.size() > p->max_err) r.err_tail.erase(0, r.err_tail.size() - p->max_err);
  p->done = true;
}

bool ChildRunner::step(Clock::time_point until) {
  auto running = [](const Proc& p) { return !p.done; };
  if (std::none_of(procs_.begin(), procs_.end(), [&](auto& p) { return running(*p); })) {
    return false;
  }
  Clock::time_point now = Clock::now();

  // Collect exits first so a child that finished just before the deadline
  // does not count as timed out.
  for (auto& p : procs_) {
    if (p->done || p->exit_seen) continue;
    int status = 0;
    pid_t w = waitpid(p->pid, &status, WNOHANG);
    // ECHILD: the host process ignores SIGCHLD (inherited across exec, or a
    // library's caller) or reaps with waitpid(-1), so the child is gone and
    // its status with it. Its output decides then; waiting out the deadline
    // would call a healthy child hung.
    bool reaped_elsewhere = w < 0 && errno == ECHILD;
    if (w == p->pid || reaped_elsewhere) {
      if (reaped_elsewhere) status = 0;  // exit status unknown: read as a normal exit
      record_exit(status, &p->result);
      p->exit_seen = true;
      p->exit_time = now;
      if (!p->result.timed_out) p->result.duration_ms = ms_between(p->start, now);
      close_fd(&p->pid_fd);
    }
  }

  if (!killed_ && now >= deadline_) {
    killed_ = true;
    kill_grace_end_ = now + kKillGrace;
    for (auto& p : procs_) {
      if (p->done || p->exit_seen) continue;
      kill(-p->pid, SIGKILL);
      kill(p->pid, SIGKILL);
      p->result.timed_out = true;
      p->result.duration_ms = ms_between(p->start, now);
    }
  }
  if (killed_ && now >= kill_grace_end_) {
    for (auto& p : procs_) {
      if (!p->done) finish(p.get());  // a child that would not die stays unreaped
    }
    return false;
  }

  Clock::time_point wake = std::min(killed_ ? kill_grace_end_ : deadline_, until);
  bool finished_one = false;
  std::vector<pollfd> fds;
  std::vector<std::pair<Proc*, int>> owners;  // which proc, and 0 out / 1 err / 2 pidfd
  for (auto& p : procs_) {
    if (p->done) continue;
    if (p->exit_seen) {
      if (p->out_fd < 0 && p->err_fd < 0) {
        finish(p.get());
        finished_one = true;
        continue;
      }
      if (now >= p->exit_time + kDrainGrace) {
        drain_fd_head(p->out_fd, &p->result.out, p->max_out, &p->result.out_truncated);
        p->emit_lines();
        drain_fd_tail(p->err_fd, &p->result.err_tail, p->max_err);
        finish(p.get());
        finished_one = true;
        continue;
      }
      wake = std::min(wake, p->exit_time + kDrainGrace);
    } else if (p->pid_fd < 0) {
      wake = std::min(wake, now + kReapPoll);
    }
    if (p->out_fd >= 0) {
      fds.push_back({p->out_fd, POLLIN, 0});
      owners.emplace_back(p.get(), 0);
    }
    if (p->err_fd >= 0) {
      fds.push_back({p->err_fd, POLLIN, 0});
      owners.emplace_back(p.get(), 1);
    }
    if (p->pid_fd >= 0 && !p->exit_seen) {
      fds.push_back({p->pid_fd, POLLIN, 0});
      owners.emplace_back(p.get(), 2);
    }
  }
  // A waiter may be waiting for the child just finished: let it look
  // before blocking on the others.
  if (finished_one) return true;

  auto wait_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count();
  if (wait_ns < 0) wait_ns = 0;
  timespec ts{static_cast<time_t>(wait_ns / 1000000000), static_cast<long>(wait_ns % 1000000000)};
  int n = ppoll(fds.data(), fds.size(), &ts, nullptr);
  if (n <= 0) return true;  // timeout or EINTR: the next round re-checks the clock

  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    auto [p, kind] = owners[i];
    if (kind == 0) {
      if (!drain_fd_head(p->out_fd, &p->result.out, p->max_out, &p->result.out_truncated)) {
        close_fd(&p->out_fd);
      }
      p->emit_lines();
    } else if (kind == 1) {
      if (!drain_fd_tail(p->err_fd, &p->result.err_tail, p->max_err)) {
        close_fd(&p->err_fd);
      }
    }
    // kind 2 (pidfd readable): collected by waitpid at the top of the next round.
  }
  return true;
}

}  // namespace gd
