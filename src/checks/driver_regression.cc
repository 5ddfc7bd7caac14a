// driver.known-regression: the loaded driver is a build with a known
// regression (catalog/driver_regressions.cc, docs/nvidia-facts.md §14).
// When the program's own errors are at hand (explain, a wrapped run) and
// none looks like the regression, it is not the cause: ok, with the row.
// Otherwise a warning where the regression can bite (its scope: MIG,
// several GPUs), and a note where that is unknown or not so.
#include <algorithm>

#include "catalog/driver_regressions.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/ascii.h"

namespace gd {
namespace {

constexpr const char* kId = "driver.known-regression";

int gpu_count(const Snapshot& s) {
  int pci = static_cast<int>(std::count_if(
      s.pci.begin(), s.pci.end(), [](const PciDevice& d) { return d.kind == PciKind::kGpu; }));
  return std::max(pci, static_cast<int>(s.nvml.gpus.size()));
}

// nullopt when the snapshot cannot tell.
std::optional<bool> in_scope(const Snapshot& s, RegressionScope scope) {
  switch (scope) {
    case RegressionScope::kAny:
      return true;
    case RegressionScope::kMultiGpu:
      if (gpu_count(s) == 0) return std::nullopt;
      return gpu_count(s) >= 2;
    case RegressionScope::kMig: {
      bool known = false;
      for (const auto& g : s.nvml.gpus) {
        if (!g.mig_mode_current.ok()) continue;
        known = true;
        if (g.mig_mode_current.value == 1) return true;
      }
      if (known) return false;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

const char* scope_words(RegressionScope scope) {
  switch (scope) {
    case RegressionScope::kMig:
      return "MIG-enabled GPUs";
    case RegressionScope::kMultiGpu:
      return "machines with two or more GPUs";
    case RegressionScope::kAny:
      break;
  }
  return "every machine";
}

// The pasted or reported lines that look like the regression; nullopt when
// no error of the program's is at hand to compare with. Pasted text is
// always the problem at hand, whether or not explain knew its lines.
std::optional<std::vector<std::string>> symptom_lines(const Snapshot& s,
                                                      const DriverRegression& r) {
  if (!from_pasted_text(s) && s.reported.empty() && s.kernel_log.events.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& e : s.reported) {
    if (shows_regression(r, ascii_lower(e.line))) out.push_back(line_ref(e));
  }
  for (const auto& e : s.kernel_log.events) {
    if (shows_regression(r, ascii_lower(e.line))) out.push_back("kernel log: " + e.line);
  }
  return out;
}

Finding regression_finding(const std::string& version, const std::string& from,
                           const DriverRegression& r, Severity sev, const std::string& why) {
  Finding f =
      make_finding(kId, sev, "Driver " + version + " has a known regression: " + r.what + ".");
  f.evidence.push_back("driver " + version + " (" + from + ")");
  f.evidence.push_back("affects " + std::string(scope_words(r.scope)) + "; fixed in " + r.fixed);
  if (!why.empty()) f.evidence.push_back(why);
  f.evidence.push_back("source: " + std::string(r.source));
  f.remedy.push_back("install driver " + std::string(r.fixed) +
                     " or newer (same branch where the source names one), then reboot");
  return f;
}

}  // namespace

std::vector<Finding> check_driver_regression(const Snapshot& s, const Config&) {
  std::string from;
  std::string version = module_version(s, &from);
  auto v = parse_driver_version(version);
  if (!v) {
    return not_applicable(kId,
                          "The driver version is not known: neither /proc/driver/nvidia/version "
                          "nor NVML named one.");
  }
  auto rows = regressions_for(*v);
  if (rows.empty()) {
    return all_ok(kId, "No known regression in the catalog for driver " + version + ".");
  }
  std::vector<Finding> out;
  for (const DriverRegression* r : rows) {
    auto lines = symptom_lines(s, *r);
    if (lines && lines->empty()) {
      out.push_back(regression_finding(version, from, *r, Severity::kOk,
                                       "the errors at hand do not look like it"));
      continue;
    }
    std::optional<bool> scope = in_scope(s, r->scope);
    if (scope != true) {
      out.push_back(
          regression_finding(version, from, *r, Severity::kInfo,
                             std::string(scope.has_value() ? "this machine is outside it: "
                                                           : "not known here whether it has ") +
                                 scope_words(r->scope)));
      continue;
    }
    Finding f = regression_finding(version, from, *r, Severity::kWarn, "");
    if (lines) {
      for (auto& l : *lines) f.evidence.push_back(l);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gd
