// Placeholder: written by the issue-6 work.
#include "diag/json.h"

namespace gd {
nlohmann::json diag_run_to_json(const DiagRun&) { return nlohmann::json::object(); }
Result<DiagRun> diag_run_from_json(const nlohmann::json&) { return Error{"not implemented"}; }
nlohmann::json diag_figures_to_json(const std::vector<DiagFigure>&) { return nlohmann::json::array(); }
Result<std::vector<DiagFigure>> diag_figures_from_json(const nlohmann::json&) {
  return Error{"not implemented"};
}
}  // namespace gd
