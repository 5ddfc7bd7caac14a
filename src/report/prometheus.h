// The Prometheus text exposition (format 0.0.4) of `gpudoctor serve`'s
// /metrics: every metric is documented in docs/metrics.md.
#pragma once

#include <string>

#include "serve/exporter_state.h"

namespace gd {

std::string render_metrics(const ExporterView& v);

}  // namespace gd
