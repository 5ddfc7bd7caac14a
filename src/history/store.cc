#include "history/store.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "history/db.h"
#include "history/report_patch.h"
#include "kernlog/line.h"
#include "util/text.h"
#include "util/time.h"

namespace gd {

namespace {

using history::Db;
using history::Stmt;

// A kernel-log time as printed, on the clock it was printed in: seconds
// since boot ("[   12.345678]") or unix seconds ("Dec  2 10:00:01",
// "2026-12-02T10:00:01+00:00", "[Wed Dec  2 10:00:01 2026]").
struct StampTime {
  bool boot = false;
  double s = 0;
};

std::optional<StampTime> stamp_time(const std::string& stamp, int year) {
  if (stamp.empty()) return std::nullopt;
  std::string line = stamp + " x";
  LogLine l = parse_log_line(line, year);
  if (l.boot_s) return StampTime{true, *l.boot_s};
  if (l.unix_s) return StampTime{false, static_cast<double>(*l.unix_s)};
  return std::nullopt;
}

// Wall-clock times of an event's first and last occurrence, in unix ms.
// The last is "now" less its age; the first is the last less the distance
// between the two stamps when they are on one clock, else the last.
std::pair<int64_t, int64_t> event_times(int64_t unix_ms, const KernelEvent& e) {
  int64_t last = unix_ms;
  if (e.age_s && std::isfinite(*e.age_s) && *e.age_s >= 0 && *e.age_s < 1e10) {
    last = unix_ms - std::llround(*e.age_s * 1000);
  }
  int64_t first = last;
  if (e.first != e.last) {
    int year = utc_year(unix_ms / 1000);
    auto f = stamp_time(e.first, year);
    auto l = stamp_time(e.last, year);
    if (f && l && f->boot == l->boot && l->s >= f->s && l->s - f->s < 1e10) {
      first = last - std::llround((l->s - f->s) * 1000);
    }
  }
  return {first, last};
}

// True when a run stored with last stamp `stored_last` and a read whose
// first stamp is `first` overlap: the read is the same run seen again with
// its oldest lines gone from the kernel's ring buffer (or a window).
bool continues(const std::string& stored_last, const std::string& first, int year) {
  auto l = stamp_time(stored_last, year);
  auto f = stamp_time(first, year);
  return l && f && l->boot == f->boot && f->s <= l->s;
}

int stored_findings(const Report& r) {
  return static_cast<int>(std::count_if(r.findings.begin(), r.findings.end(), [](const Finding& f) {
    return says_something(f.severity);
  }));
}

std::string string_array(const std::vector<std::string>& v) {
  return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The level of a diag run's JSON ({"run": {"level": 2, ...}, "figures":
// [...]}); the rest is the reader's to parse. Refusing anything else keeps
// diag_runs readable by the exporter.
Result<int> diag_level(std::string_view diag_json) {
  auto j = nlohmann::json::parse(diag_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"diag run: not a JSON object"};
  auto run = j.find("run");
  if (run == j.end() || !run->is_object()) return Error{"diag run: no \"run\" object"};
  auto level = run->find("level");
  if (level == run->end() || !level->is_number_integer()) {
    return Error{"diag run: no integer run.level"};
  }
  return level->get<int>();
}

// What a report says, for "same as the previous one".
std::string signature(const Report& r) {
  std::vector<std::string> parts;
  for (const Finding& f : r.findings) {
    if (says_something(f.severity)) {
      parts.push_back(f.id + '|' + severity_name(f.severity) + '|' +
                      join_skip_leading_empty(f.gpus, ","));
    }
  }
  std::sort(parts.begin(), parts.end());
  return std::string(severity_name(r.verdict)) + '\n' + join_skip_leading_empty(parts, "\n");
}

// One transaction: BEGIN IMMEDIATE (the write lock up front, so it cannot
// fail halfway with "database is locked"), rolled back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) history::exec(db_, "ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Result<bool> begin() {
    auto r = history::exec(db_, "BEGIN IMMEDIATE");
    open_ = r.ok();
    return r;
  }
  Result<bool> commit() {
    auto r = history::exec(db_, "COMMIT");
    if (r.ok()) open_ = false;
    return r;
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};

constexpr const char* kInsertReport =
    "INSERT INTO reports (time_ms, verdict, findings, report_json, base_id, report_patch) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr const char* kInsertFinding =
    "INSERT INTO findings (report_id, time_ms, id, severity, gpus, summary) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr const char* kInsertDiagRun =
    "INSERT INTO diag_runs (time_ms, level, verdict, findings, diag_json) "
    "VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr const char* kInsertDiagFinding =
    "INSERT INTO diag_findings (run_id, time_ms, id, severity, gpus, summary, evidence, remedy) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr const char* kFindEvent =
    "SELECT id, count, last_stamp, last_seen_ms FROM events WHERE boot = ?1 AND kind = ?2 "
    "AND type = ?3 AND code = ?4 AND gpu = ?5 AND first_stamp = ?6";
constexpr const char* kLatestRun =
    "SELECT id, count, last_stamp, last_seen_ms FROM events WHERE boot = ?1 AND kind = ?2 "
    "AND type = ?3 AND code = ?4 AND gpu = ?5 ORDER BY last_seen_ms DESC, id DESC LIMIT 1";
constexpr const char* kUpdateEvent =
    "UPDATE events SET last_stamp = ?2, last_seen_ms = ?3, count = ?4, line = ?5, message = ?6, "
    "updated_ms = ?7 WHERE id = ?1";
constexpr const char* kInsertEvent =
    "INSERT INTO events (boot, kind, type, code, gpu, message, line, first_stamp, last_stamp, "
    "first_seen_ms, last_seen_ms, count, stored_ms, updated_ms) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)";

using Json = history::ReportJson;

class SqliteStore final : public HistoryStore {
 public:
  SqliteStore(std::string path, Db db, std::string boot_id, bool report_patches)
      : path_(std::move(path)),
        db_(std::move(db)),
        boot_id_(std::move(boot_id)),
        report_patches_(report_patches) {
    // The file as opened: open_db has just opened this path, so a stat now
    // names the same inode (a rename in between is the race replaced()
    // exists to catch, one write later).
    struct stat st {};
    if (stat(path_.c_str(), &st) == 0) {
      dev_ = st.st_dev;
      ino_ = st.st_ino;
    }
  }

  Result<bool> prepare() {
    struct {
      Stmt* stmt;
      const char* sql;
    } const all[] = {
        {&insert_report_, kInsertReport},    {&insert_finding_, kInsertFinding},
        {&insert_diag_run_, kInsertDiagRun}, {&insert_diag_finding_, kInsertDiagFinding},
        {&find_event_, kFindEvent},          {&latest_run_, kLatestRun},
        {&update_event_, kUpdateEvent},      {&insert_event_, kInsertEvent}};
    for (const auto& s : all) {
      auto p = Stmt::prepare(db_.get(), s.sql);
      if (!p.ok()) return Error{path_ + ": " + p.error()};
      *s.stmt = std::move(*p);
    }
    return true;
  }

  Result<bool> add_report(int64_t unix_ms, const Report& r, std::string_view report_json) override {
    std::lock_guard lock(mu_);
    std::string sig = signature(r);
    bool with_json = !report_json.empty() &&
                     (sig != last_signature_ || !last_json_ms_ || unix_ms < *last_json_ms_ ||
                      unix_ms - *last_json_ms_ >= kReportJsonEveryMs);
    // A changed report within the hour of the last full one: stored as the
    // change from that one where the change is under half the report.
    // Every patch names a full report at most kReportJsonEveryMs older, so
    // reading any report back is one parse and one patch.
    Json parsed;
    std::string patch;
    if (with_json) parsed = Json::parse(report_json, nullptr, false);
    if (with_json && base_ && !parsed.is_discarded() && unix_ms >= base_->ms &&
        unix_ms - base_->ms < kReportJsonEveryMs) {
      std::string p = history::patch_text(base_->json, parsed);
      if (p.size() * 2 < report_json.size()) patch = std::move(p);
    }
    bool full = with_json && patch.empty();
    Transaction tx(db_.get());
    if (auto b = tx.begin(); !b.ok()) return fail(b.error());
    Stmt& ins = insert_report_;
    ins.reset();
    ins.bind_int(1, unix_ms);
    ins.bind_text(2, severity_name(r.verdict));
    ins.bind_int(3, stored_findings(r));
    if (full) {
      ins.bind_text(4, report_json);
    } else {
      ins.bind_null(4);
    }
    if (!patch.empty()) {
      ins.bind_int(5, base_->id);
      ins.bind_text(6, patch);
    } else {
      ins.bind_null(5);
      ins.bind_null(6);
    }
    if (auto s = history::step_done(db_.get(), ins); !s.ok()) return fail(s.error());
    int64_t report_id = sqlite3_last_insert_rowid(db_.get());
    if (auto s = insert_findings(insert_finding_, report_id, unix_ms, r, false); !s.ok()) return s;
    if (auto c = tx.commit(); !c.ok()) return fail(c.error());
    last_signature_ = std::move(sig);
    if (full) {
      last_json_ms_ = unix_ms;
      // Patches are made against it from now; a JSON that does not parse
      // is never a base (its successors are stored whole).
      if (report_patches_ && !parsed.is_discarded()) {
        base_ = Base{report_id, unix_ms, std::move(parsed)};
      } else {
        base_.reset();
      }
    }
    return true;
  }

  Result<bool> add_diag(int64_t unix_ms, const Report& r, std::string_view diag_json) override {
    auto level = diag_level(diag_json);
    if (!level.ok()) return fail(level.error());
    std::lock_guard lock(mu_);
    Transaction tx(db_.get());
    if (auto b = tx.begin(); !b.ok()) return fail(b.error());
    Stmt& ins = insert_diag_run_;
    ins.reset();
    ins.bind_int(1, unix_ms);
    ins.bind_int(2, *level);
    ins.bind_text(3, severity_name(r.verdict));
    ins.bind_int(4, stored_findings(r));
    ins.bind_text(5, diag_json);
    if (auto s = history::step_done(db_.get(), ins); !s.ok()) return fail(s.error());
    int64_t run_id = sqlite3_last_insert_rowid(db_.get());
    if (auto s = insert_findings(insert_diag_finding_, run_id, unix_ms, r, true); !s.ok()) return s;
    if (auto c = tx.commit(); !c.ok()) return fail(c.error());
    return true;
  }

  Result<int> add_events(int64_t unix_ms, const std::vector<KernelEvent>& events) override {
    return add_boot_events(unix_ms, boot_id_, events);
  }

  Result<int> add_boot_events(int64_t unix_ms, std::string_view boot,
                              const std::vector<KernelEvent>& events) override {
    std::lock_guard lock(mu_);
    if (events.empty()) return 0;
    int year = utc_year(unix_ms / 1000);
    Transaction tx(db_.get());
    if (auto b = tx.begin(); !b.ok()) return fail(b.error());
    int fresh = 0;
    for (const KernelEvent& e : events) {
      auto [first_ms, last_ms] = event_times(unix_ms, e);
      auto stored = find_run(boot, e, year);
      if (!stored.ok()) return fail(stored.error());
      if (*stored) {
        const StoredRun& run = **stored;
        // The same last occurrence read again keeps its time: only ages
        // computed afresh would make it wander by milliseconds.
        int64_t seen = run.last_seen_ms;
        if (run.last_stamp != e.last || e.count > run.count) seen = std::max(seen, last_ms);
        Stmt& u = update_event_;
        u.reset();
        u.bind_int(1, run.id);
        u.bind_text(2, e.last);
        u.bind_int(3, seen);
        u.bind_int(4, std::max<int64_t>(run.count, e.count));
        u.bind_text(5, e.line);
        u.bind_text(6, e.message);
        u.bind_int(7, unix_ms);
        if (auto s = history::step_done(db_.get(), u); !s.ok()) return fail(s.error());
        continue;
      }
      Stmt& ins = insert_event_;
      bind_key(ins, boot, e);
      ins.bind_text(6, e.message);
      ins.bind_text(7, e.line);
      ins.bind_text(8, e.first);
      ins.bind_text(9, e.last);
      ins.bind_int(10, first_ms);
      ins.bind_int(11, last_ms);
      ins.bind_int(12, std::max(e.count, 1));
      ins.bind_int(13, unix_ms);
      if (auto s = history::step_done(db_.get(), ins); !s.ok()) return fail(s.error());
      ++fresh;
    }
    if (auto c = tx.commit(); !c.ok()) return fail(c.error());
    return fresh;
  }

  Result<int> prune(int64_t cutoff_unix_ms) override {
    std::lock_guard lock(mu_);
    int removed = 0;
    {
      Transaction tx(db_.get());
      if (auto b = tx.begin(); !b.ok()) return fail(b.error());
      // findings first and by time (their index), whatever foreign_keys says.
      // A finding table before its parent's: those rows are not counted.
      const struct {
        const char* sql;
        bool counted;
      } kDeletes[] = {{"DELETE FROM findings WHERE time_ms < ?1", false},
                      {"DELETE FROM reports WHERE time_ms < ?1", true},
                      {"DELETE FROM diag_findings WHERE time_ms < ?1", false},
                      {"DELETE FROM diag_runs WHERE time_ms < ?1", true},
                      {"DELETE FROM events WHERE last_seen_ms < ?1", true}};
      if (auto rb = rebase_patches(cutoff_unix_ms); !rb.ok()) return fail(rb.error());
      for (const auto& del : kDeletes) {
        auto s = Stmt::prepare(db_.get(), del.sql);
        if (!s.ok()) return fail(s.error());
        s->bind_int(1, cutoff_unix_ms);
        if (auto d = history::step_done(db_.get(), *s); !d.ok()) {
          return fail(d.error());
        }
        if (del.counted) removed += sqlite3_changes(db_.get());
      }
      if (auto c = tx.commit(); !c.ok()) return fail(c.error());
    }
    // Hands the freed pages back to the file system (auto_vacuum is
    // INCREMENTAL); a failure here loses nothing.
    if (removed > 0) history::exec(db_.get(), "PRAGMA incremental_vacuum");
    if (base_ && base_->ms < cutoff_unix_ms)
      base_.reset();  // gone: the next change is stored whole
    return removed;
  }

  Result<bool> check_intact() override {
    std::lock_guard lock(mu_);
    return history::quick_check(db_.get(), path_);
  }

  void close_replaced() override {
    std::lock_guard lock(mu_);
    history::exec(db_.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
    for (Stmt* s : {&insert_report_, &insert_finding_, &insert_diag_run_, &insert_diag_finding_,
                    &find_event_, &latest_run_, &update_event_, &insert_event_}) {
      *s = Stmt();
    }
    db_ = Db();
    struct stat st {};
    if (stat(path_.c_str(), &st) != 0 && errno == ENOENT) {
      unlink((path_ + "-wal").c_str());
      unlink((path_ + "-shm").c_str());
    }
  }

  std::string replaced() const override {
    struct stat st {};
    // Only a path that names no file, or another one, counts: a stat that
    // fails otherwise (EACCES on a directory) says nothing about the file.
    if (stat(path_.c_str(), &st) != 0) return errno == ENOENT ? "moved or deleted" : "";
    if (st.st_dev != dev_ || st.st_ino != ino_) return "replaced by another file";
    return "";
  }

 private:
  struct StoredRun {
    int64_t id = 0;
    int64_t count = 0;
    std::string last_stamp;
    int64_t last_seen_ms = 0;
  };

  static void bind_key(Stmt& s, std::string_view boot, const KernelEvent& e) {
    s.reset();
    s.bind_text(1, boot);
    s.bind_text(2, e.kind);
    s.bind_text(3, e.type);
    s.bind_int(4, e.code);
    s.bind_text(5, e.gpu);
  }

  // Before a prune drops reports older than cutoff_ms: the patches that
  // would outlive their base get a new one. Per old base, the oldest such
  // report is stored whole and the others as changes from it. A patch that
  // no longer applies (a hand-edited row) is dropped, its report kept.
  Result<bool> rebase_patches(int64_t cutoff_ms) {
    struct Row {
      int64_t id, base;
      std::string patch;
    };
    std::vector<Row> rows;
    {
      auto s = Stmt::prepare(db_.get(),
                             // From the bases about to go (few, by time),
                             // to their patches (reports_base).
                             "SELECT r.id, r.base_id, r.report_patch FROM reports b "
                             "JOIN reports r ON r.base_id = b.id "
                             "WHERE b.time_ms < ?1 AND r.time_ms >= ?1 "
                             "ORDER BY r.base_id, r.time_ms, r.id");
      if (!s.ok()) return Error{s.error()};
      s->bind_int(1, cutoff_ms);
      int rc;
      while ((rc = s->step()) == SQLITE_ROW) rows.push_back({s->int64(0), s->int64(1), s->text(2)});
      if (rc != SQLITE_DONE) return Error{db_.errmsg()};
    }
    if (rows.empty()) return true;
    auto base_json = Stmt::prepare(db_.get(), "SELECT report_json FROM reports WHERE id = ?1");
    auto update = Stmt::prepare(
        db_.get(),
        "UPDATE reports SET report_json = ?2, base_id = ?3, report_patch = ?4 WHERE id = ?1");
    if (!base_json.ok()) return Error{base_json.error()};
    if (!update.ok()) return Error{update.error()};
    int64_t old_base = 0;
    Json old_json;
    std::optional<std::pair<int64_t, Json>> new_base;
    for (const Row& row : rows) {
      if (row.base != old_base) {
        old_base = row.base;
        new_base.reset();
        base_json->reset();
        base_json->bind_int(1, row.base);
        std::string text = base_json->step() == SQLITE_ROW ? base_json->text(0) : "";
        base_json->reset();
        old_json = Json::parse(text, nullptr, false);
      }
      std::optional<Json> full;
      if (!old_json.is_discarded()) {
        if (auto p = history::patched(old_json, row.patch); p.ok()) full = std::move(*p);
      }
      update->reset();
      update->bind_int(1, row.id);
      if (!full) {
        update->bind_null(2);  // dropped: the report keeps its verdict and findings
        update->bind_null(3);
        update->bind_null(4);
      } else if (!new_base) {
        update->bind_text(2, history::report_text(*full));
        update->bind_null(3);
        update->bind_null(4);
        new_base.emplace(row.id, std::move(*full));
      } else {
        update->bind_null(2);
        update->bind_int(3, new_base->first);
        update->bind_text(4, history::patch_text(new_base->second, *full));
      }
      if (auto u = history::step_done(db_.get(), *update); !u.ok()) return u;
    }
    return true;
  }

  // The stored run an event belongs to: the row with its first occurrence,
  // else the latest run it continues; nullopt: a new run.
  Result<std::optional<StoredRun>> find_run(std::string_view boot, const KernelEvent& e, int year) {
    for (Stmt* s : {&find_event_, &latest_run_}) {
      bind_key(*s, boot, e);
      if (s == &find_event_) s->bind_text(6, e.first);
      int rc = s->step();
      std::optional<StoredRun> run;
      if (rc == SQLITE_ROW) run = StoredRun{s->int64(0), s->int64(1), s->text(2), s->int64(3)};
      // Reset at once: a statement left open would pin a read snapshot
      // and keep checkpoints from finishing.
      s->reset();
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error{db_.errmsg()};
      if (!run) continue;
      if (s == &latest_run_ && !continues(run->last_stamp, e.first, year))
        return std::optional<StoredRun>();
      return run;
    }
    return std::optional<StoredRun>();
  }

  // The findings of r worth storing, under parent_id (a report's or a diag
  // run's), with the statement for that table: id, severity, GPUs and
  // summary, and (with_details, diag_findings) evidence and remedy.
  Result<bool> insert_findings(Stmt& fi, int64_t parent_id, int64_t unix_ms, const Report& r,
                               bool with_details) {
    for (const Finding& f : r.findings) {
      if (!says_something(f.severity)) continue;
      fi.reset();
      fi.bind_int(1, parent_id);
      fi.bind_int(2, unix_ms);
      fi.bind_text(3, f.id);
      fi.bind_text(4, severity_name(f.severity));
      fi.bind_text(5, join_skip_leading_empty(f.gpus, ","));
      fi.bind_text(6, f.summary);
      if (with_details) {
        fi.bind_text(7, string_array(f.evidence));
        fi.bind_text(8, string_array(f.remedy));
      }
      if (auto s = history::step_done(db_.get(), fi); !s.ok()) return fail(s.error());
    }
    return true;
  }

  Error fail(const std::string& why) const { return Error{path_ + ": " + why}; }

  std::mutex mu_;  // serve's sampling and check threads may both write
  std::string path_;
  Db db_;
  Stmt insert_report_, insert_finding_, insert_diag_run_, insert_diag_finding_, find_event_,
      latest_run_, update_event_, insert_event_;
  std::string boot_id_;
  dev_t dev_ = 0;  // the file opened, for replaced()
  ino_t ino_ = 0;
  std::string last_signature_;
  std::optional<int64_t> last_json_ms_;  // the last report stored whole
  // The last report stored whole, which changes are made against; none
  // before the first, after it was pruned, or without report_patches_.
  struct Base {
    int64_t id = 0;
    int64_t ms = 0;
    Json json;
  };
  std::optional<Base> base_;
  bool report_patches_ = true;
};

}  // namespace

std::string default_history_path() {
  if (geteuid() == 0) return "/var/lib/gpudoctor/history.db";
  const char* xdg = std::getenv("XDG_STATE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/gpudoctor/history.db";
  std::string home;
  if (const char* h = std::getenv("HOME"); h && h[0] == '/') {
    home = h;
  } else if (const struct passwd* pw = getpwuid(geteuid()); pw && pw->pw_dir) {
    home = pw->pw_dir;
  }
  if (home.empty()) return "";
  return home + "/.local/state/gpudoctor/history.db";
}

Result<std::unique_ptr<HistoryStore>> open_history(const std::string& path, bool create,
                                                   std::string boot_id, bool report_patches) {
  auto db = history::open_db(path, create ? history::OpenMode::kCreate : history::OpenMode::kWrite);
  if (!db.ok()) return Error{db.error()};
  auto store =
      std::make_unique<SqliteStore>(path, std::move(*db), std::move(boot_id), report_patches);
  if (auto p = store->prepare(); !p.ok()) return Error{p.error()};
  return std::unique_ptr<HistoryStore>(std::move(store));
}

}  // namespace gd
