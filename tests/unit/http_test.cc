// The exporter's HTTP server, in process on 127.0.0.1:0, driven by raw
// sockets (for what a well-behaved client library would never send) and
// OpenSSL's client (for TLS).
#include "serve/http.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "serve/http_listen.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t).count();
}

std::map<std::string, HttpHandler> test_routes() {
  return {
      {"/metrics",
       [] {
         return HttpResponse{200, "text/plain; version=0.0.4", "up 1\n"};
       }},
      {"/",
       [] {
         return HttpResponse{200, "text/html; charset=utf-8", "<p>hi</p>"};
       }},
      {"/healthz",
       [] {
         return HttpResponse{503, "text/plain; charset=utf-8", "stale\n"};
       }},
  };
}

std::unique_ptr<HttpServer> start(HttpOptions opt = {}) {
  opt.listen = "127.0.0.1:0";
  auto s = start_http_server(opt, test_routes());
  EXPECT_TRUE(s.ok()) << s.error();
  return s.ok() ? std::move(*s) : nullptr;
}

int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the server closes or `timeout_ms` passes.
std::string read_all(int fd, int timeout_ms = 5000) {
  std::string out;
  auto t0 = Clock::now();
  char buf[4096];
  while (ms_since(t0) < timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Content-Length of a response head, -1 when absent.
long content_length(const std::string& head) {
  std::string lower = head;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t p = lower.find("\r\ncontent-length: ");
  return p == std::string::npos ? -1 : std::atol(head.c_str() + p + 18);
}

// One request on its own connection; returns the whole response (or what
// came before the server hung up). Servers may keep a connection open after
// an error, so this stops at the end of the first response.
std::string raw(int port, const std::string& request, int timeout_ms = 5000) {
  int fd = connect_to(port);
  if (fd < 0) return "";
  send_all(fd, request);
  const bool head_only = request.rfind("HEAD ", 0) == 0;
  std::string out;
  char buf[4096];
  auto t0 = Clock::now();
  while (ms_since(t0) < timeout_ms) {
    size_t end = out.find("\r\n\r\n");
    if (end != std::string::npos) {
      long len = head_only ? 0 : content_length(out.substr(0, end + 2));
      if (len >= 0 && out.size() >= end + 4 + static_cast<size_t>(len)) break;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return -1;
  return std::atoi(response.c_str() + 9);
}

std::string body_of(const std::string& response) {
  size_t p = response.find("\r\n\r\n");
  return p == std::string::npos ? "" : response.substr(p + 4);
}

bool has_header(const std::string& response, const std::string& line) {
  std::string head = response.substr(0, response.find("\r\n\r\n")) + "\r\n";
  return head.find("\r\n" + line + "\r\n") != std::string::npos;
}

std::string get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
}

TEST(HttpServer, ServesRoutesWithTheirContentType) {
  auto s = start();
  ASSERT_TRUE(s);
  std::string r = raw(s->port(), get("/metrics"));
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_TRUE(has_header(r, "Content-Type: text/plain; version=0.0.4")) << r;
  EXPECT_EQ(body_of(r), "up 1\n");
  // Handlers choose the status; the query string does not change the route.
  r = raw(s->port(), get("/healthz?x=1"));
  EXPECT_EQ(status_of(r), 503) << r;
  EXPECT_EQ(body_of(r), "stale\n");
  r = raw(s->port(), get("/"));
  EXPECT_TRUE(has_header(r, "Content-Type: text/html; charset=utf-8")) << r;
  EXPECT_NE(r.find("Content-Security-Policy: default-src 'none'"), std::string::npos) << r;
}

TEST(HttpServer, HeadHasHeadersButNoBody) {
  auto s = start();
  ASSERT_TRUE(s);
  std::string r = raw(s->port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_TRUE(has_header(r, "Content-Type: text/plain; version=0.0.4")) << r;
  EXPECT_EQ(body_of(r), "");
}

TEST(HttpServer, UnknownPathIs404NamingTheEndpoints) {
  auto s = start();
  ASSERT_TRUE(s);
  std::string r = raw(s->port(), get("/nope"));
  EXPECT_EQ(status_of(r), 404) << r;
  EXPECT_EQ(body_of(r), "not found; this exporter serves / /healthz /metrics\n");
  // A path that only differs by a trailing slash or case is not a route.
  EXPECT_EQ(status_of(raw(s->port(), get("/metrics/"))), 404);
  EXPECT_EQ(status_of(raw(s->port(), get("/METRICS"))), 404);
}

TEST(HttpServer, OtherMethodsAre405WithAllow) {
  auto s = start();
  ASSERT_TRUE(s);
  for (const char* m : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    std::string r = raw(s->port(), std::string(m) +
                                       " /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                                       "Connection: close\r\n\r\nhello");
    EXPECT_EQ(status_of(r), 405) << m << ": " << r;
    EXPECT_TRUE(has_header(r, "Allow: GET, HEAD")) << r;
  }
  // A method HTTP does not define is a bad request line.
  std::string r = raw(s->port(), "BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(r), 400) << r;
}

TEST(HttpServer, OtherMethodsCloseTheConnection) {
  auto s = start();
  ASSERT_TRUE(s);
  for (const char* m : {"OPTIONS", "TRACE"}) {
    int fd = connect_to(s->port());
    ASSERT_GE(fd, 0);
    send_all(fd, std::string(m) + " /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    auto t0 = Clock::now();
    std::string r = read_all(fd, 3000);  // until the server closes
    close(fd);
    EXPECT_EQ(status_of(r), 405) << m << ": " << r;
    EXPECT_TRUE(has_header(r, "Connection: close")) << r;
    EXPECT_LT(ms_since(t0), 1500) << m << ": the connection stayed open";
  }
}

TEST(HttpServer, OversizedUriIs414) {
  auto s = start();
  ASSERT_TRUE(s);
  std::string r = raw(s->port(), get("/" + std::string(10000, 'a')));
  EXPECT_EQ(status_of(r), 414) << r.substr(0, 200);
  EXPECT_EQ(body_of(r), "request URI too long\n");
}

TEST(HttpServer, OversizedHeadersAreRefused) {
  auto s = start();
  ASSERT_TRUE(s);
  // Many small headers: 431 from our total limit.
  std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  for (int i = 0; i < 300; ++i)
    req += "X-Filler-" + std::to_string(i) + ": " + std::string(60, 'v') + "\r\n";
  req += "\r\n";
  std::string r = raw(s->port(), req);
  EXPECT_EQ(status_of(r), 431) << r.substr(0, 200);
  // One huge header line: the library's per-line cap answers 400.
  r = raw(s->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'v') +
                         "\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(status_of(r) == 400 || status_of(r) == 431) << r.substr(0, 200);
  // Still serving.
  EXPECT_EQ(status_of(raw(s->port(), get("/metrics"))), 200);
}

TEST(HttpServer, HeaderFloodIsCut) {
  // A client streaming headers must be cut off (a head is at most 64 KiB)
  // before it costs the heap much.
  auto s = start();
  ASSERT_TRUE(s);
  int fd = connect_to(s->port());
  ASSERT_GE(fd, 0);
  std::string chunk;
  for (int i = 0; i < 1000; ++i) chunk += "X-Flood: " + std::string(100, 'v') + "\r\n";
  size_t sent = 0;
  bool cut = false;
  auto t0 = Clock::now();
  send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
  while (sent < (256u << 20) && ms_since(t0) < 20000) {
    if (!send_all(fd, chunk)) {
      cut = true;
      break;
    }
    sent += chunk.size();
  }
  EXPECT_LT(ms_since(t0), 5000) << "the cut came late";
  close(fd);
  EXPECT_TRUE(cut) << "sent " << sent << " bytes of headers without being cut off";
  EXPECT_LT(sent, 64u << 20);
  EXPECT_EQ(status_of(raw(s->port(), get("/metrics"))), 200);
}

TEST(HttpServer, GarbageBytesDoNotCrashIt) {
  auto s = start();
  ASSERT_TRUE(s);
  std::mt19937 rng(42);
  for (int i = 0; i < 20; ++i) {
    std::string junk(static_cast<size_t>(1 + rng() % 3000), '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (i % 2) junk += "\r\n\r\n";
    int fd = connect_to(s->port());
    ASSERT_GE(fd, 0);
    send_all(fd, junk);
    shutdown(fd, SHUT_WR);  // and nothing more: the server must answer or hang up
    std::string r = read_all(fd, 6000);
    close(fd);
    int st = status_of(r);
    EXPECT_TRUE(st == -1 || st == 400 || st == 414) << st;  // closed, or a clear error
  }
  // Half a request line, then the client goes away.
  int fd = connect_to(s->port());
  send_all(fd, "GET /met");
  close(fd);
  EXPECT_EQ(status_of(raw(s->port(), get("/metrics"))), 200);
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  auto s = start();
  ASSERT_TRUE(s);
  int fd = connect_to(s->port());
  ASSERT_GE(fd, 0);
  // One request, its whole answer, then the next on the same connection.
  // (Pipelining is tests/reliability/http_attacks.py's.)
  send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string first;
  char buf[4096];
  auto t0 = Clock::now();
  while (first.find("up 1\n") == std::string::npos && ms_since(t0) < 5000) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    first.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(status_of(first), 200) << first;
  send_all(fd, get("/healthz"));
  std::string second = read_all(fd);
  close(fd);
  EXPECT_EQ(status_of(second), 503) << second;
  EXPECT_EQ(body_of(second), "stale\n");
}

// Slow clients: each sends a request header a byte at a time, once a second.
class Slowloris {
 public:
  Slowloris(int port, int n) {
    for (int i = 0; i < n; ++i) {
      int fd = connect_to(port);
      if (fd >= 0) fds_.push_back(fd);
    }
    for (int fd : fds_) send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    thread_ = std::thread([this] {
      while (!stop_) {
        for (size_t i = 0; i < fds_.size(); ++i) {
          if (fds_[i] >= 0 && !send_all(fds_[i], "a")) ++cut_;
          if (fds_[i] >= 0 && !alive(fds_[i])) {
            close(fds_[i]);
            fds_[i] = -1;
          }
        }
        for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(milliseconds(100));
      }
    });
  }
  ~Slowloris() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  size_t open() const {
    size_t n = 0;
    for (int fd : fds_) n += fd >= 0;
    return n;
  }
  size_t size() const { return fds_.size(); }

 private:
  // The server has hung up once the socket reads EOF.
  static bool alive(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return true;
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) > 0;
  }
  std::vector<int> fds_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> cut_{0};
};

TEST(HttpServer, SlowClientsDoNotStallOthers) {
  auto s = start();  // default pool (32 threads)
  ASSERT_TRUE(s);
  Slowloris slow(s->port(), 12);
  ASSERT_EQ(slow.size(), 12u);
  std::this_thread::sleep_for(milliseconds(1500));
  for (int i = 0; i < 10; ++i) {
    auto t0 = Clock::now();
    std::string r = raw(s->port(), get("/metrics"));
    EXPECT_EQ(status_of(r), 200) << r;
    EXPECT_LT(ms_since(t0), 500) << "request " << i << " waited behind slow clients";
  }
  // Below the pressure mark, slow clients are let be (they may be real, just slow).
  EXPECT_EQ(slow.open(), 12u);
}

TEST(HttpServer, SlowClientsFillingThePoolAreCut) {
  HttpOptions opt;
  opt.max_threads = 4;
  opt.connection_deadline_ms = 1500;
  auto s = start(opt);
  ASSERT_TRUE(s);
  Slowloris slow(s->port(), 8);  // twice the pool: a normal client must queue
  std::this_thread::sleep_for(milliseconds(300));
  auto t0 = Clock::now();
  std::string r = raw(s->port(), get("/metrics"), 10000);
  EXPECT_EQ(status_of(r), 200) << r;
  // Deadline (1.5 s) plus the watchdog's period (1 s) plus slack.
  EXPECT_LT(ms_since(t0), 4000);
  std::this_thread::sleep_for(milliseconds(2000));
  EXPECT_LT(slow.open(), slow.size());
}

// The client has closed (or reset) the connection's other end by now.
bool closed_by_server(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return false;
  char c;
  return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

TEST(HttpServer, IdleConnectionsHoldNoThread) {
  HttpOptions opt;
  opt.max_threads = 4;
  auto s = start(opt);
  ASSERT_TRUE(s);
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(connect_to(s->port()));
  std::this_thread::sleep_for(milliseconds(300));
  auto t0 = Clock::now();
  EXPECT_EQ(status_of(raw(s->port(), get("/metrics"))), 200);
  EXPECT_LT(ms_since(t0), 500) << "a request waited behind 40 idle connections";
  for (int fd : idle) close(fd);
}

TEST(HttpServer, APeersOldestWaitingConnectionMakesRoom) {
  HttpOptions opt;
  opt.max_connections_per_peer = 8;
  auto s = start(opt);
  ASSERT_TRUE(s);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(connect_to(s->port()));
    std::this_thread::sleep_for(milliseconds(5));  // accepted in this order
  }
  // The newest 8 stay; the 12 before them were closed, oldest first.
  std::this_thread::sleep_for(milliseconds(300));
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(closed_by_server(idle[static_cast<size_t>(i)], 0), i < 12) << i;
  }
  // A new connection from the same peer is answered.
  EXPECT_EQ(status_of(raw(s->port(), get("/metrics"))), 200);
  for (int fd : idle) close(fd);
}

TEST(HttpServer, KeepAliveIsCutUnderPressure) {
  HttpOptions opt;
  opt.max_threads = 4;  // pressure from 2 open connections
  auto s = start(opt);
  ASSERT_TRUE(s);
  int a = connect_to(s->port());
  int b = connect_to(s->port());
  // Answered under pressure: Connection: close, and closed.
  send_all(a, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r = read_all(a, 2000);
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_TRUE(has_header(r, "Connection: close")) << r;
  close(a);
  close(b);
}

TEST(HttpServer, StopIsPromptWithSlowClientsConnected) {
  auto s = start();
  ASSERT_TRUE(s);
  Slowloris slow(s->port(), 4);
  std::this_thread::sleep_for(milliseconds(300));
  auto t0 = Clock::now();
  s->stop();
  EXPECT_LT(ms_since(t0), 2000);
  EXPECT_LT(connect_to(s->port()), 0);  // nothing listens any more
}

TEST(HttpServer, PortInUseIsAClearError) {
  auto a = start();
  ASSERT_TRUE(a);
  HttpOptions opt;
  opt.listen = "127.0.0.1:" + std::to_string(a->port());
  auto b = start_http_server(opt, test_routes());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().find("cannot listen on 127.0.0.1:"), std::string::npos) << b.error();
}

TEST(HttpServer, BadListenAddressIsAClearError) {
  HttpOptions opt;
  opt.listen = "127.0.0.1";
  auto r = start_http_server(opt, test_routes());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "--listen: expected HOST:PORT, [IPV6]:PORT or :PORT, got '127.0.0.1'");
  opt.listen = "192.0.2.1:0";  // TEST-NET-1: not an address of this machine
  r = start_http_server(opt, test_routes());
  ASSERT_FALSE(r.ok());
}

TEST(HttpServer, AllInterfacesFormAnswersOnIpv4Loopback) {
  HttpOptions opt;
  opt.listen = ":0";
  auto s = start_http_server(opt, test_routes());
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(status_of(raw((*s)->port(), get("/metrics"))), 200);
}

TEST(ListenAddress, Forms) {
  auto a = parse_listen_address("127.0.0.1:9835");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9835);
  EXPECT_FALSE(a->all_interfaces);
  a = parse_listen_address("[::1]:0");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 0);
  a = parse_listen_address(":9100");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::");
  EXPECT_TRUE(a->all_interfaces);
  a = parse_listen_address("localhost:80");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
  for (const char* bad :
       {"", "9835", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x", "::1:80",
        "[::1]80", "[]:80", "[127.0.0.1]:80", "a b:80"}) {
    EXPECT_FALSE(parse_listen_address(bad).ok()) << bad;
  }
  EXPECT_EQ(url_host_port("::1", 80), "[::1]:80");
  EXPECT_EQ(url_host_port("127.0.0.1", 80), "127.0.0.1:80");
}

// --- TLS and basic auth -----------------------------------------------------

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gd-http-test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name) << text;
  }

 private:
  std::string path_;
};

// A self-signed certificate for 127.0.0.1, made with openssl(1) for the test.
bool make_cert(const TempDir& d) {
  std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
      d.path() + "/server.key -out " + d.path() + "/server.crt >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::string bcrypt_hash(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt)) {
    return "";
  }
  crypt_data data{};
  const char* h = crypt_rn(password.c_str(), salt, &data, sizeof data);
  return h ? h : "";
}

// One GET over TLS, the server's certificate checked against `ca_file`;
// the whole response, or "" when the handshake failed.
std::string tls_get(int port, const std::string& ca_file, const std::string& path) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  if (!ctx || SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr) != 1) return "";
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  int fd = connect_to(port);
  if (fd < 0) return "";
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  SSL_set1_host(ssl.get(), "127.0.0.1");
  std::string out;
  if (SSL_connect(ssl.get()) == 1) {
    std::string req = get(path);
    SSL_write(ssl.get(), req.data(), static_cast<int>(req.size()));
    char buf[4096];
    int n;
    while ((n = SSL_read(ssl.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  ssl.reset();
  close(fd);
  return out;
}

TEST(HttpServer, ServesTlsFromTheWebConfig) {
  TempDir d;
  ASSERT_TRUE(make_cert(d)) << "openssl req failed";
  // Relative paths resolve against the config file's directory.
  d.write("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  HttpOptions opt;
  opt.listen = "127.0.0.1:0";
  opt.web_config = d.path() + "/web.yml";
  auto s = start_http_server(opt, test_routes());
  ASSERT_TRUE(s.ok()) << s.error();
  std::string r = tls_get((*s)->port(), d.path() + "/server.crt", "/metrics");
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_EQ(body_of(r), "up 1\n");
  // A client that trusts another certificate gets no answer.
  TempDir other;
  ASSERT_TRUE(make_cert(other));
  EXPECT_EQ(tls_get((*s)->port(), other.path() + "/server.crt", "/metrics"), "");
  // Plain HTTP to the TLS port gets no HTTP answer.
  EXPECT_EQ(status_of(raw((*s)->port(), get("/metrics"), 2000)), -1);
}

TEST(HttpServer, TlsSetupErrorsAreClear) {
  TempDir d;
  d.write("web.yml", "tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n");
  HttpOptions opt;
  opt.listen = "127.0.0.1:0";
  opt.web_config = d.path() + "/web.yml";
  auto s = start_http_server(opt, test_routes());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("cannot load cert_file " + d.path() + "/missing.crt"), std::string::npos)
      << s.error();
}

TEST(HttpServer, BasicAuth) {
  TempDir d;
  d.write("web.yml", "basic_auth_users:\n  prometheus: " + bcrypt_hash("s3cret", 4) + "\n");
  HttpOptions opt;
  opt.listen = "127.0.0.1:0";
  opt.web_config = d.path() + "/web.yml";
  auto s = start_http_server(opt, test_routes());
  ASSERT_TRUE(s.ok()) << s.error();
  int port = (*s)->port();
  auto with = [&](const std::string& auth) {
    return raw(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n" + auth + "Connection: close\r\n\r\n");
  };
  // prometheus:s3cret
  std::string r = with("Authorization: Basic cHJvbWV0aGV1czpzM2NyZXQ=\r\n");
  EXPECT_EQ(status_of(r), 200) << r;
  r = with("Authorization: basic cHJvbWV0aGV1czpzM2NyZXQ=\r\n");  // scheme is case-insensitive
  EXPECT_EQ(status_of(r), 200) << r;
  // prometheus:wrong
  r = with("Authorization: Basic cHJvbWV0aGV1czp3cm9uZw==\r\n");
  EXPECT_EQ(status_of(r), 401) << r;
  EXPECT_TRUE(has_header(r, "WWW-Authenticate: Basic realm=\"gpudoctor\", charset=\"UTF-8\"")) << r;
  // nobody:s3cret
  EXPECT_EQ(status_of(with("Authorization: Basic bm9ib2R5OnMzY3JldA==\r\n")), 401);
  EXPECT_EQ(status_of(with("")), 401);
  EXPECT_EQ(status_of(with("Authorization: Basic !!!!\r\n")), 401);
  EXPECT_EQ(status_of(with("Authorization: Bearer cHJvbWV0aGV1czpzM2NyZXQ=\r\n")), 401);
  // Unknown paths ask for credentials too, rather than telling what exists.
  EXPECT_EQ(status_of(raw(port, get("/nope"))), 401);
}

}  // namespace
}  // namespace gd
