// The human report of `gpudoctor diag` (docs/diag.md): a header with the
// GPUs and level, each GPU's measured figures against the expected floor and
// its peers, the peer-to-peer matrix, NCCL's sizes and the scaling line,
// then the findings as `gpudoctor check` prints them. A sink: it judges
// nothing itself (diag/evaluate.h did).
#pragma once

#include <string>
#include <vector>

#include "checks/finding.h"
#include "diag/evaluate.h"
#include "diag/format.h"
#include "diag/result.h"
#include "report/render.h"

namespace gd {

// `gpus`: the GPUs asked for, in order (bus ids); the sections follow that
// order, GPUs the helper named beyond them come after. r.snapshot (may be
// null) gives nvidia-smi indices and names.
std::string render_diag_text(const Report& r, const DiagRun& run,
                             const std::vector<DiagFigure>& figures,
                             const std::vector<std::string>& gpus, const TextOptions& opt = {});

}  // namespace gd
