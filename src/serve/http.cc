// The exporter's HTTP/1.1 server: one acceptor thread, and one thread per
// open connection (up to max_threads; beyond them connections wait in the
// listen backlog) that reads its requests, answers each and keeps the
// connection alive. Sockets are non-blocking and every wait is a poll(2)
// under a deadline of the connection's own, so no client can hold a thread
// longer than the limits in http.h:
//  - a request head must arrive whole within header_read_deadline_ms of the
//    connection's start or its last answer, and within
//    connection_deadline_ms while half the threads are taken (slowloris);
//  - silence longer than read_timeout_ms ends it, as does an idle
//    keep-alive connection after keep_alive_timeout_ms;
//  - a head is at most 64 KiB (431), its fields 100 and 16 KiB (431), its
//    request line 8 KiB (414), a connection's bytes 1 MiB in all: memory per
//    connection is bounded, however a client floods;
//  - bytes after a request (pipelining) stay in the connection's buffer and
//    are answered in order;
//  - Range is never applied: every answer is whole, `Accept-Ranges: none`.
// A refused request is answered, the sending side shut, and what the client
// still sends is read and dropped for up to a second (so that the answer is
// not lost to a reset) before the socket is closed.
//
// Only GET and HEAD are served; bodies are never read: a request that has
// one is answered and its connection closed.
#include "serve/http.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "serve/http_listen.h"
#include "serve/http_request.h"
#include "serve/http_stream.h"
#include "serve/tls.h"
#include "serve/web_config.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr char kTextPlain[] = "text/plain; charset=utf-8";
// Bytes one connection may send us in all: 100 keep-alive requests of a few
// KiB each fit; a flood of headers or a body is cut here.
constexpr uint64_t kMaxConnectionBytes = 1024 * 1024;
// How long a refused client has to read the answer while what it still
// sends is dropped, before the socket is closed (and reset, if it sends on).
constexpr milliseconds kLingerGrace{1000};
// A connection waiting for a head looks at the pool's load this often once
// it has waited connection_deadline_ms (it is cut if the pool is half taken).
constexpr milliseconds kPressureRecheck{100};
constexpr int kListenBacklog = 1024;
constexpr size_t kReadChunk = 16 * 1024;

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

// The Date header's value (RFC 9110 5.6.7: IMF-fixdate).
std::string http_date() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

// One answer on the wire.
struct Answer {
  int status = 200;
  std::string content_type = kTextPlain;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond the usual ones
  bool close = false;                                        // end the connection after it
};

Answer plain(int status, std::string body) {
  Answer a;
  a.status = status;
  a.body = std::move(body);
  return a;
}

std::string serialize(const Answer& a, bool head_only) {
  std::string out;
  out.reserve(256 + (head_only ? 0 : a.body.size()));
  out += "HTTP/1.1 " + std::to_string(a.status) + " " + reason(a.status) + "\r\n";
  out += "Date: " + http_date() + "\r\n";
  out += "Content-Type: " + a.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(a.body.size()) + "\r\n";
  out += "Accept-Ranges: none\r\nX-Content-Type-Options: nosniff\r\n";
  for (const auto& [k, v] : a.headers) out += k + ": " + v + "\r\n";
  if (a.close) out += "Connection: close\r\n";
  out += "\r\n";
  if (!head_only) out += a.body;
  return out;
}

// ---------------------------------------------------------------------------

class Server;

// One connection, served on its own thread.
class Connection {
 public:
  Connection(Server& server, std::unique_ptr<Stream> stream)
      : server_(server), stream_(std::move(stream)) {}
  void run();

 private:
  std::optional<size_t> read_head();
  bool wait(short events, Clock::time_point until);
  bool send(const std::string& bytes);
  void linger();
  Answer answer(const RequestHead& req);

  Server& server_;
  std::unique_ptr<Stream> stream_;
  std::string buf_;            // bytes read and not yet taken by a request
  uint64_t total_read_ = 0;    // bytes read from the connection in all
  Clock::time_point waiting_;  // since the connection's start or the last answer
  size_t answered_ = 0;
  std::optional<HeadError> refused_;  // a head refused before it was whole
};

class Server final : public HttpServer {
 public:
  ~Server() override { stop(); }
  int port() const override { return port_; }
  void stop() override;
  Result<bool> start(const HttpOptions& opt, std::map<std::string, HttpHandler> routes);

  const HttpOptions& options() const { return opt_; }
  bool stopping() const { return stopping_; }
  // Half the threads taken: slow heads get connection_deadline_ms only.
  bool pressed() const { return active_ * 2 >= opt_.max_threads; }
  Answer route(const RequestHead& req);

 private:
  Result<bool> listen_on(const ListenAddress& addr);
  void accept_loop();
  void serve(std::unique_ptr<Stream> stream);
  void wake() const;

  HttpOptions opt_;
  std::map<std::string, HttpHandler> routes_;
  std::string not_found_;
  std::unique_ptr<BasicAuth> auth_;
  std::unique_ptr<TlsContext> tls_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop, or a thread's slot freed
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> active_{0};
  std::mutex mu_;  // open_, and closing its fds
  std::condition_variable done_cv_;
  std::set<int> open_;  // connections being served
  std::mutex stop_mu_;
  bool stopped_ = false;
};

// ---------------------------------------------------------------------------
// A connection

// Waits for `events` on the socket until `until`, or until the server stops.
bool Connection::wait(short events, Clock::time_point until) {
  for (;;) {
    if (server_.stopping()) return false;
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{stream_->fd(), events, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r > 0) return true;  // ready, or an error/hang-up the next call reports
    if (r < 0 && errno != EINTR) return false;
  }
}

// Reads until buf_ holds a whole request head and returns its length;
// nullopt when the connection is over (end of stream, error, a deadline, a
// head refused into refused_). Each byte is looked at once for the head's
// end, however the head arrives.
std::optional<size_t> Connection::read_head() {
  const HttpOptions& o = server_.options();
  auto last_byte = Clock::now();
  size_t scanned = 0;       // buf_ up to here holds no head's end
  bool line_ended = false;  // buf_ holds the request line's end
  for (;;) {
    // RFC 9112 2.2: empty lines before a request line are ignored.
    size_t skip = buf_.find_first_not_of("\r\n");
    buf_.erase(0, skip == std::string::npos ? buf_.size() : skip);
    // The end ("\n\n" or "\n\r\n") may begin in the last two bytes scanned.
    const size_t from = scanned > 2 ? scanned - 2 : 0;
    if (size_t end = find_head_end(std::string_view(buf_).substr(from)); end != std::string::npos) {
      return from + end;
    }
    line_ended = line_ended || buf_.find('\n', from) != std::string::npos;
    scanned = buf_.size();
    if (buf_.size() > kMaxHeadBytes) {
      refused_ = HeadError{431, "request head too large (at most 64 KiB)\n"};
      return std::nullopt;
    }
    if (!line_ended && buf_.size() > kMaxRequestLineBytes + 2) {
      refused_ = HeadError{414, "request URI too long\n"};
      return std::nullopt;
    }
    if (total_read_ > kMaxConnectionBytes || server_.stopping()) return std::nullopt;

    char chunk[kReadChunk];
    Io io = stream_->read(chunk, sizeof chunk);
    if (io.n > 0) {
      buf_.append(chunk, static_cast<size_t>(io.n));
      total_read_ += static_cast<uint64_t>(io.n);
      last_byte = Clock::now();
      continue;
    }
    if (io.n == 0 || io.wait == 0) return std::nullopt;

    // Nothing to read yet: wait, under the head's deadlines (the top of this file).
    const auto now = Clock::now();
    auto until = std::min(waiting_ + milliseconds(o.header_read_deadline_ms),
                          last_byte + milliseconds(o.read_timeout_ms));
    if (buf_.empty() && answered_ > 0) {
      until = std::min(until, waiting_ + milliseconds(o.keep_alive_timeout_ms));
    }
    const auto pressure_at = waiting_ + milliseconds(o.connection_deadline_ms);
    if (now >= until || (now >= pressure_at && server_.pressed())) return std::nullopt;
    wait(io.wait, std::min(until, now < pressure_at ? pressure_at : now + kPressureRecheck));
  }
}

bool Connection::send(const std::string& bytes) {
  const milliseconds timeout(server_.options().write_timeout_ms);
  size_t at = 0;
  auto until = Clock::now() + timeout;
  while (at < bytes.size()) {
    Io io = stream_->write(bytes.data() + at, bytes.size() - at);
    if (io.n > 0) {
      at += static_cast<size_t>(io.n);
      until = Clock::now() + timeout;  // per write: a client that stops reading
    } else if (io.n == 0 || io.wait == 0 || !wait(io.wait, until)) {
      return false;
    }
  }
  return true;
}

// After the last answer: shut the sending side, then read and drop what the
// client still sends until it closes, for at most kLingerGrace, so that a
// close with unread bytes (a reset) cannot destroy the answer in flight.
void Connection::linger() {
  stream_->close_notify();
  shutdown(stream_->fd(), SHUT_WR);
  const auto until = Clock::now() + kLingerGrace;
  char chunk[kReadChunk];
  while (total_read_ <= kMaxConnectionBytes) {
    ssize_t n = recv(stream_->fd(), chunk, sizeof chunk, 0);
    if (n > 0) {
      total_read_ += static_cast<uint64_t>(n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR) || !wait(POLLIN, until)) {
      return;
    }
  }
}

void Connection::run() {
  waiting_ = Clock::now();
  {
    // The TLS handshake, under the head's deadline.
    const auto until = waiting_ + milliseconds(server_.options().header_read_deadline_ms);
    for (;;) {
      Io io = stream_->handshake();
      if (io.n > 0) break;
      if (io.wait == 0 || !wait(io.wait, until)) return;
    }
  }
  for (;;) {
    const std::optional<size_t> end = read_head();
    if (!end) {
      if (refused_) {
        Answer a = plain(refused_->status, refused_->message);
        a.close = true;
        send(serialize(a, false));
        linger();
      }
      return;
    }
    ParsedHead parsed = parse_request_head(std::string_view(buf_).substr(0, *end));
    buf_.erase(0, *end);
    Answer a;
    bool head_only = false;
    if (!parsed.head) {
      a = plain(parsed.error.status, parsed.error.message);
      a.close = true;  // what follows cannot be trusted to start a request
    } else {
      const RequestHead& req = *parsed.head;
      head_only = req.method == "HEAD";
      a = answer(req);
      // A body we do not read would be taken for the next request.
      a.close = a.close || !req.keep_alive || req.has_body ||
                answered_ + 1 >= server_.options().keep_alive_max_requests;
    }
    const bool sent = send(serialize(a, head_only));
    ++answered_;
    waiting_ = Clock::now();
    if (!sent) return;
    if (a.close) {
      linger();
      return;
    }
  }
}

Answer Connection::answer(const RequestHead& req) {
  try {
    return server_.route(req);
  } catch (const std::exception&) {
    return plain(500, "internal error\n");
  }
}

// ---------------------------------------------------------------------------
// The server

Answer Server::route(const RequestHead& req) {
  if (req.method != "GET" && req.method != "HEAD") {
    Answer a = plain(405, "method not allowed: this exporter is read-only (GET, HEAD)\n");
    a.headers.emplace_back("Allow", "GET, HEAD");
    return a;
  }
  if (auth_) {
    const std::string* given = req.header("Authorization");
    if (!auth_->allowed(given ? *given : "")) {
      Answer a = plain(401, "unauthorized\n");
      a.headers.emplace_back("WWW-Authenticate", "Basic realm=\"gpudoctor\", charset=\"UTF-8\"");
      return a;
    }
  }
  auto it = routes_.find(req.path);
  if (it == routes_.end()) return plain(404, not_found_);
  HttpResponse r = it->second();
  Answer a;
  a.status = r.status;
  a.content_type = std::move(r.content_type);
  a.body = std::move(r.body);
  if (a.content_type.starts_with("text/html")) {
    // The page has no script and no external asset; say so to the browser
    // too, so that an escaping slip could not load or run anything.
    a.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                           "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  }
  return a;
}

void Server::wake() const {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void Server::serve(std::unique_ptr<Stream> stream) {
  const int fd = stream->fd();
  Connection(*this, std::move(stream)).run();  // the stream (and its TLS) ends with it
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(fd);
  close(fd);
  if (active_-- == opt_.max_threads) wake();  // the acceptor may take the next one
  done_cv_.notify_all();
}

void Server::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, static_cast<short>(active_ < opt_.max_threads ? POLLIN : 0), 0},
                     {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (stopping_) return;
    if (fds[1].revents & POLLIN) {
      uint64_t n;
      [[maybe_unused]] ssize_t r = read(wake_fd_, &n, sizeof n);
    }
    while (active_ < opt_.max_threads && !stopping_) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors: let connections end before trying again.
        if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(kPressureRecheck);
        break;
      }
      int yes = 1;
      // One write per answer, but Nagle would still hold a second one.
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      std::unique_ptr<Stream> stream = tls_ ? tls_->wrap(fd) : std::make_unique<Stream>(fd);
      if (!stream) {
        close(fd);
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        open_.insert(fd);
        ++active_;
      }
      try {
        std::thread([this, s = std::move(stream)]() mutable { serve(std::move(s)); }).detach();
      } catch (const std::system_error&) {  // no thread to be had: drop this one
        std::lock_guard<std::mutex> lock(mu_);
        open_.erase(fd);
        close(fd);
        --active_;
      }
    }
  }
}

void Server::stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  if (stopped_ || listen_fd_ < 0) return;
  stopped_ = true;
  stopping_ = true;
  wake();
  if (acceptor_.joinable()) acceptor_.join();
  close(listen_fd_);  // nothing listens any more
  // Every connection's thread wakes from its poll within a second (wait())
  // and ends; hanging up on them makes it at once.
  std::unique_lock<std::mutex> lock(mu_);
  while (active_ > 0) {
    for (int fd : open_) shutdown(fd, SHUT_RDWR);
    done_cv_.wait_for(lock, milliseconds(100));
  }
  lock.unlock();
  close(wake_fd_);
}

Result<bool> Server::listen_on(const ListenAddress& addr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(addr.port);
  if (getaddrinfo(addr.host.c_str(), port.c_str(), &hints, &res) != 0) return false;
  for (addrinfo* ai = res; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int yes = 1, no = 0;
    // SO_REUSEADDR only (no SO_REUSEPORT, which would let us bind a port
    // another exporter already listens on).
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // ":PORT" means every interface, IPv4 included (the "::" socket answers both).
    if (addr.all_interfaces && ai->ai_family == AF_INET6) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
    }
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, kListenBacklog) == 0) {
      listen_fd_ = fd;
    } else {
      close(fd);
    }
  }
  freeaddrinfo(res);
  if (listen_fd_ < 0) return false;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return true;
}

Result<bool> Server::start(const HttpOptions& opt, std::map<std::string, HttpHandler> routes) {
  auto addr = parse_listen_address(opt.listen);
  if (!addr.ok()) return Error{addr.error()};
  if (!opt.web_config.empty()) {
    auto wc = load_web_config(opt.web_config);
    if (!wc.ok()) return Error{wc.error()};
    if (!wc->basic_auth_users.empty()) {
      auth_ = std::make_unique<BasicAuth>(std::move(wc->basic_auth_users));
    }
    if (wc->tls) {
      auto tls = TlsContext::create(wc->tls_server);
      if (!tls.ok()) return Error{"web config " + opt.web_config + ": " + tls.error()};
      tls_ = std::move(*tls);
    }
  }
  opt_ = opt;
  opt_.connection_deadline_ms = std::max<int64_t>(100, opt.connection_deadline_ms);
  opt_.header_read_deadline_ms =
      std::max<int64_t>(opt_.connection_deadline_ms, opt.header_read_deadline_ms);
  opt_.max_threads = std::max<size_t>(2, opt.max_threads);
  opt_.keep_alive_max_requests = std::max<size_t>(1, opt.keep_alive_max_requests);
  routes_ = std::move(routes);
  not_found_ = "not found; this exporter serves";
  for (const auto& [path, h] : routes_) not_found_ += " " + path;
  not_found_ += "\n";

  auto bound = listen_on(*addr);
  if (!*bound && addr->all_interfaces) {  // a machine without IPv6: every IPv4 interface
    addr->host = "0.0.0.0";
    bound = listen_on(*addr);
  }
  if (!*bound) {
    return Error{"cannot listen on " + opt.listen +
                 " (address in use, not an address of this machine, or not allowed)"};
  }
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    return Error{std::string("cannot make an eventfd: ") + std::strerror(errno)};
  }
  acceptor_ = std::thread([this] { accept_loop(); });
  return true;
}

}  // namespace

Result<std::unique_ptr<HttpServer>> start_http_server(const HttpOptions& opt,
                                                      std::map<std::string, HttpHandler> routes) {
  auto s = std::make_unique<Server>();
  auto r = s->start(opt, std::move(routes));
  if (!r.ok()) return Error{r.error()};
  return std::unique_ptr<HttpServer>(std::move(s));
}

}  // namespace gd
