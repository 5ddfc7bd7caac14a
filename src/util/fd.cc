#include "util/fd.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gd {

namespace {

enum class Keep { kAll, kHead, kTail };

bool drain(int fd, std::string* into, Keep keep, size_t max, bool* truncated) {
  if (fd < 0) return false;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      size_t got = static_cast<size_t>(n);
      if (keep == Keep::kHead) {
        size_t room = into->size() < max ? max - into->size() : 0;
        into->append(buf, std::min(room, got));
        if (got > room && truncated != nullptr) *truncated = true;
      } else {
        into->append(buf, got);
        if (keep == Keep::kTail && into->size() > 2 * max) into->erase(0, into->size() - max);
      }
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;  // other errors: treat as closed
  }
}

}  // namespace

bool drain_fd(int fd, std::string* into) { return drain(fd, into, Keep::kAll, 0, nullptr); }

bool drain_fd_head(int fd, std::string* into, size_t max, bool* truncated) {
  return drain(fd, into, Keep::kHead, max, truncated);
}

bool drain_fd_tail(int fd, std::string* into, size_t max) {
  return drain(fd, into, Keep::kTail, max, nullptr);
}

}  // namespace gd
