// Small pieces unit tests share: a temporary directory removed with its
// contents, findings and reports built in one line, and the lines of a
// Prometheus text that hold a needle.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/finding.h"

namespace gd::testing_util {

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

}  // namespace gd::testing_util
