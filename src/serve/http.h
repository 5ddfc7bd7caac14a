// The exporter's HTTP server (cpp-httplib): read-only GET/HEAD routes,
// loopback unless told otherwise, optional TLS and basic auth from a web
// config file in Prometheus' exporter-toolkit form (docs/serve.md). Bad
// requests get clear HTTP errors; a slow or hostile client never stalls the
// others.
#pragma once

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
