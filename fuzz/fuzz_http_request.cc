// libFuzzer target: the exporter's HTTP server (serve/http.h) as a client
// meets it. One server runs on a free loopback port for the whole run; each
// input is written to a fresh connection as the client's bytes, then the
// client stops sending. Whatever comes back is HTTP (or nothing, for a
// head that never ended), never a crash, a hang or a second reply glued to
// a garbled first; and a good scrape on the next connection still gets its
// 200, so no input leaves the server broken.
//
//   GET /metrics HTTP/1.1\r\nHost: x\r\nRange: bytes=0-,0-\r\n\r\n
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "serve/http.h"

namespace {

constexpr int kAnswerTimeoutS = 5;  // the server answers a closed request at once

gd::HttpServer& server() {
  static std::unique_ptr<gd::HttpServer> s = [] {
    gd::HttpOptions opt;
    opt.listen = "127.0.0.1:0";
    auto body = [] { return gd::HttpResponse{200, "text/plain", "gpudoctor_up 1\n"}; };
    auto started = gd::start_http_server(opt, {{"/metrics", body}, {"/", body}});
    GD_REQUIRE(started.ok());
    return std::move(*started);
  }();
  return *s;
}

// Sends `request` on a new connection, half-closes it and reads the whole
// answer (until the server closes, or the timeout).
std::string exchange(std::string_view request) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  GD_REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(server().port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{kAnswerTimeoutS, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  // libFuzzer's timeout alarm (SIGALRM every few seconds) interrupts a
  // socket call that has a timeout even under SA_RESTART (signal(7)), so
  // EINTR is retried here rather than taken for the server's doing. An
  // interrupted connect goes on in the background: wait until it is done.
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    GD_REQUIRE(errno == EINTR);
    pollfd p{fd, POLLOUT, 0};
    int ready = 0;
    do {
      ready = poll(&p, 1, kAnswerTimeoutS * 1000);
    } while (ready < 0 && errno == EINTR);
    int err = -1;
    socklen_t len = sizeof err;
    GD_REQUIRE(ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0);
  }
  for (size_t at = 0; at < request.size();) {
    ssize_t n = send(fd, request.data() + at, request.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server may refuse and close before reading everything
    at += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) break;
    // A reset after a refusal is an answer too; a timeout is a hang.
    GD_REQUIRE(n > 0 || errno == ECONNRESET);
    if (n < 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view request(reinterpret_cast<const char*>(data), size);
  std::string answer = exchange(request);
  GD_REQUIRE(answer.empty() || answer.starts_with("HTTP/1.1 "));
  std::string good = exchange("GET /metrics HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n");
  GD_REQUIRE(good.starts_with("HTTP/1.1 200 "));
  GD_REQUIRE(good.ends_with("gpudoctor_up 1\n"));
  return 0;
}
