#include "util/read_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "util/bytes.h"

namespace gd {

namespace {

constexpr size_t kReadBytes = 64 << 10;  // one read(); the buffer grows by what arrives

std::string over(size_t cap_bytes) {
  return "over the " + format_bytes_exact(cap_bytes) + " limit";
}

}  // namespace

Result<std::string> read_fd_capped(int fd, size_t cap_bytes) {
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{std::strerror(errno)};
  if (S_ISDIR(st.st_mode)) return Error{std::strerror(EISDIR)};
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > cap_bytes) return Error{over(cap_bytes)};
    out.reserve(static_cast<size_t>(st.st_size));
  }
  char buf[kReadBytes];
  for (;;) {
    // One byte past the cap tells "exactly at the cap" from "over it".
    size_t want = std::min(sizeof buf, cap_bytes + 1 - out.size());
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        // A non-blocking stdin handed down by the caller: wait for data.
        struct pollfd p {
          fd, POLLIN, 0
        };
        if (::poll(&p, 1, -1) < 0 && errno != EINTR) return Error{std::strerror(errno)};
        continue;
      }
      return Error{std::strerror(errno)};
    }
    if (n == 0) break;
    // Checked before appending: the string never grows past the cap (its
    // doubling would otherwise allocate twice the cap for the last byte).
    if (out.size() + static_cast<size_t>(n) > cap_bytes) return Error{over(cap_bytes)};
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> read_file_capped(const std::string& path, size_t cap_bytes) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer,
  // forever when there is none.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return Error{std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error{std::strerror(err)};
  }
  if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) {
    ::close(fd);
    return Error{S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "a block device, not a file"};
  }
  // Reads block again once open: a writer that is slow to write (a pipe from
  // a command) is waited for; a FIFO with no writer reads as empty.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  auto r = read_fd_capped(fd, cap_bytes);
  ::close(fd);
  return r;
}

}  // namespace gd
