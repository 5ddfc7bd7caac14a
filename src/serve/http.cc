// The exporter's HTTP server over cpp-httplib 0.11 (Debian's compiled
// libcpp-httplib, OpenSSL on).
//
// httplib serves each connection (and its keep-alive requests) on one task
// of its task queue, and its read timeout is per read: a client that sends a
// byte every second holds its thread for as long as it likes (slowloris).
// So, on top of the library's timeouts and limits:
//  - an elastic pool (WorkerPool) grows a thread per connection up to
//    max_threads, so a few slow clients never queue the others;
//  - a watchdog, awake only while a connection is open, looks at the
//    connections to our port every 100 ms (http_conns.h) and shuts down
//    one that has received more than kMaxConnectionBytes (httplib keeps
//    every header line it reads, with no limit on their number: a client
//    streaming headers would grow the heap without bound), and, when more
//    than half the pool is taken, those open longer than
//    connection_deadline_ms;
//  - all routing happens in the pre-routing handler on an exact-path map
//    (no std::regex per request), after the method, header-size and
//    basic-auth checks;
//  - Range is ignored: httplib would cut (and, for many ranges, copy) the
//    body once per range, 131 MB for one 8 KB request of 2,660 ranges; every
//    answer is the whole body with `Accept-Ranges: none`. Its parser of the
//    header is replaced too (below): a std::regex over an 8 KiB header
//    recurses through about 4 MB of the worker's stack, pages each thread
//    then keeps;
//  - each worker learns the fd of its connection (the socket httplib reads
//    on its thread, seen through read_socket below; over TLS, by the peer's
//    address) and keeps a record of it for the watchdog: when its last request was
//    answered, so that a request head has a deadline of its own and a
//    size cap counted from that answer;
//  - pipelining: httplib reads a connection through a 4 KiB buffer that it
//    drops after each request, so requests sent behind the first in one
//    write would be swallowed and the connection would idle for the
//    keep-alive timeout. A worker that has read past its request (the
//    kernel's count of bytes read, against the request's size) answers it
//    with `Connection: close` and ends the connection at once;
//  - the listening socket's backlog is raised after binding (httplib's is
//    5, compiled into the library).
#include "serve/http.h"

#include <httplib.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "serve/http_conns.h"
#include "serve/http_listen.h"
#include "serve/web_config.h"
#include "util/bytes.h"

// Replaces cpp-httplib's Range parser. The library's Server::process_request
// calls it through the PLT (it is an exported function of the shared
// library), so this definition in the executable is the one it runs: a Range
// header parses to no range at all, the request is answered whole, and the
// library's std::regex never walks the header. tests/reliability/http_attacks.py
// holds the daemon's peak memory under a Range flood; were the library built
// to bind its own calls, that test would fail (and Server::answer still
// clears the parsed ranges).
namespace gd {
namespace {
// The socket httplib last read on this thread (-1: none yet in this job).
thread_local int tl_read_socket = -1;
}  // namespace
}  // namespace gd

namespace httplib::detail {
bool parse_range_header(const std::string&, Ranges& ranges) {
  ranges.clear();
  return true;
}

// Replaces the library's socket read (SocketStream::read calls it through
// the PLT, like the above) to learn which socket this worker serves: httplib
// answers a request line it cannot parse (400) or an overlong URI (414)
// before it knows the peer, and that connection must still be ended at once.
// Same behaviour as the library's: recv, retried on EINTR.
ssize_t read_socket(socket_t sock, void* ptr, size_t size, int flags) {
  gd::tl_read_socket = sock;
  ssize_t n;
  do {
    n = recv(sock, ptr, size, flags);
  } while (n < 0 && errno == EINTR);
  return n;
}

// Replaces the library's liveness test before each write: it peeks, and
// takes the end of the client's data for a dead socket, so a client that
// sent its request and then shut down its sending side (`nc -N`, HTTP/1.0
// tools) was never answered. Such a socket still carries the answer; only
// one with a pending error (a reset) is dead.
bool is_socket_alive(socket_t sock) {
  int err = 0;
  socklen_t len = sizeof err;
  return getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
}
}  // namespace httplib::detail

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kAllow[] = "GET, HEAD";
constexpr char kTextPlain[] = "text/plain; charset=utf-8";
// httplib caps each line (request line 8 KiB -> 414, header line 8 KiB ->
// 400) but not their number; a request's headers together stay under these.
constexpr size_t kMaxHeaderBytes = 16 * 1024;
constexpr size_t kMaxHeaderCount = 100;
// Bytes one connection may send us in all: 100 keep-alive requests of a few
// KiB each fit; a header flood is cut within the watchdog's period.
constexpr uint64_t kMaxConnectionBytes = 1024 * 1024;
// Bytes a client may send towards one request head (counted from the end of
// the previous answer, or from the connection's start).
constexpr uint64_t kMaxHeadBytes = 64 * 1024;
constexpr auto kWatchPeriod = std::chrono::milliseconds(100);
// How long a client whose request head was refused (431) has to read the
// answer before the connection is reset, if it keeps sending.
constexpr auto kRefusedGrace = std::chrono::milliseconds(1000);
constexpr int kListenBacklog = 1024;

// The worker's connection: one pool job serves one connection, its
// keep-alive requests one after another on the same thread.
struct WorkerConn {
  bool looked = false;  // find_connection was tried
  int fd = -1;          // -1: not known (TLS, or not found)
  std::string peer;
  int64_t read = 0;    // bytes read from it when its last request was dispatched
  bool close = false;  // end the connection once the answer is written
};
thread_local WorkerConn tl_conn;

// What the watchdog knows of a connection from its worker.
struct ConnRecord {
  std::string peer;         // a reused fd is another connection
  bool handling = false;    // a request is being answered
  Clock::time_point since;  // when its last answer was written (when !handling)
  int64_t read = 0;         // bytes read from it up to its last request
};

// ---------------------------------------------------------------------------
// Worker pool

// What the watchdog and stop() need to see of the pool; outlives the pool
// itself, which httplib deletes when its accept loop ends.
struct PoolLoad {
  std::atomic<size_t> busy{0};  // threads serving a connection now
  size_t max_threads = 0;
  // The watchdog sleeps on `cv` until a connection starts or stop is set.
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;

  // Connections by fd, as their workers last described them.
  std::mutex conns_mu;
  std::map<int, ConnRecord> conns;

  void record(int fd, ConnRecord r) {
    std::lock_guard<std::mutex> lock(conns_mu);
    conns[fd] = std::move(r);
  }
  void forget(int fd, const std::string& peer) {
    std::lock_guard<std::mutex> lock(conns_mu);
    auto it = conns.find(fd);
    if (it != conns.end() && it->second.peer == peer) conns.erase(it);
  }
};

class WorkerPool : public httplib::TaskQueue {
 public:
  WorkerPool(std::shared_ptr<PoolLoad> load) : load_(std::move(load)) {}
  ~WorkerPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < load_->max_threads) {
      threads_.emplace_back([this] { work(); });
    } else {
      cv_.notify_one();
    }
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shutdown_) return;
      shutdown_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [&] { return shutdown_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // shutting down and nothing left
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      if (load_->busy++ == 0) {
        // Wake the watchdog (taking the mutex after the change, so a
        // watchdog about to wait cannot miss it).
        std::lock_guard<std::mutex> wl(load_->mu);
        load_->cv.notify_all();
      }
      tl_conn = WorkerConn{};
      tl_read_socket = -1;
      fn();
      if (tl_conn.fd >= 0) load_->forget(tl_conn.fd, tl_conn.peer);
      tl_conn = WorkerConn{};
      --load_->busy;
      lock.lock();
    }
  }

  std::shared_ptr<PoolLoad> load_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;  // only grows (to max_threads); joined at shutdown
  size_t idle_ = 0;
  bool shutdown_ = false;
};

// ---------------------------------------------------------------------------
// The server

bool is_get_or_head(const std::string& m) { return m == "GET" || m == "HEAD"; }

// httplib adds four headers of its own to every request it parses.
constexpr size_t kServerHeaders = 4;

size_t server_header_bytes(const httplib::Request& req) {
  return 4 * 4 + 11 + req.remote_addr.size() + 11 + std::to_string(req.remote_port).size() + 10 +
         req.local_addr.size() + 10 + std::to_string(req.local_port).size();
}

// The client's headers only: their count, and their bytes as sent in the
// usual form ("Key: value" CRLF).
size_t client_header_count(const httplib::Request& req) {
  return req.headers.size() > kServerHeaders ? req.headers.size() - kServerHeaders : 0;
}
size_t client_header_bytes(const httplib::Request& req) {
  size_t n = 0;
  for (const auto& [k, v] : req.headers) n += k.size() + v.size() + 4;  // ": " and CRLF
  const size_t ours = server_header_bytes(req);
  return n > ours ? n - ours : 0;
}

// The request head's size in its usual form. Extra spaces, percent escapes
// in header values and empty headers make the real one larger (such a
// request is answered and its connection closed, which costs the client a
// reconnect); only a head written without the space after each colon is
// smaller, by a byte a header.
size_t request_head_bytes(const httplib::Request& req) {
  return req.method.size() + 1 + req.target.size() + 1 + req.version.size() + 2 +
         client_header_bytes(req) + 2;
}

class Server final : public HttpServer {
 public:
  ~Server() override { stop(); }
  int port() const override { return port_; }

  void stop() override {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (stopped_) return;
    stopped_ = true;
    if (!svr_) return;
    svr_->stop();  // closes the listening socket; the accept loop ends
    {
      std::lock_guard<std::mutex> wl(load_->mu);
      load_->stop = true;
    }
    load_->cv.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
    // Workers in the middle of a slow client would hold the join below for
    // as long as that client trickles: hang up on every open connection.
    for (int i = 0; i < 50 && listener_.joinable(); ++i) {
      for (const TcpConn& c : connections_on(port_)) cut_connection(c);
      if (load_->busy == 0 && !svr_->is_running()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (listener_.joinable()) listener_.join();
  }

  Result<bool> start(const HttpOptions& opt, std::map<std::string, HttpHandler> routes);

 private:
  void setup_routes(std::map<std::string, HttpHandler> routes);
  httplib::Server::HandlerResponse answer(const httplib::Request& req, httplib::Response& res);
  void know_connection(const httplib::Request& req);
  void note_request(const httplib::Request& req);
  void note_answer(const httplib::Request& req, const httplib::Response& res);
  void watch();
  bool refuse_head(const TcpConn& c);

  std::unique_ptr<httplib::Server> svr_;
  std::shared_ptr<PoolLoad> load_ = std::make_shared<PoolLoad>();
  std::unique_ptr<BasicAuth> auth_;
  std::map<std::string, HttpHandler> routes_;
  std::string not_found_;
  int port_ = 0;
  bool tls_ = false;
  int64_t deadline_ms_ = 0;       // waiting for a request head, when the pool is half taken
  int64_t head_deadline_ms_ = 0;  // waiting for a request head, always
  std::thread listener_;
  std::thread watchdog_;
  std::mutex stop_mu_;
  bool stopped_ = false;
};

Result<std::unique_ptr<httplib::Server>> make_tls_server(const TlsServerConfig& tls);

void Server::setup_routes(std::map<std::string, HttpHandler> routes) {
  routes_ = std::move(routes);
  not_found_ = "not found; this exporter serves";
  for (const auto& [path, h] : routes_) not_found_ += " " + path;
  not_found_ += "\n";

  svr_->set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) { return answer(req, res); });
  svr_->set_logger(
      [this](const httplib::Request& req, const httplib::Response& res) { note_answer(req, res); });

  // The library's own errors (400 for a request line it cannot parse, 414 for
  // an overlong URI) come without a body: give them one line.
  using HR = httplib::Server::HandlerResponse;
  svr_->set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
        // A Range header httplib could not parse (416, before routing): it
        // is ignored like any other, and the request answered as usual.
        if (res.status == 416 && res.body.empty() && req.has_header("Range")) {
          return answer(req, res);
        }
        // Ranges are never applied, not even to an error's body.
        const_cast<httplib::Request&>(req).ranges.clear();
        // After a request we could not parse, what follows on the connection
        // cannot be trusted to start a request: close it.
        const bool unparsed =
            res.status == 400 || res.status == 413 || res.status == 414 || res.status == 431;
        if (unparsed) {
          note_request(req);  // also tells the watchdog an answer is under way
          tl_conn.close = true;
          if (!res.has_header("Connection")) res.set_header("Connection", "close");
        }
        if (!res.body.empty()) return HR::Unhandled;
        const char* what = res.status == 414   ? "request URI too long"
                           : res.status == 431 ? "request header fields too large"
                           : res.status == 413 ? "request body too large"
                           : res.status == 400 ? "bad request"
                                               : "error";
        res.set_content(std::string(what) + "\n", kTextPlain);
        return HR::Handled;
      }));
  svr_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
        res.status = 500;
        res.set_content("internal error\n", kTextPlain);
      });
}

httplib::Server::HandlerResponse Server::answer(const httplib::Request& req,
                                                httplib::Response& res) {
  using HR = httplib::Server::HandlerResponse;
  // httplib parsed the Range header into req.ranges and would apply it to
  // whatever we answer; the request object is its own (not const), handed
  // to us as const. Clearing it makes every answer whole.
  const_cast<httplib::Request&>(req).ranges.clear();
  res.set_header("Accept-Ranges", "none");
  note_request(req);
  if (tl_conn.close) res.set_header("Connection", "close");
  if (!is_get_or_head(req.method)) {
    res.status = 405;
    res.set_header("Allow", kAllow);
    // A body we did not read may follow: this connection is done.
    tl_conn.close = true;
    if (!res.has_header("Connection")) res.set_header("Connection", "close");
    res.set_content("method not allowed: this exporter is read-only (GET, HEAD)\n", kTextPlain);
    return HR::Handled;
  }
  if (client_header_bytes(req) > kMaxHeaderBytes || client_header_count(req) > kMaxHeaderCount) {
    res.status = 431;
    tl_conn.close = true;
    if (!res.has_header("Connection")) res.set_header("Connection", "close");
    res.set_content("request header fields too large (at most " + std::to_string(kMaxHeaderCount) +
                        " fields, " + format_bytes_exact(kMaxHeaderBytes) + ")\n",
                    kTextPlain);
    return HR::Handled;
  }
  if (auth_ && !auth_->allowed(req.get_header_value("Authorization"))) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"gpudoctor\", charset=\"UTF-8\"");
    res.set_content("unauthorized\n", kTextPlain);
    return HR::Handled;
  }
  auto it = routes_.find(req.path);
  if (it == routes_.end()) {
    res.status = 404;
    res.set_content(not_found_, kTextPlain);
    return HR::Handled;
  }
  HttpResponse r = it->second();
  res.status = r.status;
  if (r.content_type.rfind("text/html", 0) == 0) {
    // The page has no script and no external asset; say so to the browser
    // too, so that an escaping slip could not load or run anything.
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                   "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(r.body, r.content_type);
  return HR::Handled;
}

// Finds this worker's connection, once: the socket httplib reads on this
// thread, or (over TLS, where OpenSSL reads it) the one from the request's
// peer address, which httplib fills in only for a request it could parse.
void Server::know_connection(const httplib::Request& req) {
  WorkerConn& c = tl_conn;
  if (c.looked) return;
  c.looked = true;
  if (tl_read_socket >= 0) {
    c.peer = peer_of(tl_read_socket);
    if (!c.peer.empty()) c.fd = tl_read_socket;
  } else if (!req.remote_addr.empty()) {
    c.peer = req.remote_addr + "/" + std::to_string(req.remote_port);
    c.fd = find_connection(port_, c.peer);
  }
}

// Before answering: find this worker's connection, see whether httplib read
// past this request, and tell the watchdog a request is being answered.
void Server::note_request(const httplib::Request& req) {
  know_connection(req);
  WorkerConn& c = tl_conn;
  if (c.fd < 0) return;
  const int64_t read = bytes_read_from(c.fd);
  if (read >= 0) {
    // Over TLS the kernel counts records, not requests, and OpenSSL keeps
    // what it read ahead for the next request: nothing is swallowed there.
    if (!tls_ && read - c.read > static_cast<int64_t>(request_head_bytes(req))) c.close = true;
    c.read = read;
  }
  load_->record(c.fd, ConnRecord{c.peer, true, Clock::now(), c.read});
}

// After the answer is written (httplib's logger hook).
void Server::note_answer(const httplib::Request&, const httplib::Response& res) {
  WorkerConn& c = tl_conn;
  if (c.fd < 0) return;
  if (c.close || res.get_header_value("Connection") == "close") {
    // httplib would wait for the client (up to the keep-alive timeout) even
    // after saying close; end it now, after the queued answer.
    finish_connection(c.fd);
    return;
  }
  load_->record(c.fd, ConnRecord{c.peer, false, Clock::now(), c.read});
}

void Server::watch() {
  std::map<TcpConn, Clock::time_point> seen;     // connection -> when first seen
  std::map<TcpConn, Clock::time_point> refused;  // connection -> when its head was refused
  const auto deadline = std::chrono::milliseconds(deadline_ms_);
  const auto head_deadline = std::chrono::milliseconds(head_deadline_ms_);
  std::unique_lock<std::mutex> lock(load_->mu);
  for (;;) {
    load_->cv.wait(lock, [&] { return load_->stop || load_->busy > 0; });
    if (load_->stop) return;
    lock.unlock();
    const auto now = Clock::now();
    std::map<TcpConn, Clock::time_point> next;
    const bool pressure = load_->busy * 2 >= load_->max_threads;
    bool flooded = false;
    std::map<int, ConnRecord> records;
    {
      std::lock_guard<std::mutex> cl(load_->conns_mu);
      records = load_->conns;
    }
    for (const TcpConn& c : connections_on(port_)) {
      auto it = seen.find(c);
      const auto first_seen = it == seen.end() ? now : it->second;
      // Waiting for a request head since the last answer (or since the
      // connection was first seen); a request being answered is not.
      auto rec = records.find(c.fd);
      const bool known = rec != records.end() && rec->second.peer == c.peer;
      const bool handling = known && rec->second.handling;
      const auto waiting_since = known ? std::max(first_seen, rec->second.since) : first_seen;
      const uint64_t head = c.bytes_received - static_cast<uint64_t>(known ? rec->second.read : 0);
      const auto waited = now - waiting_since;
      const bool head_too_big = !handling && head > kMaxHeadBytes;
      const bool too_big = c.bytes_received > kMaxConnectionBytes || head_too_big;
      const bool too_slow =
          !handling && (waited >= head_deadline || (pressure && waited >= deadline));
      auto was_refused = refused.find(c);
      if (head_too_big && !too_slow && !tls_ && was_refused == refused.end() &&
          c.bytes_received <= kMaxConnectionBytes && refuse_head(c)) {
        // The client learns why; a client that keeps sending is cut below
        // once its grace is over.
        refused[c] = now;
        next[c] = first_seen;
      } else if (too_slow || (too_big && (was_refused == refused.end() ||
                                          now - was_refused->second >= kRefusedGrace))) {
        flooded |= too_big;
        cut_connection(c);
      } else {
        next[c] = first_seen;
      }
    }
    std::erase_if(refused, [&](const auto& r) { return !next.count(r.first); });
    seen = std::move(next);
    // The flood's headers sat in the worker's heap arena: hand the pages back.
    if (flooded) malloc_trim(0);
    lock.lock();
    if (load_->cv.wait_for(lock, kWatchPeriod, [&] { return load_->stop; })) return;
  }
}

// Answers a request head past kMaxHeadBytes with 431 and half-closes the
// connection (what the client sends next is still read, then dropped). Done
// under conns_mu while the worker has not begun an answer of its own: a
// worker records that it is answering (note_request) before it writes, so
// its answer cannot interleave with this one, and once this is sent its
// write fails on the half-closed socket.
bool Server::refuse_head(const TcpConn& c) {
  static const std::string k431 =
      "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: " + std::string(kTextPlain) +
      "\r\nConnection: close\r\nContent-Length: " +
      std::to_string(sizeof "request head too large (at most 64 KiB)\n" - 1) +
      "\r\n\r\nrequest head too large (at most 64 KiB)\n";
  static_assert(kMaxHeadBytes == 64 * 1024, "the answer above names the cap");
  std::lock_guard<std::mutex> cl(load_->conns_mu);
  auto rec = load_->conns.find(c.fd);
  if (rec != load_->conns.end() && rec->second.peer == c.peer && rec->second.handling) return false;
  return half_close_with(c, k431);
}

Result<bool> Server::start(const HttpOptions& opt, std::map<std::string, HttpHandler> routes) {
  auto addr = parse_listen_address(opt.listen);
  if (!addr.ok()) return Error{addr.error()};

  std::unique_ptr<BasicAuth> auth;
  WebConfig wc;
  if (!opt.web_config.empty()) {
    auto loaded = load_web_config(opt.web_config);
    if (!loaded.ok()) return Error{loaded.error()};
    wc = std::move(*loaded);
    if (!wc.basic_auth_users.empty()) auth = std::make_unique<BasicAuth>(wc.basic_auth_users);
  }
  if (wc.tls) {
    auto tls_server = make_tls_server(wc.tls_server);
    if (!tls_server.ok()) return Error{"web config " + opt.web_config + ": " + tls_server.error()};
    svr_ = std::move(*tls_server);
  } else {
    svr_ = std::make_unique<httplib::Server>();
  }
  auth_ = std::move(auth);
  tls_ = wc.tls;
  deadline_ms_ = std::max<int64_t>(100, opt.connection_deadline_ms);
  head_deadline_ms_ = std::max<int64_t>(deadline_ms_, opt.header_read_deadline_ms);
  load_->max_threads = std::max<size_t>(2, opt.max_threads);

  setup_routes(std::move(routes));
  svr_->set_read_timeout(opt.read_timeout_ms / 1000, (opt.read_timeout_ms % 1000) * 1000);
  svr_->set_write_timeout(opt.write_timeout_ms / 1000, (opt.write_timeout_ms % 1000) * 1000);
  svr_->set_keep_alive_timeout(std::max<int64_t>(1, opt.keep_alive_timeout_ms / 1000));
  svr_->set_keep_alive_max_count(opt.keep_alive_max_requests);
  svr_->set_payload_max_length(64 * 1024);  // GET and HEAD carry no body
  auto load = load_;
  svr_->new_task_queue = [load] { return new WorkerPool(load); };
  const bool all = addr->all_interfaces;
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would
  // let us bind a port another exporter already listens on.
  svr_->set_socket_options([all](int sock) {
    int yes = 1, no = 0;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // Headers and body go out in separate writes: with Nagle on, the body
    // waits for the client's delayed ACK, 40 ms per keep-alive scrape.
    // Accepted sockets inherit the flag from the listening one.
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    // ":PORT" means every interface, IPv4 included (the "::" socket answers both).
    if (all) setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
  });

  int port = addr->port;
  bool bound = port == 0 ? (port = svr_->bind_to_any_port(addr->host)) > 0
                         : svr_->bind_to_port(addr->host, port);
  if (!bound && all) {  // a machine without IPv6: every IPv4 interface
    addr->host = "0.0.0.0";
    port = addr->port;
    bound = port == 0 ? (port = svr_->bind_to_any_port(addr->host)) > 0
                      : svr_->bind_to_port(addr->host, port);
  }
  if (!bound) {
    return Error{"cannot listen on " + opt.listen +
                 " (address in use, not an address of this machine, or not allowed)"};
  }
  port_ = port;
  // httplib listened with a backlog of 5: a burst of connections beyond it
  // waits a second for the SYN to be sent again.
  if (!set_listen_backlog(port_, kListenBacklog)) {
    return Error{"cannot set the listen backlog on " + opt.listen};
  }
  listener_ = std::thread([this] { svr_->listen_after_bind(); });
  // httplib 0.11 has no wait_until_ready: the socket is bound and listening
  // already (connections queue in the backlog); wait for the accept loop.
  for (int i = 0; i < 500 && !svr_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  watchdog_ = std::thread([this] { watch(); });
  return true;
}

// TLS: the SSL_CTX is set up here rather than by httplib's path constructor,
// which knows neither client_auth_type nor min_version.
Result<std::unique_ptr<httplib::Server>> make_tls_server(const TlsServerConfig& tls) {
  std::string why;
  auto svr = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
    int min = tls.min_version == "TLS13" ? TLS1_3_VERSION : TLS1_2_VERSION;
    if (!SSL_CTX_set_min_proto_version(&ctx, min)) {
      why = "cannot set min_version " + tls.min_version;
      return false;
    }
    if (SSL_CTX_use_certificate_chain_file(&ctx, tls.cert_file.c_str()) != 1) {
      why = "cannot load cert_file " + tls.cert_file + " (missing or not a PEM certificate)";
      return false;
    }
    if (SSL_CTX_use_PrivateKey_file(&ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      why = "cannot load key_file " + tls.key_file + " (missing or not a PEM private key)";
      return false;
    }
    if (SSL_CTX_check_private_key(&ctx) != 1) {
      why = "key_file " + tls.key_file + " does not match cert_file " + tls.cert_file;
      return false;
    }
    const std::string& t = tls.client_auth_type;
    int mode = SSL_VERIFY_NONE;
    if (t == "RequestClientCert" || t == "VerifyClientCertIfGiven") mode = SSL_VERIFY_PEER;
    if (t == "RequireAnyClientCert" || t == "RequireAndVerifyClientCert") {
      mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    }
    const bool verify = t == "VerifyClientCertIfGiven" || t == "RequireAndVerifyClientCert";
    if (verify) {
      if (SSL_CTX_load_verify_locations(&ctx, tls.client_ca_file.c_str(), nullptr) != 1) {
        why = "cannot load client_ca_file " + tls.client_ca_file;
        return false;
      }
      SSL_CTX_set_client_CA_list(&ctx, SSL_load_client_CA_file(tls.client_ca_file.c_str()));
      SSL_CTX_set_verify(&ctx, mode, nullptr);
    } else if (mode != SSL_VERIFY_NONE) {
      // Request/RequireAny: ask for a certificate but accept any (the toolkit's meaning).
      SSL_CTX_set_verify(&ctx, mode, [](int, X509_STORE_CTX*) { return 1; });
    }
    return true;
  });
  if (!svr->is_valid()) return Error{why.empty() ? "cannot set up TLS" : why};
  return std::unique_ptr<httplib::Server>(std::move(svr));
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
