// `gpudoctor diff` reads reports as well as snapshots: what `gpudoctor serve`
// serves at /report.json and `gpudoctor check --json` prints
// (gpudoctor.report/v1). A report carries the node's name and time, its
// GPUs (bus id, name, UUID, memory) and its findings, not the machine
// itself: enough for the verdict, the findings and the GPU models, compared
// between reports (docs/diff.md).
#pragma once

#include <nlohmann/json.hpp>

#include "checks/finding.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

inline constexpr const char* kReportSchema = "gpudoctor.report/v1";

struct ReportInput {
  Snapshot snapshot;  // hostname, taken_at, nvml.gpus from the report's gpus[]
  Report report;      // verdict and findings as the report gave them
};

// Error (one line, naming the field): not a gpudoctor.report/v1 document,
// or a field of the wrong type.
Result<ReportInput> report_input_from_json(const nlohmann::json& j);

}  // namespace gd
