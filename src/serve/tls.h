// TLS for the exporter (web config's tls_server_config), over OpenSSL 3's
// libssl, loaded with dlopen only when a web config asks for TLS: an
// exporter serving plain HTTP (the default) never maps OpenSSL, which would
// be about a third of its resident memory (bench/serve_scrape.txt).
#pragma once

#include <memory>

#include "serve/http_stream.h"
#include "serve/web_config.h"
#include "util/result.h"

namespace gd {

class TlsContext {
 public:
  // Loads libssl.so.3 and sets up the server context: certificate chain,
  // key, client certificates as client_auth_type says, minimum version.
  // Errors name the file or setting at fault, in one line.
  static Result<std::unique_ptr<TlsContext>> create(const TlsServerConfig& cfg);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A TLS stream over accepted socket `fd` (its handshake not yet done), or
  // nullptr when OpenSSL cannot make one (out of memory).
  std::unique_ptr<Stream> wrap(int fd) const;

 private:
  explicit TlsContext(void* ctx) : ctx_(ctx) {}
  void* ctx_;  // SSL_CTX*
};

}  // namespace gd
