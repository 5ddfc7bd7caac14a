#include "serve/http_conns.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/sockios.h>  // SIOCINQ
#include <linux/tcp.h>      // TCP_INFO with tcpi_bytes_received (not in glibc's netinet/tcp.h)
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>

namespace gd {
namespace {

int port_of(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
  return -1;
}

}  // namespace

std::string peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {0};
  const void* a = ss.ss_family == AF_INET6
                      ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6&>(ss).sin6_addr)
                      : static_cast<const void*>(&reinterpret_cast<sockaddr_in&>(ss).sin_addr);
  if (!inet_ntop(ss.ss_family, a, buf, sizeof buf)) return "";
  return std::string(buf) + "/" + std::to_string(port_of(ss));
}

namespace {

// Calls fn(fd) for each socket of this process bound to local `port`.
template <typename Fn>
void for_sockets_on(int port, Fn fn) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long n = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || n == dirfd(d)) continue;
    const int fd = static_cast<int>(n);
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) continue;
    if (port_of(ss) != port) continue;
    if (!fn(fd)) break;
  }
  closedir(d);
}

uint64_t tcp_bytes_received(int fd) {
  tcp_info ti{};
  socklen_t tlen = sizeof ti;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen) == 0 &&
      tlen >= offsetof(tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received) {
    return ti.tcpi_bytes_received;
  }
  return 0;
}

}  // namespace

int find_connection(int port, const std::string& peer) {
  int found = -1;
  for_sockets_on(port, [&](int fd) {
    if (peer_of(fd) != peer) return true;
    found = fd;
    return false;
  });
  return found;
}

int64_t bytes_read_from(int fd) {
  for (int tries = 0; tries < 3; ++tries) {
    const uint64_t before = tcp_bytes_received(fd);
    int queued = 0;
    if (before == 0 || ioctl(fd, SIOCINQ, &queued) != 0) return -1;
    if (tcp_bytes_received(fd) == before) return static_cast<int64_t>(before) - queued;
  }
  return -1;  // data still streaming in: no reliable figure
}

void finish_connection(int fd) { shutdown(fd, SHUT_RDWR); }

bool set_listen_backlog(int port, int backlog) {
  bool done = false;
  for_sockets_on(port, [&](int fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) {
      return true;
    }
    done = listen(fd, backlog) == 0;
    return false;
  });
  return done;
}

std::vector<TcpConn> connections_on(int port) {
  std::vector<TcpConn> out;
  for_sockets_on(port, [&](int fd) {
    TcpConn c;
    c.fd = fd;
    c.peer = peer_of(fd);
    if (c.peer.empty()) return true;  // the listening socket
    c.bytes_received = tcp_bytes_received(fd);
    out.push_back(std::move(c));
    return true;
  });
  return out;
}

bool half_close_with(const TcpConn& c, const std::string& bytes) {
  if (peer_of(c.fd) != c.peer) return false;
  // Never blocks the caller: a client that does not read gets what fits in
  // the socket's send buffer (an answer this short always fits).
  const ssize_t n = send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(c.fd, SHUT_WR);
  return n == static_cast<ssize_t>(bytes.size());
}

void cut_connection(const TcpConn& c) {
  if (peer_of(c.fd) != c.peer) return;
  // shutdown(2) alone is not enough: Linux keeps queueing what the client
  // sends after SHUT_RD, and the worker keeps reading it. So: wake the
  // worker, make the close a reset that drops the queues, and put an
  // unconnected socket in the fd's place (dup3 is atomic): the connection
  // is gone at once, the worker's next read or write fails, and the fd
  // number stays taken until the worker closes it, so no other connection
  // can be hit by that close.
  shutdown(c.fd, SHUT_RDWR);
  linger reset{1, 0};
  setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  int dead = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (dead < 0) return;
  dup3(dead, c.fd, O_CLOEXEC);
  close(dead);
}

}  // namespace gd
