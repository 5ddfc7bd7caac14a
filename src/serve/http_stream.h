// One accepted connection's bytes, plain or over TLS (tls.h), on a
// non-blocking socket. Every call returns at once: a call that cannot go on
// says which poll(2) events to wait for, and the server (http.cc) waits for
// them under its own deadlines.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace gd {

struct Io {
  ssize_t n = 0;   // > 0: bytes moved; 0: the peer ended the stream (read)
  short wait = 0;  // with n < 0: POLLIN or POLLOUT to wait for, 0 for an error
};

class Stream {
 public:
  explicit Stream(int fd) : fd_(fd) {}
  virtual ~Stream() = default;  // the socket is the server's to close
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int fd() const { return fd_; }
  // The TLS handshake; n > 0 once done (at once for plain TCP).
  virtual Io handshake() { return Io{1, 0}; }
  virtual Io read(char* buf, size_t len);
  virtual Io write(const char* buf, size_t len);
  // Before the FIN: TLS sends its close_notify (best effort, never waits).
  virtual void close_notify() {}

 private:
  int fd_;
};

}  // namespace gd
