// Placeholder until the HTTP server lands.
#include "serve/http.h"

namespace gd {

Result<std::unique_ptr<HttpServer>> start_http_server(const HttpOptions&,
                                                      std::map<std::string, HttpHandler>) {
  return Error{"the HTTP server is not built yet"};
}

}  // namespace gd
