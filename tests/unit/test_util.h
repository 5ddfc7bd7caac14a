// Small pieces unit tests share: a temporary directory removed with its
// contents, findings and reports built in one line, every check run over a
// snapshot, and the lines of a Prometheus text that hold a needle.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "checks/runner.h"

namespace gd::testing_util {

// How much longer a deadline a test that races a child process gives it in a
// sanitized build: ASan and UBSan run those children several times slower,
// and CI runs the suite on two cores alongside other tests. The plain build
// keeps the tight figures the docs promise.
#if defined(__SANITIZE_ADDRESS__)
#define GD_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GD_TEST_SANITIZED 1
#endif
#endif
#ifdef GD_TEST_SANITIZED
inline constexpr double kTimeScale = 3.0;
#else
inline constexpr double kTimeScale = 1.0;
#endif

// Seconds as the tools print them in their timeout messages ("1.5").
inline std::string tenths(double seconds) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << seconds;
  return o.str();
}

// A fresh /tmp/gd-<tag>-XXXXXX, removed (with all it holds) on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "test") {
    std::string tmpl = "/tmp/gd-" + tag + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline Finding make_finding(const std::string& id, Severity s, std::vector<std::string> gpus = {},
                            std::string summary = "summary") {
  Finding f;
  f.id = id;
  f.severity = s;
  f.gpus = std::move(gpus);
  f.summary = std::move(summary);
  return f;
}

// The findings with the worst of their severities as the verdict.
inline Report make_report(std::vector<Finding> fs) {
  Report r;
  for (const Finding& f : fs) r.verdict = worse(r.verdict, f.severity);
  r.findings = std::move(fs);
  return r;
}

// The sample lines of a Prometheus text (not # HELP / # TYPE) that contain
// needle.
inline std::vector<std::string> lines_with(const std::string& text, std::string_view needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('#', 0) == 0) continue;
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

// Every check run over s with the default config, as `gpudoctor check`
// runs them.
inline Report checked(const Snapshot& s) {
  auto checks = select_checks({}, {});
  EXPECT_TRUE(checks.ok());
  return run_checks(s, Config{}, *checks);
}

}  // namespace gd::testing_util
