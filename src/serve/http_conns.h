// The open TCP connections to one of our ports, as the kernel sees them.
// cpp-httplib never hands out the sockets it accepts, and shutdown(2) on one
// is the only way to make its worker give up on a client that trickles bytes
// or floods headers (http.cc's watchdog). Linux only: /proc/self/fd and
// TCP_INFO.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gd {

struct TcpConn {
  int fd = -1;
  std::string peer;             // "127.0.0.1/53122": a reused fd is another connection
  uint64_t bytes_received = 0;  // from the client so far (TCP_INFO)
  bool operator<(const TcpConn& o) const { return fd != o.fd ? fd < o.fd : peer < o.peer; }
};

// Connected (accepted) sockets of this process whose local port is `port`.
std::vector<TcpConn> connections_on(int port);

// Resets `c` (if its fd is still that connection) and leaves a dead socket
// under its fd number for its owner to close.
void cut_connection(const TcpConn& c);

}  // namespace gd
