// The exporter's web config: the YAML file Prometheus exporters take with
// --web.config.file (github.com/prometheus/exporter-toolkit, docs/web-configuration.md),
// the subset gpudoctor supports:
//
//   tls_server_config:
//     cert_file: server.crt          # relative paths: relative to this file
//     key_file: server.key
//     client_auth_type: RequireAndVerifyClientCert   # optional
//     client_ca_file: clients-ca.crt                 # optional
//     min_version: TLS12                             # optional: TLS12 or TLS13
//   basic_auth_users:
//     prometheus: $2y$10$...   # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//
// As in the toolkit, an unknown key is an error, not a silent no-op.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "util/result.h"

namespace gd {

struct TlsServerConfig {
  std::string cert_file;  // absolute, or relative to the working directory
  std::string key_file;
  // NoClientCert, RequestClientCert, RequireAnyClientCert,
  // VerifyClientCertIfGiven, RequireAndVerifyClientCert (the toolkit's names).
  std::string client_auth_type = "NoClientCert";
  std::string client_ca_file;
  std::string min_version = "TLS12";  // TLS12 or TLS13 (older ones are refused)
};

struct WebConfig {
  bool tls = false;  // a tls_server_config section was given
  TlsServerConfig tls_server;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
};

// Reads and validates `path` (relative cert paths resolve against its directory).
Result<WebConfig> load_web_config(const std::string& path);
// The same from text; `base_dir` is where relative paths resolve ("" = as is).
Result<WebConfig> parse_web_config(const std::string& yaml, const std::string& base_dir);

// True when `password` matches the bcrypt `hash` ($2a$, $2b$, $2y$), by
// libcrypt's crypt_rn and a constant-time compare.
bool bcrypt_matches(const std::string& password, const std::string& hash);

// What an Authorization header earns.
enum class AuthOutcome { kAllowed, kDenied, kThrottled };

// How many failed checks a peer may make (each costs a bcrypt, ~50 ms of a
// core at cost 10): a bucket of failure_burst, refilled at
// failures_per_second. 0 per second: no limit.
struct AuthLimits {
  double failures_per_second = 2;
  double failure_burst = 10;
};

// Checks an Authorization header against the users. bcrypt costs ~50 ms at
// cost 10, so, as the toolkit does, a successful check is cached under a
// hash of user, password and hash (never the password itself): a scrape
// every 15 s pays for bcrypt once. A peer (the server's name for a client
// address) past its failures is throttled without a bcrypt, unless its
// credentials are cached as good. Thread-safe.
class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users, AuthLimits limits = {});
  bool enabled() const { return !users_.empty(); }
  // `authorization` is the header's value ("Basic dXNlcjpwYXNz"), "" when absent.
  AuthOutcome check(const std::string& authorization, const std::string& peer);
  bool allowed(const std::string& authorization) {
    return check(authorization, "") == AuthOutcome::kAllowed;
  }

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;  // when tokens was last refilled
  };
  // Takes one try from the peer's bucket; false when it has none left.
  bool take_try(const std::string& peer);
  void give_back_try(const std::string& peer);

  std::map<std::string, std::string> users_;
  AuthLimits limits_;
  // An unknown user's password is checked against the costliest user's hash
  // (and never accepted): it costs what a known user's wrong password costs.
  std::string dummy_hash_;
  std::mutex mu_;
  std::set<std::string> good_;           // SHA-256 of user, password and hash, of successful checks
  std::map<std::string, Bucket> tries_;  // per peer, at most kMaxPeers
};

}  // namespace gd
