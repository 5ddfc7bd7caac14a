// The exporter's HTTP/1.1 server. One thread, the acceptor, accepts
// connections and holds every connection that waits for its client in an
// epoll set: for a request head, a TLS handshake, the next keep-alive
// request, the end of a refused one. When a client has sent something, a
// worker thread (up to max_threads, started as needed, ending when idle)
// reads it, answers every whole request, and hands the connection back to
// wait again. A connection holds a thread only while there is work for it:
// an idle client, however many come, costs a socket, and a new one is always
// accepted (the listen backlog never fills with clients nobody serves).
// Sockets are non-blocking, and every wait has a deadline of the
// connection's own (the limits in http.h, docs/serve.md):
//  - a request head (and before it, the TLS handshake) must arrive whole
//    within header_read_deadline_ms of the connection's start or its last
//    answer; silence longer than read_timeout_ms ends it, as does an idle
//    keep-alive connection after keep_alive_timeout_ms;
//  - under pressure (max_threads / 2 connections open) a head or handshake
//    gets connection_deadline_ms, an idle keep-alive connection is cut at
//    once and every answer closes its connection (slowloris, clients that
//    hold keep-alive connections with a request now and then);
//  - max_connections in all and max_connections_per_peer from one address:
//    a new connection beyond them closes the oldest waiting one (the peer's
//    own first), so floods of idle connections churn among themselves;
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
// one is answered and its connection closed, as is one with another method.
#include "serve/http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

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
// How often the acceptor looks for waiting connections past their
// deadline (which depends on the pressure of the moment).
constexpr milliseconds kDeadlineScan{100};
// A worker with nothing to do ends after this long.
constexpr milliseconds kWorkerIdle{2000};
// Out of descriptors with no waiting connection to close: connections must
// end first.
constexpr milliseconds kOutOfFilesPause{10};
// Descriptors left to the daemon's own files (history, pipes, kernel log)
// when max_connections is fitted under RLIMIT_NOFILE.
constexpr size_t kFileMargin = 64;
constexpr int kListenBacklog = 1024;
constexpr int kAcceptBatch = 64;  // then the waiting ones get their turn
constexpr int kEpollBatch = 256;
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
    case 429:
      return "Too Many Requests";
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

// The peer a connection counts against: its IPv4 address (an IPv4-mapped
// IPv6 one too), or the /64 of its IPv6 address (one host's share of them).
// Every local client is the one peer 127.0.0.1 (or ::/64).
std::string peer_of(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, &ss, sizeof in);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return text;
  }
  if (ss.ss_family != AF_INET6) return "";
  sockaddr_in6 in6{};
  std::memcpy(&in6, &ss, sizeof in6);
  if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
    inet_ntop(AF_INET, &in6.sin6_addr.s6_addr[12], text, sizeof text);
    return text;
  }
  std::memset(&in6.sin6_addr.s6_addr[8], 0, 8);
  inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
  return std::string(text) + "/64";
}

// ---------------------------------------------------------------------------

class Server;

// One connection: worked on by one worker thread at a time, and held by the
// acceptor while it waits for its client.
class Connection {
 public:
  Connection(Server& server, std::unique_ptr<Stream> stream, std::string peer)
      : server_(server),
        stream_(std::move(stream)),
        peer_(std::move(peer)),
        waiting_(Clock::now()),
        last_byte_(waiting_) {}
  // Reads what the client sent and answers every whole request; returns the
  // poll(2) events to wait for next (also want()), 0 when it is over.
  short work() { return want_ = step(); }
  short want() const { return want_; }
  // When the wait for the client ends (and the connection with it).
  Clock::time_point deadline(bool pressed) const;
  // The order in which waiting connections make room for new ones: the
  // lingering ones (done, but for the end of a refusal) first, then the
  // one that has waited longest. Constant while it waits.
  Clock::time_point since() const {
    return phase_ == Phase::kLinger ? Clock::time_point::min() : waiting_;
  }
  int fd() const { return stream_->fd(); }
  const std::string& peer() const { return peer_; }

 private:
  enum class Phase { kHandshake, kHead, kLinger };
  enum class Head { kWhole, kWait, kOver };
  short step();
  Head read_head(size_t* end);
  bool wait(short events, Clock::time_point until);
  bool send(const std::string& bytes);
  void start_linger();
  short linger();
  Answer answer(const RequestHead& req);

  Server& server_;
  std::unique_ptr<Stream> stream_;
  const std::string peer_;
  Phase phase_ = Phase::kHandshake;
  short want_ = POLLIN;          // a new connection waits for its client's first bytes
  std::string buf_;              // bytes read and not yet taken by a request
  size_t scanned_ = 0;           // buf_ up to here holds no head's end
  bool line_ended_ = false;      // buf_ holds the request line's end
  uint64_t total_read_ = 0;      // bytes read from the connection in all
  Clock::time_point waiting_;    // since the connection's start or the last answer
  Clock::time_point last_byte_;  // the last byte read (or the last answer)
  Clock::time_point linger_until_;
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
  // Half max_threads' worth of connections open: see the top of this file.
  bool pressed() const { return open_ * 2 >= opt_.max_threads; }
  Answer route(const RequestHead& req, const std::string& peer);

 private:
  Result<bool> listen_on(const ListenAddress& addr);
  // The acceptor's thread, and what only it does (no lock: its own data).
  void acceptor();
  void accept_some();
  void park(std::unique_ptr<Connection> c);
  std::unique_ptr<Connection> unpark(int fd);
  void end(std::unique_ptr<Connection> c);
  bool make_room(const std::string* peer);
  size_t open_from(const std::string& peer) const;
  void end_overdue();
  void take_back();
  // Between the acceptor and the workers.
  void dispatch(std::unique_ptr<Connection> c);
  void worker();
  void wake() const;

  HttpOptions opt_;
  std::map<std::string, HttpHandler> routes_;
  std::string not_found_;
  std::unique_ptr<BasicAuth> auth_;
  std::unique_ptr<TlsContext> tls_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop, or connections handed back
  int epoll_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> open_{0};  // connections accepted and not yet closed

  // The acceptor's: connections waiting for their client, by descriptor and
  // by since(), and the open connections of each peer.
  std::unordered_map<int, std::unique_ptr<Connection>> parked_;
  std::set<std::pair<Clock::time_point, int>> by_age_;
  std::unordered_map<std::string, size_t> per_peer_;

  std::mutex mu_;  // what follows
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::deque<std::unique_ptr<Connection>> ready_;  // to work on
  std::vector<std::unique_ptr<Connection>> back_;  // worked on: to wait, or to close
  size_t workers_ = 0;
  size_t idle_workers_ = 0;

  std::mutex stop_mu_;
  bool stopped_ = false;
};

// ---------------------------------------------------------------------------
// A connection

Clock::time_point Connection::deadline(bool pressed) const {
  const HttpOptions& o = server_.options();
  if (phase_ == Phase::kLinger) return linger_until_;
  auto until = std::min(waiting_ + milliseconds(o.header_read_deadline_ms),
                        last_byte_ + milliseconds(o.read_timeout_ms));
  const bool idle = buf_.empty() && answered_ > 0;
  if (idle) until = std::min(until, waiting_ + milliseconds(o.keep_alive_timeout_ms));
  if (pressed) {
    until = std::min(until, idle ? waiting_ : waiting_ + milliseconds(o.connection_deadline_ms));
  }
  return until;
}

// Waits for `events` on the socket until `until`, or until the server stops
// (only while writing an answer: reads never wait in a worker).
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

// Reads until buf_ holds a whole request head (kWhole, its length in *end),
// the client has sent nothing more yet (kWait, want_ set), or the
// connection is over (kOver: end of stream, an error, a head refused into
// refused_). Each byte is looked at once for the head's end, however the
// head arrives.
Connection::Head Connection::read_head(size_t* end) {
  for (;;) {
    // RFC 9112 2.2: empty lines before a request line are ignored.
    size_t skip = buf_.find_first_not_of("\r\n");
    buf_.erase(0, skip == std::string::npos ? buf_.size() : skip);
    // The end ("\n\n" or "\n\r\n") may begin in the last two bytes scanned.
    const size_t from = scanned_ > 2 ? scanned_ - 2 : 0;
    if (size_t e = find_head_end(std::string_view(buf_).substr(from)); e != std::string::npos) {
      *end = from + e;
      return Head::kWhole;
    }
    line_ended_ = line_ended_ || buf_.find('\n', from) != std::string::npos;
    scanned_ = buf_.size();
    if (buf_.size() > kMaxHeadBytes) {
      refused_ = HeadError{431, "request head too large (at most 64 KiB)\n"};
      return Head::kOver;
    }
    if (!line_ended_ && buf_.size() > kMaxRequestLineBytes + 2) {
      refused_ = HeadError{414, "request URI too long\n"};
      return Head::kOver;
    }
    if (total_read_ > kMaxConnectionBytes || server_.stopping()) return Head::kOver;

    char chunk[kReadChunk];
    Io io = stream_->read(chunk, sizeof chunk);
    if (io.n > 0) {
      buf_.append(chunk, static_cast<size_t>(io.n));
      total_read_ += static_cast<uint64_t>(io.n);
      last_byte_ = Clock::now();
      continue;
    }
    if (io.n == 0 || io.wait == 0) return Head::kOver;
    want_ = io.wait;
    return Head::kWait;
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
void Connection::start_linger() {
  stream_->close_notify();
  shutdown(stream_->fd(), SHUT_WR);
  phase_ = Phase::kLinger;
  linger_until_ = Clock::now() + kLingerGrace;
}

short Connection::linger() {
  char chunk[kReadChunk];
  while (total_read_ <= kMaxConnectionBytes) {
    ssize_t n = recv(stream_->fd(), chunk, sizeof chunk, 0);
    if (n > 0) {
      total_read_ += static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? POLLIN : 0;
    }
  }
  return 0;
}

short Connection::step() {
  if (phase_ == Phase::kHandshake) {
    Io io = stream_->handshake();
    if (io.n <= 0) return io.wait;  // 0: the handshake failed
    phase_ = Phase::kHead;
  }
  while (phase_ == Phase::kHead) {
    size_t end = 0;
    const Head h = read_head(&end);
    if (h == Head::kWait) return want_;
    if (h == Head::kOver) {
      if (!refused_) return 0;
      Answer a = plain(refused_->status, refused_->message);
      a.close = true;
      if (!send(serialize(a, false))) return 0;
      start_linger();
      break;
    }
    ParsedHead parsed = parse_request_head(std::string_view(buf_).substr(0, end));
    buf_.erase(0, end);
    scanned_ = 0;
    line_ended_ = false;
    Answer a;
    bool head_only = false;
    if (!parsed.head) {
      a = plain(parsed.error.status, parsed.error.message);
      a.close = true;  // what follows cannot be trusted to start a request
    } else {
      const RequestHead& req = *parsed.head;
      head_only = req.method == "HEAD";
      a = answer(req);
      // A body we do not read would be taken for the next request; under
      // pressure a connection does not stay for the next one.
      a.close = a.close || !req.keep_alive || req.has_body ||
                answered_ + 1 >= server_.options().keep_alive_max_requests || server_.pressed();
    }
    const bool sent = send(serialize(a, head_only));
    ++answered_;
    waiting_ = last_byte_ = Clock::now();
    if (!sent) return 0;
    if (a.close) start_linger();
  }
  return linger();
}

Answer Connection::answer(const RequestHead& req) {
  try {
    return server_.route(req, peer_);
  } catch (const std::exception&) {
    return plain(500, "internal error\n");
  }
}

// ---------------------------------------------------------------------------
// The server

Answer Server::route(const RequestHead& req, const std::string& peer) {
  if (req.method != "GET" && req.method != "HEAD") {
    Answer a = plain(405, "method not allowed: this exporter is read-only (GET, HEAD)\n");
    a.headers.emplace_back("Allow", "GET, HEAD");
    a.close = true;
    return a;
  }
  if (auth_) {
    const std::string* given = req.header("Authorization");
    const AuthOutcome outcome = auth_->check(given ? *given : "", peer);
    if (outcome == AuthOutcome::kThrottled) {
      Answer a = plain(429, "too many failed logins from this address; try again later\n");
      a.headers.emplace_back("Retry-After", "1");
      a.close = true;
      return a;
    }
    if (outcome != AuthOutcome::kAllowed) {
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

// A connection waits for its client in the epoll set, unless its deadline
// has passed already.
void Server::park(std::unique_ptr<Connection> c) {
  const int fd = c->fd();
  epoll_event ev{};
  ev.events = (c->want() & POLLOUT) ? EPOLLOUT : EPOLLIN;
  ev.data.fd = fd;
  if (Clock::now() >= c->deadline(pressed()) || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    end(std::move(c));
    return;
  }
  by_age_.emplace(c->since(), fd);
  parked_.emplace(fd, std::move(c));
}

std::unique_ptr<Connection> Server::unpark(int fd) {
  auto it = parked_.find(fd);
  if (it == parked_.end()) return nullptr;
  std::unique_ptr<Connection> c = std::move(it->second);
  parked_.erase(it);
  by_age_.erase({c->since(), fd});
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  return c;
}

void Server::end(std::unique_ptr<Connection> c) {
  const int fd = c->fd();
  auto it = per_peer_.find(c->peer());
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
  c.reset();  // the stream (and its TLS) first: the socket is ours to close
  close(fd);
  --open_;
}

size_t Server::open_from(const std::string& peer) const {
  auto it = per_peer_.find(peer);
  return it == per_peer_.end() ? 0 : it->second;
}

// Closes the waiting connection that goes first (Connection::since), of
// `peer` when given; false when there is none.
bool Server::make_room(const std::string* peer) {
  for (const auto& entry : by_age_) {
    const int fd = entry.second;
    if (peer == nullptr || parked_.at(fd)->peer() == *peer) {
      end(unpark(fd));
      return true;
    }
  }
  return false;
}

void Server::accept_some() {
  for (int i = 0; i < kAcceptBatch && !stopping_; ++i) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EMFILE && errno != ENFILE) return;  // the backlog is empty
      // Out of descriptors: the first waiting connection makes room, or
      // connections must end first.
      if (make_room(nullptr)) continue;
      std::this_thread::sleep_for(kOutOfFilesPause);
      return;
    }
    std::string peer = peer_of(ss);
    // Room for it: the peer's own waiting connections go first, then anyone's.
    if ((open_from(peer) >= opt_.max_connections_per_peer && !make_room(&peer)) ||
        (open_ >= opt_.max_connections && !make_room(nullptr))) {
      close(fd);  // every connection is being worked on: none can wait for this one
      continue;
    }
    int yes = 1;
    // One write per answer, but Nagle would still hold a second one.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    std::unique_ptr<Stream> stream = tls_ ? tls_->wrap(fd) : std::make_unique<Stream>(fd);
    if (!stream) {
      close(fd);
      continue;
    }
    ++open_;
    ++per_peer_[peer];
    park(std::make_unique<Connection>(*this, std::move(stream), std::move(peer)));
  }
}

// Waiting connections past their deadline are closed.
void Server::end_overdue() {
  const auto now = Clock::now();
  const bool p = pressed();
  std::vector<int> over;
  for (const auto& [fd, c] : parked_) {
    if (now >= c->deadline(p)) over.push_back(fd);
  }
  for (int fd : over) end(unpark(fd));
}

// Connections the workers are done with wait again, or are closed.
void Server::take_back() {
  std::vector<std::unique_ptr<Connection>> back;
  {
    std::lock_guard<std::mutex> lock(mu_);
    back.swap(back_);
  }
  for (auto& c : back) {
    if (c->want() == 0) {
      end(std::move(c));
    } else {
      park(std::move(c));
    }
  }
}

void Server::dispatch(std::unique_ptr<Connection> c) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_.push_back(std::move(c));
  work_cv_.notify_one();
  if (idle_workers_ >= ready_.size() || workers_ >= opt_.max_threads) return;
  try {
    std::thread([this] { worker(); }).detach();
    ++workers_;
  } catch (const std::system_error&) {
    // No thread to be had now: the running workers take it in turn.
  }
}

void Server::worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_workers_;
    const bool got =
        work_cv_.wait_for(lock, kWorkerIdle, [this] { return stopping_ || !ready_.empty(); });
    --idle_workers_;
    if (!got || stopping_) break;
    std::unique_ptr<Connection> c = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    c->work();
    lock.lock();
    back_.push_back(std::move(c));
    wake();
  }
  --workers_;
  done_cv_.notify_all();
}

void Server::acceptor() {
  epoll_event events[kEpollBatch];
  auto next_scan = Clock::now() + kDeadlineScan;
  while (!stopping_) {
    const auto left = std::chrono::duration_cast<milliseconds>(next_scan - Clock::now()).count();
    const int n = epoll_wait(epoll_fd_, events, kEpollBatch,
                             static_cast<int>(std::clamp<int64_t>(left, 0, kDeadlineScan.count())));
    if (n < 0 && errno != EINTR) break;
    if (stopping_) break;
    bool accepting = false;
    // The clients that sent something first, then new connections: a new
    // one's request is read before a burst of others could push it out.
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd_) {
        accepting = true;
      } else if (fd == wake_fd_) {
        uint64_t count;
        [[maybe_unused]] ssize_t r = read(wake_fd_, &count, sizeof count);
      } else if (std::unique_ptr<Connection> c = unpark(fd)) {
        dispatch(std::move(c));
      }
    }
    take_back();
    if (accepting) accept_some();
    if (Clock::now() >= next_scan) {
      end_overdue();
      next_scan = Clock::now() + kDeadlineScan;
    }
  }
  while (!parked_.empty()) end(unpark(parked_.begin()->first));
}

void Server::stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  if (stopped_ || listen_fd_ < 0) return;
  stopped_ = true;
  stopping_ = true;
  wake();
  if (acceptor_.joinable()) acceptor_.join();  // it closes the waiting connections
  close(listen_fd_);                           // nothing listens any more
  // A worker ends at its next wait (within a second: Connection::wait).
  std::unique_lock<std::mutex> lock(mu_);
  work_cv_.notify_all();
  done_cv_.wait(lock, [this] { return workers_ == 0; });
  auto close_all = [](auto& conns) {
    for (auto& c : conns) {
      const int fd = c->fd();
      c.reset();
      close(fd);
    }
    conns.clear();
  };
  close_all(ready_);
  close_all(back_);
  lock.unlock();
  close(epoll_fd_);
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
  // Connections fit under the descriptors this process may open, beside its own files.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    const size_t room =
        files.rlim_cur > 2 * kFileMargin ? files.rlim_cur - kFileMargin : files.rlim_cur / 2;
    opt_.max_connections = std::min(opt_.max_connections, room);
  }
  opt_.max_connections = std::max<size_t>(2, opt_.max_connections);
  opt_.max_connections_per_peer =
      std::clamp<size_t>(opt.max_connections_per_peer, 1, opt_.max_connections);
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
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event listen_ev{}, wake_ev{};
  listen_ev.events = wake_ev.events = EPOLLIN;
  listen_ev.data.fd = listen_fd_;
  wake_ev.data.fd = wake_fd_;
  if (wake_fd_ < 0 || epoll_fd_ < 0 ||
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_ev) != 0 ||
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake_ev) != 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {listen_fd_, wake_fd_, epoll_fd_}) {
      if (fd >= 0) close(fd);
    }
    listen_fd_ = wake_fd_ = epoll_fd_ = -1;
    return Error{"cannot set up the server's epoll: " + why};
  }
  acceptor_ = std::thread([this] { acceptor(); });
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
