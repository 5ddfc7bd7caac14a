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
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "kernlog/candidates.h"
#include "probe/kernel_log.h"
#include "probe/kernel_log_source.h"
#include "util/cpus.h"
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

// Reads through read_some (read() semantics) to the end, handing fn blocks
// of whole lines (the last one may lack its newline) and the block's offset
// from where reading began, until fn returns false. A line of kMaxLineBytes
// or more goes to skip instead, in pieces as it is read, to its newline:
// one 1 GiB line costs no more memory than a short one, and the lines after
// it are read (it used to be handed on in pieces). A file that shrinks
// meanwhile just ends early. "" or the read error.
using ReadSome = std::function<ssize_t(char*, size_t)>;
std::string for_each_block(const ReadSome& read_some, const OnBlock& fn, const OnSkip& skip) {
  // Not zeroed: read() fills what is used, and untouched pages of the line
  // headroom cost nothing (zeroing all of it faulted in every page first).
  const size_t capacity = kChunkBytes + kMaxLineBytes;
  std::unique_ptr<char[]> buf(new char[capacity]);
  size_t held = 0;        // bytes of buf not yet handed on (a partial line)
  uint64_t consumed = 0;  // handed on or skipped
  bool skipping = false;  // inside an over-long line, held == 0
  for (;;) {
    size_t room = std::min(kChunkBytes, capacity - held);
    ssize_t n = read_some(buf.get() + held, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_text(errno);
    }
    if (n == 0) break;
    size_t end = held + static_cast<size_t>(n);
    size_t from = 0;  // where the text to hand on starts in buf
    if (skipping) {
      const void* nl = std::memchr(buf.get(), '\n', end);
      from =
          nl != nullptr ? static_cast<size_t>(static_cast<const char*>(nl) - buf.get()) + 1 : end;
      skip(from, false);
      consumed += from;
      skipping = nl == nullptr;
    }
    std::string_view view(buf.get() + from, end - from);
    size_t nl = view.rfind('\n');
    size_t cut = nl != std::string_view::npos ? nl + 1 : 0;
    if (cut > 0) {
      if (!fn(view.substr(0, cut), consumed)) return "";
      consumed += cut;
    }
    held = view.size() - cut;
    if (held >= kMaxLineBytes) {  // a line this long is no message: pass it over
      skip(held, true);
      consumed += held;
      held = 0;
      skipping = true;
    }
    if (held > 0) std::memmove(buf.get(), buf.get() + from + cut, held);
  }
  if (held > 0) fn(std::string_view(buf.get(), held), consumed);
  return "";
}

void skip_nothing(uint64_t, bool) {}

ReadSome read_from(int fd) {
  return [fd](char* buf, size_t n) { return ::read(fd, buf, n); };
}

// Reads [*pos, end) of fd with pread, advancing *pos.
ReadSome pread_range(int fd, uint64_t* pos, uint64_t end) {
  return [fd, pos, end](char* buf, size_t n) -> ssize_t {
    if (*pos >= end) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, end - *pos));
    ssize_t got = ::pread(fd, buf, n, static_cast<off_t>(*pos));
    if (got > 0) *pos += static_cast<uint64_t>(got);
    return got;
  };
}

// --- a big file in parts ---------------------------------------------------------------

// A regular file of at least two PartPolicy::min_part_bytes is read in
// parts, each on its own CPU: read()'s copy and the keyword scan both speed
// up on two CPUs, where a reader thread that fed one scanner gained nothing
// (the scanner then reads what another CPU wrote; bench/logs_scan.txt). The
// calling thread reads and decodes the first part; the others only find
// candidate lines (kernlog/candidates.h), which it then decodes in order.
// A part's finder holds at most PartPolicy::held_bytes of candidate text;
// one that finds more (a log of NVIDIA lines alone) stops there, and the
// calling thread reads the rest of that part in order: memory stays bounded.
constexpr size_t kMaxParts = 8;

struct Part {
  explicit Part(uint64_t from) : begin(from), covered(from) {}
  uint64_t begin;
  uint64_t end = UINT64_MAX;  // UINT64_MAX for the last one: to the end of the file
  uint64_t covered;           // found covers [begin, covered)
  CandidateLines found;
  uint64_t skipped_lines = 0;  // over-long lines in [begin, covered)
};

// Finds the candidate lines of a part; `base` is where the part starts in
// the text the scanner was given.
void find_in_part(int fd, uint64_t base, size_t held_bytes, Part* p) {
  try {
    CandidateFinder finder(base);
    finder.expect_continuation();  // an AER group from the part before may go on
    uint64_t pos = p->begin;
    // A read error just ends the part early: the calling thread reads the
    // rest in order and meets (and reports) it again.
    for_each_block(
        pread_range(fd, &pos, p->end),
        [&](std::string_view block, uint64_t) {
          finder.add_text(block);
          return finder.found().text.size() < held_bytes;
        },
        [&](uint64_t bytes, bool line_start) {
          finder.pass_over(bytes);
          if (line_start) ++p->skipped_lines;
        });
    p->covered = p->begin + (finder.offset() - base);
    p->found = finder.take();
  } catch (const std::exception&) {  // out of memory, say: the calling thread reads it all
    p->covered = p->begin;
    p->found = CandidateLines{};
    p->skipped_lines = 0;
  }
}

// Where the first line that starts at or after `at` starts; nullopt when no
// line starts within kMaxLineBytes of it.
std::optional<uint64_t> next_line_start(int fd, uint64_t at) {
  char buf[64 << 10];
  for (uint64_t pos = at; pos < at + kMaxLineBytes;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(pos));
    if (n <= 0) return std::nullopt;
    const void* nl = std::memchr(buf, '\n', static_cast<size_t>(n));
    if (nl != nullptr) return pos + static_cast<uint64_t>(static_cast<const char*>(nl) - buf) + 1;
    pos += static_cast<uint64_t>(n);
  }
  return std::nullopt;
}

// The parts of [start, size) of a file, split at line starts; one part when
// it is too small to split.
std::vector<Part> split_parts(int fd, uint64_t start, uint64_t size, size_t cpus,
                              uint64_t min_part_bytes) {
  size_t n = std::min({cpus, kMaxParts, static_cast<size_t>((size - start) / min_part_bytes)});
  std::vector<Part> parts{Part(start)};
  for (size_t k = 1; k < n; ++k) {
    auto at = next_line_start(fd, start + (size - start) * k / n);
    if (!at || *at <= parts.back().begin || *at >= size) continue;
    parts.back().end = *at;
    parts.emplace_back(*at);
  }
  return parts;
}

// Feeds fd from `start` to its end to f in parts, when it is a regular file
// big enough to split and more than one CPU is ours; nullopt: not split (read
// it in order). Else "" or the read error.
std::optional<std::string> feed_in_parts(int fd, uint64_t start, Feed* f,
                                         const PartPolicy& policy) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  auto size = static_cast<uint64_t>(st.st_size);
  const uint64_t min_part = std::max<uint64_t>(policy.min_part_bytes, 1);
  if (size < start + 2 * min_part) return std::nullopt;
  size_t cpus = policy.cpus;
  if (cpus == 0) {
    auto allowed = allowed_cpus();
    cpus = allowed ? allowed->size() : 1;
  }
  std::vector<Part> parts = split_parts(fd, start, size, cpus, min_part);
  if (parts.size() < 2) return std::nullopt;

  const uint64_t base = f->scanner.text_offset();
  // jthread: joined on every way out, an exception on this thread included.
  std::vector<std::jthread> threads(parts.size());
  for (size_t k = 1; k < parts.size(); ++k) {
    try {
      threads[k] = std::jthread(find_in_part, fd, base + (parts[k].begin - start),
                                policy.held_bytes, &parts[k]);
    } catch (const std::system_error&) {  // no thread: this one reads that part in order
      parts[k].covered = parts[k].begin;
    }
  }
  auto feed_range = [&](uint64_t from, uint64_t to) {
    uint64_t pos = from;
    return for_each_block(
        pread_range(fd, &pos, to),
        [&](std::string_view block, uint64_t) {
          f->text(block);
          return true;
        },
        [&](uint64_t bytes, bool line_start) { f->skip(bytes, line_start); });
  };
  std::string err = feed_range(parts[0].begin, parts[0].end);
  for (size_t k = 1; k < parts.size(); ++k) {
    if (threads[k].joinable()) threads[k].join();
    if (!err.empty()) continue;
    f->candidates(parts[k].found);
    f->stats.skipped_lines += parts[k].skipped_lines;
    if (parts[k].covered < parts[k].end) err = feed_range(parts[k].covered, parts[k].end);
  }
  if (err.empty()) f->last_line = last_line_of(fd);
  return err;
}

}  // namespace

// --- text files (kern.log, logs --from) ------------------------------------------------

// Feeds the text of fd to the scanner; from_last_boot: only from the last
// kernel "Linux version" banner on (kern.log holds several boots). "" or the
// read error.
std::string feed_text_fd(int fd, bool from_last_boot, Feed* f, const PartPolicy& parts) {
  if (from_last_boot) {
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at >= 0) {
      // A file: find the last boot in a first pass, then read from there.
      uint64_t start = 0;
      std::string err = for_each_block(
          read_from(fd),
          [&](std::string_view block, uint64_t off) {
            size_t b = last_boot_offset(block);
            if (b != std::string_view::npos) start = off + b;
            return true;
          },
          skip_nothing);
      if (!err.empty()) return err;
      if (::lseek(fd, at + static_cast<off_t>(start), SEEK_SET) < 0) return errno_text(errno);
    }
  }
  off_t at = ::lseek(fd, 0, SEEK_CUR);
  if (at >= 0) {
    if (auto done = feed_in_parts(fd, static_cast<uint64_t>(at), f, parts)) return *done;
  }
  return for_each_block(
      read_from(fd),
      [&](std::string_view block, uint64_t) {
        f->text(block);
        return true;
      },
      [&](uint64_t bytes, bool line_start) { f->skip(bytes, line_start); });
}

std::string read_line_blocks(int fd, const OnBlock& fn, const OnSkip& skip) {
  return for_each_block(read_from(fd), fn, skip);
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

int64_t file_time(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return st.st_mtime;
  return std::time(nullptr);
}

int file_year(int fd) { return local_year(file_time(fd)); }

}  // namespace gd::klog
