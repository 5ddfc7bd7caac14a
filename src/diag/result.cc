#include "diag/result.h"

namespace gd {

const char* diag_status_name(DiagStatus s) {
  switch (s) {
    case DiagStatus::kPass:
      return "pass";
    case DiagStatus::kFail:
      return "fail";
    case DiagStatus::kError:
      return "error";
    case DiagStatus::kSkip:
      return "skip";
  }
  return "error";
}

}  // namespace gd
