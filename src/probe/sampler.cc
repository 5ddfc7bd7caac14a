// The NVML sampler, parent side (see sampler.h). The child's stdin and
// stdout are one end of a socketpair: a request is one send() with
// MSG_NOSIGNAL, so a dead child is an error return, never a SIGPIPE. Its
// stderr goes to a pipe whose tail explains an exit. One poll() waits for
// the answer, the stderr pipe and cancel()'s eventfd until the deadline.
#include "probe/sampler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "catalog/cuda_errors.h"
#include "probe/child.h"
#include "probe/hw_common.h"
#include "snapshot/snapshot_json.h"
#include "util/bytes.h"
#include "util/fd.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// How long a killed or exiting child may take to be reaped before it
// counts as stuck in the kernel.
constexpr auto kReapGrace = std::chrono::milliseconds(300);
constexpr auto kReapPoll = std::chrono::milliseconds(2);
// An answer is an NvmlInfo: about 6 KB per GPU. Past this without a
// result line the child is talking nonsense.
constexpr size_t kMaxAnswerBytes = 16u << 20;
constexpr size_t kMaxErrTail = 4096;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void close_fd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Waits up to kReapGrace for pid to be reaped; its status, or false.
bool reap_within_grace(pid_t pid, int* status) {
  auto until = Clock::now() + kReapGrace;
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return true;
    if (w < 0 && errno == ECHILD) {  // reaped elsewhere (SIGCHLD ignored): gone
      *status = 0;
      return true;
    }
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(kReapPoll);
  }
}

}  // namespace

std::string nvml_sample_problem(const NvmlInfo& n) {
  if (!n.child_error.empty()) return n.child_error;
  if (!n.attempted) return "NVML was not probed";
  if (!n.dlopen_error.empty()) return n.dlopen_error;
  if (n.init_rc != 0) {
    std::string sym = n.init_symbol.empty() ? "nvmlInit" : n.init_symbol;
    return sym + " returned " + nvml_error(n.init_rc);
  }
  return "";
}

NvmlSampler::NvmlSampler(SamplerOptions opt) : opt_(std::move(opt)) {
  cancel_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

NvmlSampler::~NvmlSampler() {
  end_child();
  reap_stuck();
  close_fd(&cancel_fd_);
}

void NvmlSampler::end_child() {
  if (pid_ <= 0) return;
  // End of input: the child calls nvmlShutdown and exits; a child that
  // does not within the grace is killed.
  shutdown(sock_, SHUT_WR);
  reap_or_kill();
}

void NvmlSampler::reap_or_kill() {
  int status = 0;
  if (reap_within_grace(pid_, &status)) {
    pid_ = -1;
    close_child();
  } else {
    kill_child();
  }
}

void NvmlSampler::request_restart() { restart_requested_ = true; }

void NvmlSampler::cancel() {
  uint64_t one = 1;
  if (cancel_fd_ >= 0) {
    ssize_t n = write(cancel_fd_, &one, sizeof one);
    (void)n;
  }
}

void NvmlSampler::close_child() {
  close_fd(&sock_);
  close_fd(&err_);
}

Result<Done> NvmlSampler::start_child() {
  int sv[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    std::string why = std::string("could not start: ") + std::strerror(errno);
    for (int fd : {sv[0], sv[1], err[0], err[1]}) {
      if (fd >= 0) close(fd);
    }
    return Error{why};
  }
  auto pid = spawn_in_own_group(opt_.exe, {"__probe-nvml-sampler", "--lib", opt_.nvml_lib},
                                opt_.env, sv[1], sv[1], err[1], {SIGTERM, SIGINT, SIGHUP});
  close(sv[1]);
  close(err[1]);
  if (!pid.ok()) {
    close(sv[0]);
    close(err[0]);
    return Error{"could not start: " + pid.error()};
  }
  pid_ = *pid;
  sock_ = sv[0];
  err_ = err[0];
  err_tail_.clear();
  fcntl(sock_, F_SETFL, O_NONBLOCK);
  fcntl(err_, F_SETFL, O_NONBLOCK);
  return Done{};
}

std::string NvmlSampler::kill_child() {
  std::string how;
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status = 0;
    if (reap_within_grace(pid_, &status)) {
      how = WIFSIGNALED(status) ? signal_name(WTERMSIG(status)) : "exited";
    } else {
      stuck_.push_back(pid_);
      how = "stuck";
    }
  }
  pid_ = -1;
  close_child();
  return how;
}

void NvmlSampler::reap_stuck() {
  for (size_t i = 0; i < stuck_.size();) {
    int status = 0;
    pid_t w = waitpid(stuck_[i], &status, WNOHANG);
    if (w == stuck_[i] || (w < 0 && errno == ECHILD)) {
      stuck_.erase(stuck_.begin() + static_cast<long>(i));
    } else {
      kill(stuck_[i], SIGKILL);  // still there: it may die once the driver lets go
      ++i;
    }
  }
}

SampleResult NvmlSampler::sample() {
  SampleResult res;
  reap_stuck();
  ++attempts_;
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(opt_.deadline_s));
  auto fail = [&](std::string why) {
    ++failures_;
    res.ok = false;
    res.error = std::move(why);
    res.duration_ms = ms_between(start, Clock::now());
    return res;
  };
  uint64_t cancelled = 0;
  if (cancel_fd_ >= 0 && read(cancel_fd_, &cancelled, sizeof cancelled) == sizeof cancelled) {
    cancel();  // stays cancelled for later calls
    return fail("cancelled");
  }
  if (restart_requested_.exchange(false)) end_child();
  if (pid_ < 0) {
    if (started_once_) ++restarts_;
    started_once_ = true;
    if (auto started = start_child(); !started.ok()) return fail(started.error());
  }

  ChildResult cr;  // for child_failure()'s wording
  cr.started = true;
  ParsedChildOutput parsed;
  static constexpr char kRequest[] = "sample\n";
  ssize_t sent = send(sock_, kRequest, sizeof kRequest - 1, MSG_NOSIGNAL);
  std::string buf;
  std::string answer;
  bool eof = sent != static_cast<ssize_t>(sizeof kRequest - 1);
  bool timed_out = false;
  while (!eof && answer.empty()) {
    auto now = Clock::now();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    pollfd fds[3] = {{sock_, POLLIN, 0}, {err_, POLLIN, 0}, {cancel_fd_, POLLIN, 0}};
    auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    int n = poll(fds, 3, static_cast<int>(wait_ms) + 1);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (fds[2].revents != 0) {
      kill_child();
      return fail("cancelled");
    }
    if (fds[1].revents != 0 && !drain_fd_tail(err_, &err_tail_, kMaxErrTail)) close_fd(&err_);
    if (fds[0].revents == 0) continue;
    eof = !drain_fd(sock_, &buf);
    size_t pos = 0;
    for (size_t nl; (nl = buf.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      std::string_view line(buf.data() + pos, nl - pos);
      if (line.empty()) continue;
      if (line[0] == '@') parsed.last_call = std::string(line.substr(1));
      if (line[0] == '{') {
        answer = std::string(line);
        break;
      }
    }
    buf.erase(0, pos);
    if (buf.size() > kMaxAnswerBytes) {
      kill_child();
      return fail("bad output: more than " + format_bytes_exact(kMaxAnswerBytes) +
                  " without an answer");
    }
  }
  res.duration_ms = ms_between(start, Clock::now());

  if (timed_out) {
    res.timed_out = true;
    res.call = parsed.last_call;
    cr.timed_out = true;
    cr.duration_ms = res.duration_ms;
    cr.reaped = kill_child() != "stuck";
    return fail(child_failure(cr, parsed));
  }
  if (answer.empty()) {
    // The child closed its end: it died, or exited after saying nothing.
    if (err_ >= 0) drain_fd_tail(err_, &err_tail_, kMaxErrTail);
    int status = 0;
    if (pid_ > 0 && reap_within_grace(pid_, &status)) {
      record_exit(status, &cr);
      pid_ = -1;
      close_child();
    } else {
      kill_child();
    }
    cr.err_tail = err_tail_;
    res.call = parsed.last_call;
    parsed.error = "no answer";
    return fail(child_failure(cr, parsed));
  }
  auto j = nlohmann::json::parse(answer, nullptr, false);
  Result<NvmlInfo> info = Error{"not JSON"};
  if (!j.is_discarded() && j.is_object()) info = nvml_info_from_json(j);
  if (!info.ok()) {
    kill_child();
    return fail("bad output: " + info.error());
  }
  res.nvml = std::move(*info);
  std::string problem = nvml_sample_problem(res.nvml);
  if (!problem.empty()) {
    // The child exits after a failed init; the next call starts a fresh one.
    reap_or_kill();
    return fail(problem);
  }
  res.ok = true;
  return res;
}

}  // namespace gd
