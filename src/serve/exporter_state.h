// What `gpudoctor serve` knows at one moment, as the sinks see it: the last
// NVML sample, the last full check, the kernel-log counters and how each
// probe went. The daemon (src/serve/daemon.cc) owns the live state and hands
// the renderers (serve/metrics.h, serve/status_page.h) a consistent copy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checks/finding.h"
#include "diag/evaluate.h"
#include "diag/result.h"
#include "serve/recovery.h"
#include "snapshot/snapshot.h"

namespace gd {

// The long-lived NVML sampler (src/probe/sampler.h).
struct SampleState {
  bool have_sample = false;  // false until the first good sample
  NvmlInfo nvml;             // the last good sample (identity + health per GPU)
  int64_t taken_unix_ms = 0;
  double duration_ms = 0;  // how long the last good sample took
  // The latest attempt failed, or the last good sample is older than two
  // intervals: the values are served but marked stale.
  bool stale = true;
  std::string last_error;  // why the latest attempt failed ("" when it did not)
  uint64_t attempts = 0;
  uint64_t failures = 0;
  uint64_t restarts = 0;  // sampler children started after the first
};

// The last full check (snapshot + report), run every --check-interval.
struct CheckState {
  std::shared_ptr<const Snapshot> snapshot;  // report.snapshot points into it
  Report report;
  int64_t finished_unix_ms = 0;
  double duration_ms = 0;
  uint64_t runs = 0;
};

// The newest `gpudoctor diag` run in the history (history/reader.h), read
// after each check; parsed once per run.
struct DiagState {
  int64_t id = 0;  // diag_runs.id
  int64_t time_unix_ms = 0;
  int level = 0;
  Severity verdict = Severity::kOk;
  // Those that say something (info, warn, fail), with evidence and remedy;
  // check = "diag".
  std::vector<Finding> findings;
  // The measurements; nullopt when the stored JSON did not parse
  // (parse_error says why): the verdict and findings stand without them.
  std::optional<DiagRun> run;
  std::vector<DiagFigure> figures;
  std::string parse_error;
};

// Whether a diag run still counts as news at now_ms: its findings join the
// exporter's while it is at most max_age_s old (gpudoctor serve
// --diag-max-age).
inline bool diag_is_current(const DiagState& d, int64_t now_unix_ms, double max_age_s) {
  return static_cast<double>(now_unix_ms - d.time_unix_ms) <= max_age_s * 1000;
}

struct ExporterView {
  std::string hostname;
  std::string version;  // GD_VERSION
  int64_t now_unix_ms = 0;
  int64_t started_unix_ms = 0;
  double interval_s = 15;
  double check_interval_s = 60;
  SampleState sample;
  std::shared_ptr<const CheckState> check;  // null until the first check finished
  // Kernel-log events seen this boot, by (PCI bus id or "", Xid code).
  std::map<std::pair<std::string, int>, uint64_t> xid_counts;
  std::string kernel_log_source;  // "" when the log cannot be read
  bool history_ok = true;         // the last history write succeeded (or history is off)
  // The newest diag run in the history; null when none (or no history).
  std::shared_ptr<const DiagState> diag;
  double diag_max_age_s = 7 * 86400.0;
  // The recovery gate's view of every GPU it has seen (serve/recovery.h).
  std::vector<GpuHealth> gpu_health;
};

}  // namespace gd
