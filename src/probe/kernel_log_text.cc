// The kernel log's text files: /var/log/kern.log and a file the user names
// (--from, "-" = stdin) (kernel_log_source.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "probe/kernel_log.h"
#include "probe/kernel_log_source.h"
#include "util/text.h"
#include "util/time.h"

namespace gd::klog {

namespace {

// Text files are read with read() through one bounded buffer, never mapped:
// a mapped file that shrinks under the reader (logrotate's copytruncate, a
// truncate) kills it with SIGBUS. Memory stays at the buffer whatever the
// file's size (bench/logs_rss.py). 128 KiB reads stay in the CPU's L2 cache
// between read()'s copy and the scan: the bench's audit log took 77 ms with
// them, 84 ms with 1 MiB reads (bench/logs_scan.txt).
constexpr size_t kChunkBytes = 128 << 10;
// A line longer than this is passed on in pieces rather than held whole.
constexpr size_t kMaxLineBytes = 4 << 20;

// Reads fd from its current position to the end, handing fn blocks of whole
// lines (the last one may lack its newline) and the block's offset from
// where reading began. A file that shrinks meanwhile just ends early. "" or
// the read error.
std::string for_each_block(int fd, const std::function<void(std::string_view, uint64_t)>& fn) {
  // Not zeroed: read() fills what is used, and untouched pages of the line
  // headroom cost nothing (zeroing all 5 MiB faulted in every page first).
  const size_t capacity = kChunkBytes + kMaxLineBytes;
  std::unique_ptr<char[]> buf(new char[capacity]);
  size_t held = 0;  // bytes of buf not yet handed on (a partial line)
  uint64_t consumed = 0;
  for (;;) {
    size_t room = std::min(kChunkBytes, capacity - held);
    ssize_t n = ::read(fd, buf.get() + held, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_text(errno);
    }
    if (n == 0) break;
    size_t end = held + static_cast<size_t>(n);
    std::string_view view(buf.get(), end);
    size_t nl = view.rfind('\n');
    size_t cut = nl != std::string_view::npos ? nl + 1 : (end >= kMaxLineBytes ? end : 0);
    held = end;
    if (cut == 0) continue;
    fn(view.substr(0, cut), consumed);
    consumed += cut;
    std::memmove(buf.get(), buf.get() + cut, end - cut);
    held = end - cut;
  }
  if (held > 0) fn(std::string_view(buf.get(), held), consumed);
  return "";
}

}  // namespace

// --- text files (kern.log, logs --from) ------------------------------------------------

// Feeds the text of fd to the scanner; from_last_boot: only from the last
// kernel "Linux version" banner on (kern.log holds several boots). "" or the
// read error.
std::string feed_text_fd(int fd, bool from_last_boot, Feed* f) {
  if (from_last_boot) {
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at >= 0) {
      // A file: find the last boot in a first pass, then read from there.
      uint64_t start = 0;
      std::string err = for_each_block(fd, [&](std::string_view block, uint64_t off) {
        size_t b = last_boot_offset(block);
        if (b != std::string_view::npos) start = off + b;
      });
      if (!err.empty()) return err;
      if (::lseek(fd, at + static_cast<off_t>(start), SEEK_SET) < 0) return errno_text(errno);
    }
  }
  return for_each_block(fd, [&](std::string_view block, uint64_t) { f->text(block); });
}

// Opens a file the user named: a regular file or a pipe (a FIFO with no
// writer reads as empty instead of blocking the open); a directory or a
// device (/dev/zero would never end) is refused. Error: "cannot read FILE:
// why".
Result<Fd> open_user_file(const std::string& file) {
  if (file == "-") return Fd(STDIN_FILENO, false);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return Error{"cannot read " + file + ": " + errno_text(errno)};
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{"cannot read " + file + ": " + errno_text(errno)};
  if (S_ISDIR(st.st_mode)) return Error{"cannot read " + file + ": " + errno_text(EISDIR)};
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return Error{"cannot read " + file + ": not a regular file or a pipe"};
  }
  // Reads wait for data again (a pipe's writer may be slow).
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return owned;
}

std::string last_line_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  // Back from the end in blocks until a line that is not blank has its
  // start (or kMaxLineBytes were read: a longer line is cut, as elsewhere).
  std::string tail;
  uint64_t pos = static_cast<uint64_t>(st.st_size);
  constexpr size_t kBlock = 64 << 10;
  while (pos > 0 && tail.size() < kMaxLineBytes) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, pos));
    std::string block(n, '\0');
    ssize_t got = ::pread(fd, block.data(), n, static_cast<off_t>(pos - n));
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(n)) break;  // shrunk meanwhile: use what is here
    pos -= n;
    tail.insert(0, block);
    std::string_view body = trim(tail);
    size_t nl = body.rfind('\n');
    if (nl != std::string_view::npos) return std::string(trim(body.substr(nl + 1)).substr(0, 4096));
  }
  return std::string(trim(tail).substr(0, 4096));
}

int file_year(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return local_year(st.st_mtime);
  return local_year(std::time(nullptr));
}

}  // namespace gd::klog
