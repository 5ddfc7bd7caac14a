// The live state of `gpudoctor serve`, without threads or I/O: the loops
// (daemon.cc) record into it, the HTTP handlers take a consistent copy
// (an ExporterView) out of it. One mutex guards it; it is held only to
// swap or copy shared pointers and small counters, never while rendering,
// sampling or checking, so a scrape never waits on NVML.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "history/reader.h"
#include "probe/sampler.h"
#include "serve/exporter_state.h"
#include "serve/recovery.h"

namespace gd {

// Whether a sample is to be marked stale at now_ms: none yet, the latest
// attempt failed, or the last good one is older than two intervals.
bool sample_is_stale(const SampleState& s, int64_t now_ms, double interval_s);

// Xid events of a kernel log by (PCI bus id or "", code), each occurrence
// counted (KernelEvent::count of a folded event).
std::map<std::pair<std::string, int>, uint64_t> count_xids(const KernelLogInfo& log);

struct SamplerCounters {
  uint64_t attempts = 0;
  uint64_t failures = 0;
  uint64_t restarts = 0;
};

// A stored diag run as the exporter keeps it: the findings as Findings
// (check "diag"), the JSON parsed into the run and its figures (a JSON that
// does not parse leaves run empty and says why in parse_error).
DiagState diag_state_from_stored(const StoredDiagRun& r);

// A report's JSON (render_json) with the diag run's findings added as
// "last_diag": {"time", "level", "verdict", "findings"} (docs/serve.md);
// the JSON unchanged when it does not parse.
std::string report_json_with_diag(const std::string& report_json, const DiagState& d);

class DaemonState {
 public:
  DaemonState(std::string hostname, int64_t started_unix_ms, double interval_s,
              double check_interval_s, double diag_max_age_s = 7 * 86400.0, FlapOptions flap = {});

  // One sampling attempt: a good one replaces the sample; a failed one
  // keeps the last good sample (served, marked stale) and records why.
  void record_sample(const SampleResult& r, int64_t now_unix_ms, const SamplerCounters& c);
  // One finished check and its report's JSON. The first one seeds the Xid
  // counters from its kernel-log events of this boot, so the counters start
  // at what the log already holds and only the follower adds to them.
  // It also feeds the recovery gate (serve/recovery.h): reprobes_due()
  // then lists the GPUs whose cause has cleared.
  void record_check(std::shared_ptr<const CheckState> check, std::string report_json);
  // Sampler children started after the first, as of the last sample.
  uint64_t sampler_restarts() const;
  // The GPUs the last check found cleared, due a re-probe (bus ids).
  std::vector<std::string> reprobes_due() const;
  // A re-probe's result; true when it made the GPU healthy again (the
  // caller then restarts the sampler child, of this generation: children
  // started after the first).
  bool record_reprobe(const ReprobeResult& r, uint64_t sampler_generation, int64_t now_unix_ms);
  // A kernel-log event as the follower decoded it (Xids are counted).
  void record_kernel_event(const KernelEvent& e);
  void set_kernel_log_source(std::string source);
  void set_history_ok(bool ok);
  // The gate's cause for a GPU it holds as flapping ("flapping: back 3
  // times within 10m; held 5m without a loss"); "" otherwise.
  std::string flapping_cause(const std::string& bus_id) const;
  // The newest diag run in the history (null: none).
  void record_diag(std::shared_ptr<const DiagState> diag);
  // The id of the diag run held (0: none), for "has a newer one come".
  int64_t diag_id() const;

  // The state at now_ms, staleness computed.
  ExporterView view(int64_t now_unix_ms) const;
  // The last report's JSON; null before the first check.
  std::shared_ptr<const std::string> report_json() const;
  // What /report.json serves at now_ms: the last report's JSON, with the
  // diag run's findings while the run is at most diag_max_age_s old; null
  // before the first check.
  std::shared_ptr<const std::string> served_report_json(int64_t now_unix_ms) const;
  bool xids_seeded() const;

  // Loop liveness for /healthz: each loop beats once per round.
  void beat_sampler(int64_t now_unix_ms);
  void beat_check(int64_t now_unix_ms);
  // "" when healthy; else why not, one line ("the last NVML sample is
  // stale: timeout after 10.0 s in nvmlDeviceGetTemperature (GPU 3)").
  // max_*_silence_ms: how long a loop may go without a beat.
  std::string unhealthy_reason(int64_t now_unix_ms, int64_t max_sampler_silence_ms,
                               int64_t max_check_silence_ms) const;

 private:
  mutable std::mutex mu_;
  std::string hostname_;
  int64_t started_ms_;
  double interval_s_;
  double check_interval_s_;
  double diag_max_age_s_;
  std::shared_ptr<const SampleState> sample_;
  std::shared_ptr<const CheckState> check_;
  std::shared_ptr<const std::string> report_json_;
  std::shared_ptr<const DiagState> diag_;
  // report_json_ with diag_'s findings; rebuilt when either changes.
  std::shared_ptr<const std::string> report_json_diag_;
  std::map<std::pair<std::string, int>, uint64_t> xid_counts_;
  bool seeded_ = false;
  std::string kernel_log_source_;
  bool history_ok_ = true;
  int64_t sampler_beat_ms_ = 0;
  int64_t check_beat_ms_ = 0;
  RecoveryGate gate_;
  std::vector<std::string> reprobes_due_;
};

}  // namespace gd
