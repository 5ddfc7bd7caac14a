#include "serve/http_stream.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace gd {
namespace {

Io from_errno(ssize_t n, short would_block_wait) {
  if (n >= 0) return Io{n, 0};
  if (errno == EAGAIN || errno == EWOULDBLOCK) return Io{-1, would_block_wait};
  return Io{-1, 0};
}

}  // namespace

Io Stream::read(char* buf, size_t len) {
  ssize_t n;
  do {
    n = recv(fd_, buf, len, 0);
  } while (n < 0 && errno == EINTR);
  return from_errno(n, POLLIN);
}

Io Stream::write(const char* buf, size_t len) {
  ssize_t n;
  do {
    n = send(fd_, buf, len, MSG_NOSIGNAL);  // a gone client is an error, not a SIGPIPE
  } while (n < 0 && errno == EINTR);
  return from_errno(n, POLLOUT);
}

}  // namespace gd
