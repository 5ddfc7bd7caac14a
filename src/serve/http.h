// The exporter's HTTP/1.1 server (http.cc): read-only GET/HEAD routes,
// loopback unless told otherwise, optional TLS and basic auth from a web
// config file in Prometheus' exporter-toolkit form (docs/serve.md). Bad
// requests get clear HTTP errors; a slow or hostile client never stalls the
// others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "util/result.h"

namespace gd {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Called on a server thread for each GET/HEAD of its path; must be quick
// and must not block on the sampler or the check (hand out the last state).
using HttpHandler = std::function<HttpResponse()>;

struct HttpOptions {
  std::string listen = "127.0.0.1:9835";  // HOST:PORT; port 0 picks a free one
  std::string web_config;                 // "" = plain HTTP, no auth

  // Limits against slow or hostile clients (defaults suit an exporter that
  // Prometheus scrapes every 15 s and a person opens in a browser).
  int64_t read_timeout_ms = 5000;        // per read: a silent client is dropped
  int64_t write_timeout_ms = 5000;       // per write: a client that stops reading
  int64_t keep_alive_timeout_ms = 5000;  // idle keep-alive connection
  size_t keep_alive_max_requests = 100;  // then the connection is closed
  // Threads that read, answer and write, up to this many at once. A
  // connection takes one only while there is something to do: one that
  // waits for its client (a request head, the TLS handshake, the next
  // keep-alive request) waits in the acceptor's epoll set, holding no thread.
  size_t max_threads = 128;
  // Open connections in all, and from one peer (an IPv4 address, or an IPv6
  // /64). A new connection beyond either bound closes the oldest one waiting
  // for its client (the peer's own first), so a new client always gets in;
  // max_connections is lowered to what RLIMIT_NOFILE allows.
  size_t max_connections = 1024;
  size_t max_connections_per_peer = 512;
  // A connection waiting for a request head or its TLS handshake (since it
  // opened, or since its last answer) is cut after header_read_deadline_ms.
  // Under pressure (at least max_threads / 2 connections open) already after
  // connection_deadline_ms, an idle keep-alive connection at once, and every
  // answer closes its connection: a client trickling a byte a second, or
  // sending a request now and then, cannot hold a place.
  int64_t header_read_deadline_ms = 10000;
  int64_t connection_deadline_ms = 2000;
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  virtual int port() const = 0;  // the bound port
  virtual void stop() = 0;       // stops accepting and joins the threads
};

// Binds and starts serving `routes` (exact paths) on background threads.
// Error: bad listen address, port taken, unreadable or invalid web config.
Result<std::unique_ptr<HttpServer>> start_http_server(const HttpOptions& opt,
                                                      std::map<std::string, HttpHandler> routes);

}  // namespace gd
