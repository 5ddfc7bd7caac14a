#include "report/finding.h"

namespace gd {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kOk:
      return "ok";
    case Severity::kInfo:
      return "info";
    case Severity::kWarn:
      return "warn";
    case Severity::kFail:
      return "fail";
    case Severity::kNotApplicable:
      return "n/a";
  }
  return "?";
}

int exit_code_for(Severity verdict) {
  switch (verdict) {
    case Severity::kWarn:
      return 1;
    case Severity::kFail:
      return 2;
    default:
      return 0;
  }
}

}  // namespace gd
