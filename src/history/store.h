// The history: an SQLite database (WAL) of check reports and decoded
// kernel events, with retention. `gpudoctor serve` writes it; `gpudoctor
// history` reads it (history/reader.h). Every write is one transaction,
// committed with the WAL fsynced (synchronous=FULL), so a kill -9 at any
// moment loses nothing committed and leaves a readable database; so does a
// power loss (docs/history.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "util/result.h"

namespace gd {

// Where the history lives when --history is not given: root
// /var/lib/gpudoctor/history.db; anyone else $XDG_STATE_HOME/gpudoctor/
// history.db, else ~/.local/state/gpudoctor/history.db.
std::string default_history_path();

// A report's JSON is stored whole again after this long even when nothing
// changed (ms), so the GPUs' identities stay at hand; in between, reports
// that say the same as the previous one keep only their verdict and
// findings, and reports that say something else keep their JSON as the
// change (a JSON Patch) from the last one stored whole, when that is under
// half the report (docs/history.md). Reading any report back is then one
// full JSON and at most one patch.
inline constexpr int64_t kReportJsonEveryMs = 3600 * 1000;

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // One report: its verdict, each finding that says something (info, warn,
  // fail: id, severity, GPUs, summary) and the report JSON, at unix_ms.
  virtual Result<bool> add_report(int64_t unix_ms, const Report& r,
                                  std::string_view report_json) = 0;
  // Kernel events as decoded (kernlog), of this boot (the boot_id given to
  // open_history). Pass the events folded over the whole log, as the snapshot's
  // kernel_log.events are, not a --since window. An event already stored
  // (same boot, kind, type, code, GPU, first occurrence) is updated, not
  // duplicated; one whose first occurrence moved later within the last
  // stored run (the kernel's ring buffer wrapped) continues that run.
  // Wall times come from unix_ms and each event's age_s. Returns how many
  // rows were new.
  virtual Result<int> add_events(int64_t unix_ms, const std::vector<KernelEvent>& events) = 0;
  // The same for the events of a given boot (tests, recorded logs).
  virtual Result<int> add_boot_events(int64_t unix_ms, std::string_view boot,
                                      const std::vector<KernelEvent>& events) = 0;
  // One `gpudoctor diag` run (docs/diag.md): its verdict, the findings that
  // say something (as add_report, with their evidence and remedy) and its
  // JSON ({"run": ..., "figures": ...}, diag/json.h), always stored. Kept
  // apart from the check reports, so a diag finding never reads as
  // "cleared" by the next check. Error: diag_json without an integer
  // run.level, or the database's.
  virtual Result<bool> add_diag(int64_t unix_ms, const Report& r, std::string_view diag_json) {
    (void)unix_ms, (void)r, (void)diag_json;
    return Error{"this history keeps no diag runs"};
  }
  // Drops reports and diag runs (with their findings) older than
  // cutoff_unix_ms, and events last seen before it; returns rows removed
  // (reports + diag runs + events).
  virtual Result<int> prune(int64_t cutoff_unix_ms) = 0;
  // SQLite's consistency check of the file (history::quick_check), asked
  // after a write failed. Error: the file is damaged, in one line.
  virtual Result<bool> check_intact() = 0;
  // "" while the path still names the file this store opened (same device
  // and inode); else what happened to it ("moved or deleted", "replaced by
  // another file").
  // An SQLite connection keeps writing into the file it opened, so a
  // history moved or deleted under the writer would go on, unseen, in an
  // inode no one can find: the writer asks before each write and opens the
  // path again.
  virtual std::string replaced() const { return ""; }
  // After replaced(): writes what the WAL holds into the file this store
  // opened (a moved file keeps every commit), closes it, and, where the
  // path names no file, removes the -wal and -shm left there: they belong
  // to the old file, and SQLite would read them into a new one at the path
  // ("disk I/O error"). The store is of no use afterwards.
  virtual void close_replaced() {}
};

// Opens (creating the file and its directory when `create`) and migrates
// the schema. Error: unreadable, not a gpudoctor history, newer schema.
// boot_id: the running boot's (boot_id_or_btime, probe/rootfs.h), which
// keeps kernel events of different boots apart: their kernel log times all
// restart at 0. The caller reads it through RootFs. report_patches false:
// every changed report's JSON is stored whole, as before schema 3 (the
// baseline of bench/history_flap.py).
Result<std::unique_ptr<HistoryStore>> open_history(const std::string& path, bool create,
                                                   std::string boot_id, bool report_patches = true);

}  // namespace gd
