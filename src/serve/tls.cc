// OpenSSL is declared by its own headers (libssl-dev, at build time only)
// and reached through dlsym: nothing here links against it, so a call made
// by name rather than through the table below fails to link.
#include "serve/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <string>

#include "util/dl.h"

namespace gd {
namespace {

// OpenSSL 3 (Debian 12, Ubuntu 22.04, RHEL 9), else 1.1 (Debian 11,
// Ubuntu 20.04), both on the systems the release binaries run on
// (docs/install.md). Every function below has the same signature in both,
// and the SSL_CTRL_, SSL_VERIFY_ and SSL_ERROR_ values used are the same;
// the one whose ABI changed, SSL_CTX_set_options, is not called.
constexpr const char* kLibSsl[] = {"libssl.so.3", "libssl.so.1.1"};

// ERR_clear_error is libcrypto's, found through libssl's dependencies.
#define GD_SSL_FUNCTIONS(X)             \
  X(TLS_server_method)                  \
  X(SSL_CTX_new)                        \
  X(SSL_CTX_free)                       \
  X(SSL_CTX_ctrl)                       \
  X(SSL_CTX_use_certificate_chain_file) \
  X(SSL_CTX_use_PrivateKey_file)        \
  X(SSL_CTX_check_private_key)          \
  X(SSL_CTX_load_verify_locations)      \
  X(SSL_load_client_CA_file)            \
  X(SSL_CTX_set_client_CA_list)         \
  X(SSL_CTX_set_verify)                 \
  X(SSL_new)                            \
  X(SSL_free)                           \
  X(SSL_set_fd)                         \
  X(SSL_accept)                         \
  X(SSL_read)                           \
  X(SSL_write)                          \
  X(SSL_get_error)                      \
  X(SSL_shutdown)                       \
  X(ERR_clear_error)

struct OpenSsl {
  GD_SSL_FUNCTIONS(GD_DL_POINTER)
  std::string error;  // why it could not be loaded ("" when loaded)
};

// Loaded once, on the first TLS config; never unloaded.
const OpenSsl& openssl() {
  static const OpenSsl lib = [] {
    OpenSsl table;
    const char* lib_name = nullptr;
    void* handle = nullptr;
    std::string why;
    for (const char* name : kLibSsl) {
      std::string this_why;
      lib_name = name;
      handle = dl_open(name, &this_why);
      if (handle != nullptr) break;
      why += (why.empty() ? "" : "; ") + this_why;
    }
    if (handle == nullptr) {
      table.error = "TLS needs OpenSSL 3 or 1.1 (libssl.so.3 or libssl.so.1.1): " + why;
      return table;
    }
    GD_SSL_FUNCTIONS(GD_DL_RESOLVE)
    return table;
  }();
  return lib;
}

class TlsStream final : public Stream {
 public:
  TlsStream(int fd, SSL* ssl) : Stream(fd), ssl_(ssl) {}
  ~TlsStream() override { openssl().SSL_free(ssl_); }
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  Io handshake() override {
    const OpenSsl& o = openssl();
    o.ERR_clear_error();
    return outcome(o.SSL_accept(ssl_));
  }
  Io read(char* buf, size_t len) override {
    const OpenSsl& o = openssl();
    o.ERR_clear_error();
    return outcome(o.SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(len, 1 << 30))));
  }
  Io write(const char* buf, size_t len) override {
    const OpenSsl& o = openssl();
    o.ERR_clear_error();
    return outcome(o.SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(len, 1 << 30))));
  }
  void close_notify() override {
    const OpenSsl& o = openssl();
    o.ERR_clear_error();
    o.SSL_shutdown(ssl_);  // sends ours; the peer's is not waited for
  }

 private:
  // SSL_accept, SSL_read or SSL_write's return value as an Io.
  Io outcome(int ret) {
    if (ret > 0) return Io{ret, 0};
    switch (openssl().SSL_get_error(ssl_, ret)) {
      case SSL_ERROR_WANT_READ:
        return Io{-1, POLLIN};
      case SSL_ERROR_WANT_WRITE:
        return Io{-1, POLLOUT};
      case SSL_ERROR_ZERO_RETURN:
        return Io{0, 0};  // the peer's close_notify
      case SSL_ERROR_SYSCALL:
        // ret 0: the TCP stream ended without a close_notify; as plain TCP's end.
        return ret == 0 ? Io{0, 0} : Io{-1, 0};
      default:
        return Io{-1, 0};
    }
  }

  SSL* ssl_;
};

// client_auth_type (exporter-toolkit's names) as OpenSSL verify flags.
int verify_mode(const std::string& t) {
  if (t == "RequestClientCert" || t == "VerifyClientCertIfGiven") return SSL_VERIFY_PEER;
  if (t == "RequireAnyClientCert" || t == "RequireAndVerifyClientCert") {
    return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  }
  return SSL_VERIFY_NONE;
}

// Sets up `ctx` from `cfg`; "" when done, else why not.
std::string configure(const OpenSsl& o, SSL_CTX* ctx, const TlsServerConfig& cfg) {
  const long min = cfg.min_version == "TLS13" ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (o.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, min, nullptr) != 1) {
    return "cannot set min_version " + cfg.min_version;
  }
  // The server retries a write with the same bytes, but from a buffer that
  // may have moved (std::string), and takes partial writes.
  o.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE,
                 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
  if (o.SSL_CTX_use_certificate_chain_file(ctx, cfg.cert_file.c_str()) != 1) {
    return "cannot load cert_file " + cfg.cert_file + " (missing or not a PEM certificate)";
  }
  if (o.SSL_CTX_use_PrivateKey_file(ctx, cfg.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return "cannot load key_file " + cfg.key_file + " (missing or not a PEM private key)";
  }
  if (o.SSL_CTX_check_private_key(ctx) != 1) {
    return "key_file " + cfg.key_file + " does not match cert_file " + cfg.cert_file;
  }
  const std::string& t = cfg.client_auth_type;
  const int mode = verify_mode(t);
  if (t == "VerifyClientCertIfGiven" || t == "RequireAndVerifyClientCert") {
    if (o.SSL_CTX_load_verify_locations(ctx, cfg.client_ca_file.c_str(), nullptr) != 1) {
      return "cannot load client_ca_file " + cfg.client_ca_file;
    }
    o.SSL_CTX_set_client_CA_list(ctx, o.SSL_load_client_CA_file(cfg.client_ca_file.c_str()));
    o.SSL_CTX_set_verify(ctx, mode, nullptr);
  } else if (mode != SSL_VERIFY_NONE) {
    // Request/RequireAny: ask for a certificate but accept any (the toolkit's meaning).
    o.SSL_CTX_set_verify(ctx, mode, [](int, X509_STORE_CTX*) { return 1; });
  }
  return "";
}

}  // namespace

Result<std::unique_ptr<TlsContext>> TlsContext::create(const TlsServerConfig& cfg) {
  const OpenSsl& o = openssl();
  if (!o.error.empty()) return Error{o.error};
  o.ERR_clear_error();
  SSL_CTX* ctx = o.SSL_CTX_new(o.TLS_server_method());
  if (ctx == nullptr) return Error{"cannot set up TLS (OpenSSL could not make a context)"};
  std::string why = configure(o, ctx, cfg);
  if (!why.empty()) {
    o.SSL_CTX_free(ctx);
    return Error{why};
  }
  return std::unique_ptr<TlsContext>(new TlsContext(ctx));
}

TlsContext::~TlsContext() { openssl().SSL_CTX_free(static_cast<SSL_CTX*>(ctx_)); }

std::unique_ptr<Stream> TlsContext::wrap(int fd) const {
  const OpenSsl& o = openssl();
  SSL* ssl = o.SSL_new(static_cast<SSL_CTX*>(ctx_));
  if (ssl == nullptr) return nullptr;
  if (o.SSL_set_fd(ssl, fd) != 1) {
    o.SSL_free(ssl);
    return nullptr;
  }
  return std::make_unique<TlsStream>(fd, ssl);
}

}  // namespace gd
