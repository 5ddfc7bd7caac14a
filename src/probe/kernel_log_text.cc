// The kernel log's text files: /var/log/kern.log and a file the user names
// (--file, "-" = stdin) (kernel_log_source.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <functional>
#include <string>

#include "probe/kernel_log.h"
#include "probe/kernel_log_source.h"

namespace gd::klog {

namespace {

constexpr size_t kChunkBytes = 4 << 20;  // text files are read in chunks of whole lines

// Reads fd from its current position to the end in chunks, handing fn
// blocks of whole lines (the last one may lack its newline) and the block's
// offset from where reading began. "" or the read error.
std::string for_each_block(int fd, const std::function<void(std::string_view, uint64_t)>& fn) {
  std::string buf;
  uint64_t consumed = 0;
  std::string chunk(kChunkBytes, '\0');
  for (;;) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_text(errno);
    }
    if (n == 0) break;
    buf.append(chunk.data(), static_cast<size_t>(n));
    size_t nl = buf.rfind('\n');
    // A line longer than a chunk is passed on in pieces rather than held forever.
    size_t cut =
        nl != std::string::npos ? nl + 1 : (buf.size() >= 4 * kChunkBytes ? buf.size() : 0);
    if (cut == 0) continue;
    fn(std::string_view(buf).substr(0, cut), consumed);
    consumed += cut;
    buf.erase(0, cut);
  }
  if (!buf.empty()) fn(buf, consumed);
  return "";
}

}  // namespace

// --- text files (kern.log, --file) ------------------------------------------------

// Feeds the text of fd to the scanner; from_last_boot: only from the last
// kernel "Linux version" banner on (kern.log holds several boots). "" or the
// read error.
std::string feed_text_fd(int fd, bool from_last_boot, Feed* f) {
  // A regular file is mapped and scanned in one pass, without copying it:
  // reading it through a buffer costs as much as the scan (bench/logs_scan.py).
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    size_t size = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map != MAP_FAILED && at >= 0 && static_cast<size_t>(at) <= size) {
      std::string_view text(static_cast<const char*>(map), size);
      text.remove_prefix(static_cast<size_t>(at));
      if (from_last_boot) {
        size_t b = last_boot_offset(text);
        if (b != std::string_view::npos) text.remove_prefix(b);
      }
      f->text(text);
      ::munmap(map, size);
      return "";
    }
    if (map != MAP_FAILED) ::munmap(map, size);
  }
  if (from_last_boot) {
    uint64_t start = 0;
    std::string err = for_each_block(fd, [&](std::string_view block, uint64_t off) {
      size_t b = last_boot_offset(block);
      if (b != std::string_view::npos) start = off + b;
    });
    if (!err.empty()) return err;
    if (::lseek(fd, static_cast<off_t>(start), SEEK_SET) < 0) return errno_text(errno);
  }
  return for_each_block(fd, [&](std::string_view block, uint64_t) { f->text(block); });
}

// Opens a file the user named. Error: "cannot read FILE: why".
Result<Fd> open_user_file(const std::string& file) {
  if (file == "-") return Fd(STDIN_FILENO, false);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Error{"cannot read " + file + ": " + errno_text(errno)};
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{"cannot read " + file + ": " + errno_text(errno)};
  if (S_ISDIR(st.st_mode)) return Error{"cannot read " + file + ": " + errno_text(EISDIR)};
  return owned;
}

int file_year(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return year_of(st.st_mtime);
  return year_of(std::time(nullptr));
}

}  // namespace gd::klog
