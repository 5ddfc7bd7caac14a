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
#include "util/text.h"

namespace gd::klog {

namespace {

constexpr size_t kKmsgRecordBytes = 8192;  // read() needs room for one whole record

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

// A recorded /dev/kmsg: what read() returned, one record a line, each
// followed by its " KEY=value" dictionary lines (which parse_kmsg_record
// does not use). Streamed, so its size bounds neither memory nor what is
// read (it was read whole up to 64 MiB, and a longer file cut there): only
// kMaxRecords does, as on the device.
void feed_kmsg_file(const RootFs& fs, Feed* f, std::string* problem) {
  const std::string path = fs.path("/dev/kmsg");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    *problem = "cannot read /dev/kmsg: " + errno_text(errno);
    return;
  }
  bool in_record = false;  // a dictionary line belongs to the record before it
  std::string err = read_line_blocks(
      fd.get(),
      [&](std::string_view block, uint64_t) {
        for (std::string_view line : split_lines(block)) {
          if (!line.empty() && line.front() == ' ') {
            if (in_record) f->bytes += line.size() + 1;
          } else if (!trim(line).empty()) {
            f->record(line);
            in_record = true;
          }
          if (f->full()) return false;
        }
        return true;
      },
      [&](uint64_t bytes, bool line_start) {
        if (line_start) ++f->stats.skipped_lines;
        f->bytes += bytes;
        in_record = false;
      });
  if (!err.empty()) *problem = "cannot read /dev/kmsg: " + err;
}

}  // namespace gd::klog
