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

// The peer of connected socket `fd` as TcpConn::peer spells it, or "" when
// it has none (a listening or closed socket).
std::string peer_of(int fd);

// Sends `bytes` on `c` (if its fd is still that connection) without
// blocking, then shuts down its sending side: an answer written from outside
// its worker. False when the fd is another connection now or not all was sent.
bool half_close_with(const TcpConn& c, const std::string& bytes);

// The fd of this process's connection on local `port` whose peer is `peer`
// (as TcpConn::peer spells it), or -1.
int find_connection(int port, const std::string& peer);

// Bytes the application has read from connection `fd` so far: what the
// kernel received in order minus what still waits in the receive queue.
// Read twice around the queue so that a segment arriving in between cannot
// inflate it. -1 when the kernel does not say.
int64_t bytes_read_from(int fd);

// Orderly end of a connection whose last answer is already written: a FIN
// after the queued bytes (nothing is dropped), and the owner's next read
// sees end of file.
void finish_connection(int fd);

// Sets the accept backlog of this process's listening socket on `port`
// (listen(2) again on a listening socket only changes its backlog).
// False when no such socket was found or the kernel refused.
bool set_listen_backlog(int port, int backlog);

}  // namespace gd
