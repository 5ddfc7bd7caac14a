// Placeholder until the metrics land.
#include "report/prometheus.h"

namespace gd {

std::string render_metrics(const ExporterView&) { return ""; }

}  // namespace gd
