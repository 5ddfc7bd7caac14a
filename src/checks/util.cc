#include "checks/util.h"

namespace gd {

Finding make_finding(std::string id, Severity severity, std::string summary) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.summary = std::move(summary);
  return f;
}

std::vector<Finding> not_applicable(std::string id, std::string why) {
  return {make_finding(std::move(id), Severity::kNotApplicable, std::move(why))};
}

std::vector<Finding> all_ok(std::string id, std::string summary) {
  return {make_finding(std::move(id), Severity::kOk, std::move(summary))};
}

std::string line_ref(const ReportedError& r) {
  return "line " + std::to_string(r.line_no) + ": " + r.line.substr(0, 300);
}

}  // namespace gd
