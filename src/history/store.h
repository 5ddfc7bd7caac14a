// The history: an SQLite database (WAL) of check reports and decoded kernel
// events, with retention. `gpudoctor serve` writes it; `gpudoctor history`
// reads it. Every write is one transaction, so a kill -9 at any moment
// loses nothing committed and leaves a readable database (docs/history.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/finding.h"
#include "util/result.h"

namespace gd {

// Where the history lives when --history/--db is not given: root
// /var/lib/gpudoctor/history.db; anyone else $XDG_STATE_HOME/gpudoctor/
// history.db, else ~/.local/state/gpudoctor/history.db.
std::string default_history_path();

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // One report: its verdict, each finding (id, severity, GPUs, summary) and
  // the report JSON, at unix_ms.
  virtual Result<bool> add_report(int64_t unix_ms, const Report& r,
                                  std::string_view report_json) = 0;
  // Kernel events as decoded (kernlog). An event already stored (same boot,
  // kind, code, GPU, first occurrence) is updated, not duplicated. Returns
  // how many rows were new.
  virtual Result<int> add_events(int64_t unix_ms, const std::vector<KernelEvent>& events) = 0;
  // Drops reports and events older than cutoff_unix_ms; returns rows removed.
  virtual Result<int> prune(int64_t cutoff_unix_ms) = 0;
};

// Opens (creating the file and its directory when `create`) and migrates
// the schema. Error: unreadable, not a gpudoctor history, newer schema.
Result<std::unique_ptr<HistoryStore>> open_history(const std::string& path, bool create);

}  // namespace gd
