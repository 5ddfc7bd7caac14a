// A DiagRun as JSON ("gpudoctor.diag/v1"): the "diag" object of
// `gpudoctor diag --json`'s report, and what the history keeps of a run.
#pragma once

#include <nlohmann/json.hpp>

#include "diag/evaluate.h"
#include "diag/result.h"
#include "util/result.h"

namespace gd {

nlohmann::json diag_run_to_json(const DiagRun& run);
// The reverse, for the history's stored runs. Error: not a gpudoctor.diag/v1
// object, or a field of the wrong type (one printable line).
Result<DiagRun> diag_run_from_json(const nlohmann::json& j);

nlohmann::json diag_figures_to_json(const std::vector<DiagFigure>& figures);
Result<std::vector<DiagFigure>> diag_figures_from_json(const nlohmann::json& j);

}  // namespace gd
