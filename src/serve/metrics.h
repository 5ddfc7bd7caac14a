// The Prometheus text exposition (format 0.0.4) of `gpudoctor serve`'s
// /metrics: every metric is documented in docs/metrics.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "serve/exporter_state.h"

namespace gd {

std::string render_metrics(const ExporterView& v);

// One metric family render_metrics can emit. The table is the whole list, in
// output order: tests hold docs/metrics.md, the alert rules and the Grafana
// dashboard to it.
struct MetricFamily {
  const char* name;  // "gpudoctor_gpu_temperature_celsius"
  const char* type;  // "gauge" or "counter"
  const char* help;  // the # HELP line
};
const std::vector<MetricFamily>& metric_families();

// The clock-event ("throttle") reasons exposed as
// gpudoctor_gpu_clocks_event_reason{reason}: NVML bit -> label value
// (nvidia-facts.md §4.5), in output order.
struct ClockEventReason {
  unsigned long long bit;
  const char* label;  // "hw_thermal_slowdown"
};
const std::vector<ClockEventReason>& clock_event_reasons();

// A label value as the text format wants it: backslash, double quote and
// line feed escaped (\\, \", \n); everything else as is (UTF-8 passes).
std::string escape_label_value(std::string_view v);

}  // namespace gd
