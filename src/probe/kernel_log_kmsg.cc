// The kernel log's first source, /dev/kmsg, live or recorded
// (kernel_log_source.h).
//
// /dev/kmsg (Documentation/ABI/testing/dev-kmsg; docs/nvidia-facts.md
// §7.3, 2026-12): each read() returns one record; EAGAIN
// (O_NONBLOCK) at the end; EPIPE when records were overwritten before they
// were read (go on reading); EINVAL when the buffer is too small (use 8 KiB).
// Opening it needs CAP_SYSLOG when kernel.dmesg_restrict = 1.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "probe/kernel_log.h"
#include "probe/kernel_log_source.h"
#include "probe/rootfs.h"

namespace gd::klog {

namespace {

constexpr size_t kKmsgRecordBytes = 8192;  // read() needs room for one whole record
constexpr size_t kMaxRecordedKmsgBytes = 64 << 20;

std::optional<bool> read_cap_syslog(const RootFs& fs) {
  auto r = fs.read("/proc/self/status", 64 * 1024);
  if (!r) return std::nullopt;
  return cap_syslog_from_status(*r);
}

}  // namespace

// --- /dev/kmsg -----------------------------------------------------------------

// Error: info.unreadable's text.
Result<Kmsg> open_kmsg(const RootFs& fs) {
  int fd = ::open(fs.path("/dev/kmsg").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    return Error{kmsg_unreadable_reason(err, read_dmesg_restrict(fs), read_cap_syslog(fs))};
  }
  Kmsg k{Fd(fd)};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{"/dev/kmsg: " + errno_text(errno)};
  if (S_ISCHR(st.st_mode)) {
    k.device = true;
  } else if (!S_ISREG(st.st_mode)) {
    return Error{"/dev/kmsg is not a character device"};
  }
  return k;
}

// Reads records until EAGAIN (the end). "" or why reading stopped early.
std::string drain_kmsg_device(int fd, Feed* f) {
  char buf[kKmsgRecordBytes];
  // At most kMaxRecords per call: a follower drains again and again, so its
  // running total must not end the reading.
  const uint64_t start = f->stats.records + f->stats.garbled_records;
  while (f->stats.records + f->stats.garbled_records - start < kMaxRecords) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      f->record(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) return "";
    if (errno == EINTR) continue;
    if (errno == EPIPE) continue;  // records lost; the next read gives the oldest kept
    if (errno == EAGAIN) return "";
    return "reading /dev/kmsg: " + errno_text(errno);
  }
  return "";
}

// A recorded /dev/kmsg: what read() returned, one record a line.
void feed_kmsg_file(const RootFs& fs, Feed* f, std::string* problem) {
  auto text = fs.read("/dev/kmsg", kMaxRecordedKmsgBytes);
  if (!text) {
    *problem = text.error();
    return;
  }
  for (auto rec : split_kmsg_records(*text)) {
    if (f->full()) break;
    f->record(rec);
  }
}

}  // namespace gd::klog
