// Placeholder: written by the issue-6 work.
#include "diag/evaluate.h"

namespace gd {
std::vector<DiagFigure> diag_figures(const DiagRun&, const Snapshot&, const DiagThresholds&) {
  return {};
}
std::vector<Finding> evaluate_diag(const DiagRun&, const Snapshot&, const DiagThresholds&) {
  return {};
}
}  // namespace gd
