#include "serve/web_config.h"

#include <crypt.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <memory>

#include "util/ascii.h"
#include "util/read_file.h"
#include "util/sha256.h"
#include "util/text.h"

namespace gd {
namespace {

// Keys of the toolkit's web config that gpudoctor does not implement: named
// as such, so a config written for node_exporter fails with a clear reason.
bool toolkit_only_tls_key(const std::string& k) {
  return k == "max_version" || k == "cipher_suites" || k == "curve_preferences" ||
         k == "prefer_server_cipher_suites" || k == "client_allowed_sans";
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

Result<std::string> scalar(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) return Error{where + " must be a string"};
  return n.as<std::string>();
}

// A bcrypt hash as htpasswd -B and Go's bcrypt write it:
//   $2y$10$4C1gSv2yqxkwdVUQXHWpOe3SSVqfwkkaEEFDQ/10Sx1JqdKJZXWmS
bool looks_like_bcrypt(const std::string& h) {
  return h.size() == 60 && h[0] == '$' && h[1] == '2' &&
         (h[2] == 'a' || h[2] == 'b' || h[2] == 'y') && h[3] == '$';
}

Result<TlsServerConfig> parse_tls(const YAML::Node& n, const std::string& base_dir) {
  if (!n.IsMap()) return Error{"tls_server_config must be a mapping"};
  TlsServerConfig t;
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    const std::string where = "tls_server_config." + key;
    if (toolkit_only_tls_key(key)) {
      return Error{where +
                   " is not supported by gpudoctor (supported: cert_file, key_file, "
                   "client_auth_type, client_ca_file, min_version)"};
    }
    auto v = scalar(kv.second, where);
    if (!v.ok()) return Error{v.error()};
    if (key == "cert_file") {
      t.cert_file = resolve(base_dir, *v);
    } else if (key == "key_file") {
      t.key_file = resolve(base_dir, *v);
    } else if (key == "client_ca_file") {
      t.client_ca_file = resolve(base_dir, *v);
    } else if (key == "client_auth_type") {
      t.client_auth_type = *v;
    } else if (key == "min_version") {
      t.min_version = *v;
    } else {
      return Error{"unknown key " + where};
    }
  }
  if (t.cert_file.empty()) return Error{"tls_server_config needs cert_file"};
  if (t.key_file.empty()) return Error{"tls_server_config needs key_file"};
  const std::string& a = t.client_auth_type;
  if (a != "NoClientCert" && a != "RequestClientCert" && a != "RequireAnyClientCert" &&
      a != "VerifyClientCertIfGiven" && a != "RequireAndVerifyClientCert") {
    return Error{"tls_server_config.client_auth_type '" + a +
                 "' is not one of NoClientCert, RequestClientCert, RequireAnyClientCert, "
                 "VerifyClientCertIfGiven, RequireAndVerifyClientCert"};
  }
  const bool verifies = a == "VerifyClientCertIfGiven" || a == "RequireAndVerifyClientCert";
  if (verifies && t.client_ca_file.empty()) {
    return Error{"tls_server_config.client_auth_type " + a + " needs client_ca_file"};
  }
  if (!verifies && !t.client_ca_file.empty()) {
    return Error{"tls_server_config.client_ca_file is set but client_auth_type " + a +
                 " does not verify client certificates"};
  }
  if (t.min_version == "TLS10" || t.min_version == "TLS11") {
    return Error{"tls_server_config.min_version " + t.min_version +
                 " is refused: TLS 1.0 and 1.1 are obsolete (use TLS12 or TLS13)"};
  }
  if (t.min_version != "TLS12" && t.min_version != "TLS13") {
    return Error{"tls_server_config.min_version '" + t.min_version + "' is not TLS12 or TLS13"};
  }
  return t;
}

Result<std::map<std::string, std::string>> parse_users(const YAML::Node& n) {
  std::map<std::string, std::string> users;
  if (n.IsNull()) return users;
  if (!n.IsMap()) return Error{"basic_auth_users must be a mapping of user name to bcrypt hash"};
  for (const auto& kv : n) {
    const std::string user = kv.first.as<std::string>();
    auto hash = scalar(kv.second, "basic_auth_users." + user);
    if (!hash.ok()) return Error{hash.error()};
    if (user.empty() || user.find(':') != std::string::npos) {
      return Error{"basic_auth_users: user name '" + user + "' is empty or has a ':'"};
    }
    if (!looks_like_bcrypt(*hash)) {
      return Error{"basic_auth_users." + user +
                   " is not a bcrypt hash ($2y$..., 60 characters; make one with "
                   "htpasswd -nBC 10 \"\" | tr -d ':\\n')"};
    }
    users[user] = *hash;
  }
  return users;
}

// RFC 4648 base64, as browsers and Prometheus send it in "Authorization: Basic".
bool base64_decode(const std::string& in, std::string* out) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0 || in.size() > 4096) return false;
  out->clear();
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = in[i + j];
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        v[j] = 0;
        ++pad;
      } else if (pad > 0 || (v[j] = val(c)) < 0) {
        return false;
      }
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out->push_back(static_cast<char>(n >> 16));
    if (pad < 2) out->push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out->push_back(static_cast<char>(n & 0xff));
  }
  return true;
}

std::string sha256_bytes(const std::string& s) {
  const auto md = sha256(s);
  return std::string(md.begin(), md.end());
}

}  // namespace

namespace {

Result<WebConfig> parse_yaml(const std::string& yaml, const std::string& base_dir) {
  WebConfig wc;
  try {
    YAML::Node root = YAML::Load(yaml);
    if (root.IsNull()) return wc;  // an empty file: plain HTTP, as in the toolkit
    if (!root.IsMap()) return Error{"expected a mapping at the top"};
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (key == "tls_server_config") {
        auto t = parse_tls(kv.second, base_dir);
        if (!t.ok()) return Error{t.error()};
        wc.tls = true;
        wc.tls_server = std::move(*t);
      } else if (key == "basic_auth_users") {
        auto u = parse_users(kv.second);
        if (!u.ok()) return Error{u.error()};
        wc.basic_auth_users = std::move(*u);
      } else if (key == "http_server_config") {
        return Error{"http_server_config is not supported by gpudoctor (it serves HTTP/1.1)"};
      } else {
        return Error{"unknown key " + key + " (expected tls_server_config, basic_auth_users)"};
      }
    }
  } catch (const YAML::Exception& e) {
    return Error{"not valid YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")"};
  }
  return wc;
}

}  // namespace

Result<WebConfig> parse_web_config(const std::string& yaml, const std::string& base_dir) {
  auto wc = parse_yaml(yaml, base_dir);
  // Keys and values are quoted in errors as the file has them, newlines and
  // all (fuzz_web_config): the error stays one printable line.
  if (!wc.ok()) return Error{printable(wc.error(), 300)};
  return wc;
}

Result<WebConfig> load_web_config(const std::string& path) {
  // The config file's cap: a web config is a few lines of YAML.
  auto text = read_file_capped(path, kConfigCapBytes);
  if (!text.ok()) return Error{"cannot read web config " + path + ": " + text.error()};
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  auto wc = parse_web_config(*text, dir);
  if (!wc.ok()) return Error{"web config " + path + ": " + wc.error()};
  return wc;
}

bool bcrypt_matches(const std::string& password, const std::string& hash) {
  if (password.find('\0') != std::string::npos || !looks_like_bcrypt(hash)) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KiB: not on a worker's stack
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof *data);
  if (out == nullptr || out[0] == '*') return false;
  std::string got(out);
  return constant_time_equal(got, hash);
}

namespace {

// Peers whose failures are remembered; beyond, those whose bucket is full
// again are forgotten first.
constexpr size_t kMaxPeers = 4096;

// The cost of a bcrypt hash ("$2y$10$..." is 10).
int bcrypt_cost(const std::string& hash) { return (hash[4] - '0') * 10 + (hash[5] - '0'); }

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users, AuthLimits limits)
    : users_(std::move(users)), limits_(limits) {
  // Without users nothing is checked; the fallback is never compared then.
  dummy_hash_ = "$2b$10$o7W43exDX5sA3M8P14m1aOUqTnjvDg/sp78cJDi0qiw/bEA3hsaNy";
  int cost = -1;
  for (const auto& [user, hash] : users_) {
    if (looks_like_bcrypt(hash) && bcrypt_cost(hash) > cost) {
      cost = bcrypt_cost(hash);
      dummy_hash_ = hash;
    }
  }
}

bool BasicAuth::take_try(const std::string& peer) {
  if (limits_.failures_per_second <= 0) return true;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  auto tokens = [&](const Bucket& b) {
    const double s = std::chrono::duration<double>(now - b.at).count();
    return std::min(limits_.failure_burst, b.tokens + s * limits_.failures_per_second);
  };
  auto it = tries_.find(peer);
  if (it == tries_.end()) {
    if (tries_.size() >= kMaxPeers) {
      std::erase_if(tries_,
                    [&](const auto& kv) { return tokens(kv.second) >= limits_.failure_burst; });
      if (tries_.size() >= kMaxPeers) tries_.clear();
    }
    it = tries_.emplace(peer, Bucket{limits_.failure_burst, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = tokens(b);
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

void BasicAuth::give_back_try(const std::string& peer) {
  if (limits_.failures_per_second <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tries_.find(peer);
  if (it != tries_.end())
    it->second.tokens = std::min(limits_.failure_burst, it->second.tokens + 1);
}

AuthOutcome BasicAuth::check(const std::string& authorization, const std::string& peer) {
  // "Basic dXNlcjpwYXNz" (the scheme is case-insensitive, RFC 7617)
  if (authorization.size() < 6) return AuthOutcome::kDenied;
  std::string scheme = ascii_lower(authorization.substr(0, 6));
  if (scheme != "basic ") return AuthOutcome::kDenied;
  size_t b = authorization.find_first_not_of(' ', 6);
  std::string decoded;
  if (b == std::string::npos || !base64_decode(authorization.substr(b), &decoded)) {
    return AuthOutcome::kDenied;
  }
  size_t colon = decoded.find(':');
  if (colon == std::string::npos) return AuthOutcome::kDenied;
  const std::string user = decoded.substr(0, colon);
  const std::string pass = decoded.substr(colon + 1);

  auto it = users_.find(user);
  // An unknown user costs a bcrypt too, as dear as a known one's, so timing
  // does not tell which names exist.
  const std::string& hash = it == users_.end() ? dummy_hash_ : it->second;
  const std::string key = sha256_bytes(user + '\0' + pass + '\0' + hash);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (it != users_.end() && good_.count(key)) return AuthOutcome::kAllowed;
  }
  // A try is taken before the bcrypt (so that many connections of one peer
  // cannot all pass at once) and given back when it succeeds.
  if (!take_try(peer)) return AuthOutcome::kThrottled;
  bool ok = bcrypt_matches(pass, hash) && it != users_.end();
  if (ok) {
    give_back_try(peer);
    std::lock_guard<std::mutex> lock(mu_);
    if (good_.size() >= 1024) good_.clear();  // bounded: a few users, a few passwords
    good_.insert(key);
  }
  return ok ? AuthOutcome::kAllowed : AuthOutcome::kDenied;
}

}  // namespace gd
