// Reading the history (`gpudoctor history`): a read-only connection that
// never blocks `gpudoctor serve` writing the same file (WAL readers see the
// last commit and wait for no one), and the changes between reports.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "history/db.h"
#include "util/result.h"

namespace gd {

struct StoredFinding {
  std::string id;
  std::string severity;           // "info", "warn", "fail"
  std::vector<std::string> gpus;  // PCI bus ids
  std::string summary;
};

struct StoredReport {
  int64_t id = 0;
  int64_t time_ms = 0;  // unix ms
  std::string verdict;
  std::vector<StoredFinding> findings;  // in the order the report had them
};

// A finding of a stored `gpudoctor diag` run, with what the exporter's
// status page shows of it.
struct StoredDiagFinding {
  std::string id;
  std::string severity;  // "info", "warn", "fail"
  std::vector<std::string> gpus;
  std::string summary;
  std::vector<std::string> evidence;
  std::vector<std::string> remedy;
};

// One stored `gpudoctor diag` run (diag_runs, docs/history.md).
struct StoredDiagRun {
  int64_t id = 0;
  int64_t time_ms = 0;                      // unix ms
  int level = 0;                            // 1, 2, 3
  std::string verdict;                      // "ok", "info", "warn", "fail"
  std::vector<StoredDiagFinding> findings;  // info, warn, fail; in the run's order
  std::string diag_json;                    // {"run": ..., "figures": ...}; "" when not asked for
};

// A GPU as a stored report's JSON named it.
struct StoredGpu {
  std::string bus_id;  // "0000:17:00.0"
  std::string uuid;    // "GPU-..."; "" unknown
  std::string name;
  int nvml_index = -1;  // nvidia-smi's index; -1 unknown
  int64_t seen_ms = 0;  // the report that said so
};

// One stored run of a kernel event: its occurrences within one boot.
struct EventRun {
  std::string boot;
  std::string kind;
  std::string type;
  int code = 0;
  std::string gpu;
  std::string message;
  std::string line;
  int64_t first_seen_ms = 0;  // unix ms
  int64_t last_seen_ms = 0;
  int64_t count = 0;
};

struct ReportSpan {
  int64_t count = 0;
  int64_t first_ms = 0;
  int64_t last_ms = 0;
  std::string last_verdict;  // "" when count is 0
};

class HistoryReader {
 public:
  // Read-only. Error: one line naming the path (absent, unreadable, not a
  // gpudoctor history, another schema).
  static Result<HistoryReader> open(const std::string& path);

  // Reports with from_ms <= time <= to_ms.
  Result<ReportSpan> report_span(int64_t from_ms, int64_t to_ms);
  // The last report before ms: the baseline a window's first report is
  // compared with.
  Result<std::optional<StoredReport>> report_before(int64_t ms);
  // Reports in [from_ms, to_ms], oldest first, one at a time (a month of
  // them need not sit in memory).
  Result<bool> for_each_report(int64_t from_ms, int64_t to_ms,
                               const std::function<void(const StoredReport&)>& fn);
  // The full JSON of the report in force at ms (the last one at or before
  // it), as `gpudoctor check --json` printed it: stored whole, or rebuilt
  // from the report it was stored as a change from (history/store.h). A
  // report that said the same as the one before has that one's JSON.
  // nullopt: no report with a JSON at or before ms.
  struct JsonAt {
    int64_t id = 0;       // the report whose JSON it is
    int64_t time_ms = 0;  // unix ms
    std::string json;
  };
  Result<std::optional<JsonAt>> report_json_at(int64_t ms);
  // Every GPU the stored report JSON names, the newest report's word on
  // each, newest first.
  Result<std::vector<StoredGpu>> gpus();
  // Event runs that overlap [from_ms, to_ms], of one GPU (bus id) or all
  // (""), by first occurrence.
  Result<std::vector<EventRun>> event_runs(int64_t from_ms, int64_t to_ms, const std::string& gpu);

  // The id of the newest diag run (an index lookup: the exporter asks after
  // every check); nullopt when none is stored.
  Result<std::optional<int64_t>> latest_diag_id();
  // The newest diag run with its findings and JSON; nullopt when none.
  Result<std::optional<StoredDiagRun>> latest_diag_run();
  // Diag runs with from_ms <= time <= to_ms, oldest first, with their
  // findings; their JSON only when with_json.
  Result<std::vector<StoredDiagRun>> diag_runs(int64_t from_ms, int64_t to_ms,
                                               bool with_json = false);

 private:
  HistoryReader(std::string path, history::Db db) : path_(std::move(path)), db_(std::move(db)) {}
  Error fail(const std::string& why) const { return Error{path_ + ": " + why}; }
  Result<bool> read_findings(StoredReport* r);
  Result<bool> read_diag_findings(StoredDiagRun* r);

  std::string path_;
  history::Db db_;
};

// --- what changed ----------------------------------------------------------------

// Event runs folded per GPU and event: first and last occurrence, and the
// occurrences summed over runs (runs never overlap: the store merges them).
struct EventGroup {
  std::string gpu;
  std::string kind;
  std::string type;
  int code = 0;
  std::string message;  // of the latest run
  int64_t first_seen_ms = 0;
  int64_t last_seen_ms = 0;
  int64_t count = 0;
  int boots = 0;
};
std::vector<EventGroup> group_events(const std::vector<EventRun>& runs);

struct Change {
  enum class Kind { kVerdict, kAppeared, kCleared, kChanged, kEvent };
  Kind kind = Kind::kVerdict;
  int64_t time_ms = 0;
  std::string from;       // verdict / severity before ("" for the first report)
  std::string to;         // verdict / severity after
  StoredFinding finding;  // kAppeared, kCleared (as it last was), kChanged (as it is now)
  EventRun event;         // kEvent: a run that started
};
// What `after` says differently from `before` (nullptr: after is the first
// report ever). gpu: only findings about that bus id, and no verdicts.
void diff_reports(const StoredReport* before, const StoredReport& after, const std::string& gpu,
                  std::vector<Change>* out);

}  // namespace gd
