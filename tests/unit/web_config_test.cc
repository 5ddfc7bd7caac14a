// The exporter's web config (serve/web_config.h): the toolkit's YAML subset,
// its errors, relative paths, bcrypt and the basic-auth cache.
#include "serve/web_config.h"

#include <crypt.h>
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gd {
namespace {

std::string bcrypt_hash(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2y$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt)) {
    return "";
  }
  crypt_data data{};
  const char* h = crypt_rn(password.c_str(), salt, &data, sizeof data);
  return h ? h : "";
}

// "Basic " + base64(user:pass), computed by hand for the test's few values.
std::string basic(const std::string& user_pass) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < user_pass.size(); i += 3) {
    uint32_t n = (uint8_t(user_pass[i]) << 16) | (uint8_t(user_pass[i + 1]) << 8) |
                 uint8_t(user_pass[i + 2]);
    for (int s : {18, 12, 6, 0}) out += k[(n >> s) & 63];
  }
  if (i + 1 == user_pass.size()) {
    uint32_t n = uint8_t(user_pass[i]) << 16;
    out += std::string{k[(n >> 18) & 63], k[(n >> 12) & 63]} + "==";
  } else if (i + 2 == user_pass.size()) {
    uint32_t n = (uint8_t(user_pass[i]) << 16) | (uint8_t(user_pass[i + 1]) << 8);
    out += std::string{k[(n >> 18) & 63], k[(n >> 12) & 63], k[(n >> 6) & 63]} + "=";
  }
  return "Basic " + out;
}

TEST(WebConfig, FullExample) {
  const std::string hash = bcrypt_hash("pw", 4);
  auto wc = parse_web_config(
      "tls_server_config:\n"
      "  cert_file: tls/server.crt\n"
      "  key_file: /etc/gpudoctor/server.key\n"
      "  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: ca.crt\n"
      "  min_version: TLS13\n"
      "basic_auth_users:\n"
      "  prometheus: " +
          hash + "\n",
      "/etc/gpudoctor");
  ASSERT_TRUE(wc.ok()) << wc.error();
  EXPECT_TRUE(wc->tls);
  EXPECT_EQ(wc->tls_server.cert_file, "/etc/gpudoctor/tls/server.crt");
  EXPECT_EQ(wc->tls_server.key_file, "/etc/gpudoctor/server.key");
  EXPECT_EQ(wc->tls_server.client_ca_file, "/etc/gpudoctor/ca.crt");
  EXPECT_EQ(wc->tls_server.client_auth_type, "RequireAndVerifyClientCert");
  EXPECT_EQ(wc->tls_server.min_version, "TLS13");
  ASSERT_EQ(wc->basic_auth_users.size(), 1u);
  EXPECT_EQ(wc->basic_auth_users.at("prometheus"), hash);
}

TEST(WebConfig, EmptyMeansPlainHttp) {
  auto wc = parse_web_config("", "");
  ASSERT_TRUE(wc.ok()) << wc.error();
  EXPECT_FALSE(wc->tls);
  EXPECT_TRUE(wc->basic_auth_users.empty());
  wc = parse_web_config("# only a comment\n", "");
  ASSERT_TRUE(wc.ok()) << wc.error();
}

TEST(WebConfig, Errors) {
  const std::string h = "$2y$04$0123456789012345678901uIcX9zW6oHxJ8VF6lyK/V4ZAF2m5rqP";
  struct Case {
    std::string yaml;
    std::string error;
  } cases[] = {
      {"tls_server_confg:\n  cert_file: a\n",
       "unknown key tls_server_confg (expected tls_server_config, basic_auth_users)"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  certfile: c\n",
       "unknown key tls_server_config.certfile"},
      {"tls_server_config:\n  key_file: b\n", "tls_server_config needs cert_file"},
      {"tls_server_config:\n  cert_file: a\n", "tls_server_config needs key_file"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Always\n",
       "tls_server_config.client_auth_type 'Always' is not one of NoClientCert, "
       "RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
       "RequireAndVerifyClientCert"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
       "RequireAndVerifyClientCert\n",
       "tls_server_config.client_auth_type RequireAndVerifyClientCert needs client_ca_file"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n",
       "tls_server_config.min_version TLS10 is refused: TLS 1.0 and 1.1 are obsolete (use TLS12 "
       "or TLS13)"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
       "tls_server_config.cipher_suites is not supported by gpudoctor (supported: cert_file, "
       "key_file, client_auth_type, client_ca_file, min_version)"},
      {"tls_server_config:\n  cert_file: [a]\n  key_file: b\n",
       "tls_server_config.cert_file must be a string"},
      {"basic_auth_users:\n  alice: secret\n",
       "basic_auth_users.alice is not a bcrypt hash ($2y$..., 60 characters; make one with "
       "htpasswd -nBC 10 \"\" | tr -d ':\\n')"},
      {"basic_auth_users: [alice]\n",
       "basic_auth_users must be a mapping of user name to bcrypt hash"},
      {"basic_auth_users:\n  \"a:b\": " + h + "\n",
       "basic_auth_users: user name 'a:b' is empty or has a ':'"},
      {"http_server_config:\n  http2: false\n",
       "http_server_config is not supported by gpudoctor (it serves HTTP/1.1)"},
      {"- a\n- b\n", "expected a mapping at the top"},
  };
  for (const Case& c : cases) {
    auto wc = parse_web_config(c.yaml, "");
    ASSERT_FALSE(wc.ok()) << c.yaml;
    EXPECT_EQ(wc.error(), c.error) << c.yaml;
  }
  auto wc = parse_web_config("tls_server_config: {cert_file: a\n", "");
  ASSERT_FALSE(wc.ok());
  EXPECT_EQ(wc.error().rfind("not valid YAML: ", 0), 0u) << wc.error();
}

TEST(WebConfig, LoadResolvesAgainstTheFilesDirectory) {
  char tmpl[] = "/tmp/gd-webconfig-test.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/web.yml") << "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n";
  auto wc = load_web_config(dir + "/web.yml");
  ASSERT_TRUE(wc.ok()) << wc.error();
  EXPECT_EQ(wc->tls_server.cert_file, dir + "/c.pem");
  auto missing = load_web_config(dir + "/nope.yml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "cannot read web config " + dir + "/nope.yml: No such file or directory");
  std::ofstream(dir + "/bad.yml") << "tls_server_config:\n  cert_file: c.pem\n";
  auto bad = load_web_config(dir + "/bad.yml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "web config " + dir + "/bad.yml: tls_server_config needs key_file");
  std::filesystem::remove_all(dir);
}

TEST(WebConfig, TheDeployExampleIsValid) {
  auto wc = load_web_config(std::string(GD_SOURCE_DIR) + "/deploy/web-config.example.yml");
  ASSERT_TRUE(wc.ok()) << wc.error();
  EXPECT_TRUE(wc->tls);
  EXPECT_EQ(wc->tls_server.cert_file, std::string(GD_SOURCE_DIR) + "/deploy/server.crt");
  ASSERT_EQ(wc->basic_auth_users.count("prometheus"), 1u);
  EXPECT_TRUE(bcrypt_matches("change-me", wc->basic_auth_users.at("prometheus")));
}

TEST(Bcrypt, MatchesOnlyTheRightPassword) {
  const std::string h = bcrypt_hash("correct horse", 4);
  ASSERT_EQ(h.size(), 60u) << h;
  EXPECT_TRUE(bcrypt_matches("correct horse", h));
  EXPECT_FALSE(bcrypt_matches("correct horsE", h));
  EXPECT_FALSE(bcrypt_matches("", h));
  EXPECT_FALSE(bcrypt_matches(std::string("correct horse\0x", 15), h));
  EXPECT_FALSE(bcrypt_matches("correct horse", "not a hash"));
  // A $2b$ hash, as Python's bcrypt and Go write them:
  // python3 -c 'import crypt; print(crypt.crypt("gpudoctor", "$2b$04$abcdefghijklmnopqrstuu"))'
  EXPECT_TRUE(
      bcrypt_matches("gpudoctor", "$2b$04$abcdefghijklmnopqrstuug6YqZRt9sJerv2bJZq42nabyjeG5D5y"));
}

TEST(BasicAuth, RightWrongMissingAndMalformed) {
  BasicAuth auth({{"prometheus", bcrypt_hash("s3cret", 4)}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.allowed(basic("prometheus:s3cret")));
  EXPECT_FALSE(auth.allowed(basic("prometheus:s3cre")));
  EXPECT_FALSE(auth.allowed(basic("prometheus:s3cret ")));
  EXPECT_FALSE(auth.allowed(basic("grafana:s3cret")));
  EXPECT_FALSE(auth.allowed(basic("prometheus")));  // no colon
  EXPECT_FALSE(auth.allowed(""));
  EXPECT_FALSE(auth.allowed("Basic"));
  EXPECT_FALSE(auth.allowed("Basic ===="));
  EXPECT_FALSE(auth.allowed("Basic cHJvbWV0aGV1czpzM2NyZXQ"));  // missing padding
  EXPECT_FALSE(auth.allowed("Digest cHJvbWV0aGV1czpzM2NyZXQ="));
  // A password with a colon: only the first colon splits.
  BasicAuth colon({{"a", bcrypt_hash("b:c", 4)}});
  EXPECT_TRUE(colon.allowed(basic("a:b:c")));
  EXPECT_FALSE(BasicAuth({}).enabled());
}

TEST(BasicAuth, CachesSuccessfulChecks) {
  // Cost 10 (htpasswd's default): about 50 ms per bcrypt; the cached check
  // must be much faster than that.
  BasicAuth auth({{"prometheus", bcrypt_hash("s3cret", 10)}});
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  ASSERT_TRUE(auth.allowed(basic("prometheus:s3cret")));
  auto first = Clock::now() - t0;
  t0 = Clock::now();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(auth.allowed(basic("prometheus:s3cret")));
  auto hundred = Clock::now() - t0;
  EXPECT_LT(hundred, first) << "100 cached checks took longer than one bcrypt";
  // A wrong password is not cached as good.
  EXPECT_FALSE(auth.allowed(basic("prometheus:s3cre")));
}

// CPU time of the calling thread, in seconds: what a check costs, however
// loaded the machine (a wall clock would count the waits for a core).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

TEST(BasicAuth, AnUnknownUserCostsWhatAKnownUserCosts) {
  // Cost 6, not 10 (the fixed fallback hash's cost before issue 33, which
  // made an unknown user 16 times dearer than this known one).
  BasicAuth auth({{"prometheus", bcrypt_hash("s3cret", 6)}}, AuthLimits{0, 0});
  auto cost = [&](const std::string& user_pass) {
    const double t0 = thread_cpu_seconds();
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(auth.allowed(basic(user_pass)));
    return (thread_cpu_seconds() - t0) / 20;
  };
  const std::string reference = bcrypt_hash("other", 6);
  const double t0 = thread_cpu_seconds();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(bcrypt_matches("s3cret", reference));
  const double one_bcrypt = (thread_cpu_seconds() - t0) / 20;
  const double known = cost("prometheus:wrong");
  const double unknown = cost("nobody:wrong");
  // Both pay a bcrypt of the user's cost, and no more: a generous factor.
  EXPECT_GE(known, one_bcrypt / 2) << known << " s against " << one_bcrypt << " s";
  EXPECT_GE(unknown, one_bcrypt / 2) << unknown << " s against " << one_bcrypt << " s";
  EXPECT_LE(unknown, known * 2.5) << unknown << " s against " << known << " s";
  EXPECT_LE(known, unknown * 2.5) << known << " s against " << unknown << " s";
}

TEST(BasicAuth, FailuresAreLimitedPerPeer) {
  BasicAuth auth({{"prometheus", bcrypt_hash("s3cret", 4)}}, AuthLimits{2, 3});
  const std::string good = basic("prometheus:s3cret");
  const std::string bad = basic("prometheus:wrong");
  EXPECT_EQ(auth.check(good, "192.0.2.1"), AuthOutcome::kAllowed);  // cached from now on
  for (int i = 0; i < 3; ++i) EXPECT_EQ(auth.check(bad, "192.0.2.1"), AuthOutcome::kDenied) << i;
  // The peer's allowance is spent: no bcrypt, whoever the user.
  EXPECT_EQ(auth.check(bad, "192.0.2.1"), AuthOutcome::kThrottled);
  EXPECT_EQ(auth.check(basic("nobody:x"), "192.0.2.1"), AuthOutcome::kThrottled);
  // Credentials known good still pass; another peer has its own allowance.
  EXPECT_EQ(auth.check(good, "192.0.2.1"), AuthOutcome::kAllowed);
  EXPECT_EQ(auth.check(bad, "192.0.2.2"), AuthOutcome::kDenied);
  // No credentials, or malformed ones, cost nothing and are never throttled.
  EXPECT_EQ(auth.check("", "192.0.2.1"), AuthOutcome::kDenied);
  // Two a second come back.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(auth.check(bad, "192.0.2.1"), AuthOutcome::kDenied);
}

}  // namespace
}  // namespace gd
