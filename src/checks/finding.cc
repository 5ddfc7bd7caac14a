#include "checks/finding.h"

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

Severity severity_from_name(std::string_view name) {
  for (Severity s : {Severity::kOk, Severity::kInfo, Severity::kWarn, Severity::kFail}) {
    if (name == severity_name(s)) return s;
  }
  return Severity::kNotApplicable;
}

bool says_something(Severity s) {
  return s == Severity::kInfo || s == Severity::kWarn || s == Severity::kFail;
}

int severity_weight(Severity s) {
  switch (s) {
    case Severity::kNotApplicable:
      return 0;
    case Severity::kOk:
      return 1;
    case Severity::kInfo:
      return 2;
    case Severity::kWarn:
      return 3;
    case Severity::kFail:
      return 4;
  }
  return 0;
}

Severity worse(Severity a, Severity b) { return severity_weight(b) > severity_weight(a) ? b : a; }

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
