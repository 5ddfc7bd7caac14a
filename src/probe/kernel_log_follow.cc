// `--follow`: streams new kernel-log events from /dev/kmsg, the journal
// (follow_journal, in kernel_log_journal.cc with the rest of libsystemd) or
// a text file (kernel_log_source.h).
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "probe/kernel_log.h"
#include "probe/kernel_log_source.h"
#include "probe/rootfs.h"
#include "util/text.h"
#include "util/time.h"

namespace gd {

namespace klog {

// Hands every event decoded since the last call to on_event; false when it
// asked to stop.
bool emit(Feed* f, const std::function<bool(const KernelEvent&)>& on_event) {
  for (const auto& e : f->scanner.take_new()) {
    if (!on_event(e)) return false;
  }
  return true;
}

bool stopped(const std::atomic<bool>& stop) { return stop.load(std::memory_order_relaxed); }

}  // namespace klog

using klog::drain_kmsg_device;
using klog::emit;
using klog::errno_text;
using klog::Fd;
using klog::Feed;
using klog::feed_journal;
using klog::file_year;
using klog::follow_journal;
using klog::kPollMs;
using klog::OnEvent;
using klog::open_kmsg;
using klog::open_user_file;
using klog::stopped;

namespace {

using klog::kMaxLineBytes;
using klog::OnSkip;

// What was read and is not yet whole lines. add() appends data and hands fn
// the whole lines it completes (all of it when flush: the end of a file,
// whose last line may lack its newline). A line of kMaxLineBytes or more is
// passed over to its newline instead (skip), as kernel_log_text.cc does, so
// what is held stays under that bound.
struct LineCarry {
  std::string held;
  bool skipping = false;  // inside an over-long line; held is empty

  void add(std::string_view data, bool flush, const std::function<void(std::string_view)>& fn,
           const OnSkip& skip) {
    if (skipping) {
      size_t nl = data.find('\n');
      size_t n = nl == std::string_view::npos ? data.size() : nl + 1;
      if (n > 0) skip(n, false);
      data.remove_prefix(n);
      skipping = nl == std::string_view::npos;
    }
    held.append(data);
    size_t nl = held.rfind('\n');
    size_t cut = flush ? held.size() : (nl == std::string::npos ? 0 : nl + 1);
    if (cut > 0) {
      fn(std::string_view(held).substr(0, cut));
      held.erase(0, cut);
    }
    if (held.size() >= kMaxLineBytes) {
      skip(held.size(), true);
      held.clear();
      skipping = true;
    }
    if (flush) skipping = false;  // the next text is a new file's
  }
};

// --- follow ----------------------------------------------------------------------

Result<bool> follow_kmsg_device(int fd, Feed* f, const OnEvent& on_event,
                                const std::atomic<bool>& stop) {
  ::lseek(fd, 0, SEEK_END);  // only records logged from now on
  while (!stopped(stop)) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, kPollMs);
    if (r < 0 && errno != EINTR) return Error{"poll /dev/kmsg: " + errno_text(errno)};
    if (r <= 0) continue;
    std::string err = drain_kmsg_device(fd, f);
    if (!emit(f, on_event)) return true;
    if (!err.empty()) return Error{err};
  }
  return true;
}

// Tails a file the way `tail -F` does: reads what is appended, and starts
// over on a new file when the path's inode changes (rotation) or the file
// shrinks (truncation). records: each line is a kmsg record (a recorded
// /dev/kmsg; its " KEY=value" dictionary lines are skipped).
Result<bool> follow_path(const std::string& path, const std::string& shown, bool from_start,
                         bool records, Feed* f, const OnEvent& on_event,
                         const std::atomic<bool>& stop) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return Error{"cannot read " + shown + ": " + errno_text(errno)};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error{"cannot read " + shown + ": " + errno_text(errno)};
  if (S_ISDIR(st.st_mode)) return Error{"cannot read " + shown + ": " + errno_text(EISDIR)};
  ino_t ino = st.st_ino;
  uint64_t off = from_start ? 0 : static_cast<uint64_t>(st.st_size);
  LineCarry carry;
  std::string chunk(64 * 1024, '\0');
  auto whole_lines = [&](std::string_view whole) {
    if (records) {
      for (auto line : split_lines(whole)) {
        if (!line.empty() && line.front() != ' ') f->record(line);
      }
    } else {
      f->text(whole);
    }
  };
  auto skip = [&](uint64_t bytes, bool line_start) {
    if (records) {
      if (line_start) ++f->stats.skipped_lines;
    } else {
      f->skip(bytes, line_start);
    }
  };
  auto feed_lines = [&](std::string_view data, bool flush) {
    carry.add(data, flush, whole_lines, skip);
  };
  while (!stopped(stop)) {
    for (;;) {
      ssize_t n = ::pread(fd.get(), chunk.data(), chunk.size(), static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<uint64_t>(n);
      feed_lines(std::string_view(chunk.data(), static_cast<size_t>(n)), false);
      // Hand on what each chunk held: a big append is not held decoded.
      if (!emit(f, on_event)) return true;
      if (stopped(stop)) break;
    }
    if (!emit(f, on_event)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0) continue;  // rotated away; the new one comes soon
    if (now.st_ino != ino || static_cast<uint64_t>(now.st_size) < off) {
      feed_lines({}, true);  // a last line without its newline
      int nfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      if (nfd < 0) continue;
      fd = Fd(nfd);
      struct stat fst {};
      ino = ::fstat(nfd, &fst) == 0 ? fst.st_ino : now.st_ino;
      off = 0;
    }
  }
  return true;
}

// stdin until end of input.
Result<bool> follow_stream(int fd, Feed* f, const OnEvent& on_event,
                           const std::atomic<bool>& stop) {
  LineCarry carry;
  std::string chunk(64 * 1024, '\0');
  auto text = [f](std::string_view whole) { f->text(whole); };
  auto skip = [f](uint64_t bytes, bool line_start) { f->skip(bytes, line_start); };
  while (!stopped(stop)) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, kPollMs);
    if (r < 0 && errno != EINTR) return Error{"cannot read stdin: " + errno_text(errno)};
    if (r <= 0) continue;
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Error{"cannot read stdin: " + errno_text(errno)};
    }
    if (n == 0) {
      carry.add({}, true, text, skip);
      emit(f, on_event);
      return true;
    }
    carry.add(std::string_view(chunk.data(), static_cast<size_t>(n)), false, text, skip);
    if (!emit(f, on_event)) return true;
  }
  return true;
}

}  // namespace

// --- follow ------------------------------------------------------------------------------

Result<bool> follow_kernel_log(const KernelLogOptions& opt, const OnEvent& on_event,
                               const std::atomic<bool>& stop) {
  if (!opt.file.empty()) {
    auto fd = open_user_file(opt.file);
    if (!fd) return Error{fd.error()};
    Feed f(file_year(fd->get()));
    f.set_written_by(klog::file_time(fd->get()));
    f.scanner.keep_new(SIZE_MAX);
    struct stat st {};
    bool pipe = opt.file == "-" || (::fstat(fd->get(), &st) == 0 && !S_ISREG(st.st_mode));
    if (pipe) return follow_stream(fd->get(), &f, on_event, stop);
    return follow_path(opt.file, opt.file, true, false, &f, on_event, stop);
  }
  RootFs fs(opt.root);
  std::vector<std::string> reasons;
  int year = local_year(std::time(nullptr));
  if (auto k = open_kmsg(fs)) {
    Feed f(year);
    f.scanner.keep_new(SIZE_MAX);
    if (k->device) return follow_kmsg_device(k->fd.get(), &f, on_event, stop);
    return follow_path(fs.path("/dev/kmsg"), "/dev/kmsg", false, true, &f, on_event, stop);
  } else {
    reasons.push_back(k.error());
  }
  {
    // The journal is followed only when it holds this boot's kernel messages.
    Feed probe(year);
    std::string problem = feed_journal(fs, &probe);
    if (problem.empty()) {
      Feed f(year);
      f.scanner.keep_new(SIZE_MAX);
      return follow_journal(fs, &f, on_event, stop);
    }
    reasons.push_back(problem);
  }
  if (fs.exists("/var/log/kern.log")) {
    Feed f(year);
    f.scanner.keep_new(SIZE_MAX);
    return follow_path(fs.path("/var/log/kern.log"), "/var/log/kern.log", false, false, &f,
                       on_event, stop);
  }
  reasons.push_back("no /var/log/kern.log");
  return Error{"no kernel log to follow: " + join_skip_leading_empty(reasons, "; ")};
}

}  // namespace gd
