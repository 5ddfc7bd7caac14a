#include "history/reader.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "history/report_patch.h"
#include "util/text.h"

namespace gd {

namespace {

using history::patched;
using history::report_text;
using history::ReportJson;
using history::Stmt;

// Columns 0-3 of a findings row: id, severity, gpus, summary.
StoredFinding finding_at(const Stmt& s, int col) {
  return StoredFinding{s.text(col), s.text(col + 1), split_strings_nonempty(s.text(col + 2), ','),
                       s.text(col + 3)};
}

// A JSON array of strings as the store wrote it; anything else reads empty.
std::vector<std::string> string_array(const std::string& text) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

constexpr const char* kDiagRunColumns = "SELECT id, time_ms, level, verdict";

// A row of kDiagRunColumns followed by diag_json (or '').
StoredDiagRun diag_run_at(const Stmt& s) {
  StoredDiagRun r;
  r.id = s.int64(0);
  r.time_ms = s.int64(1);
  r.level = static_cast<int>(s.int64(2));
  r.verdict = s.text(3);
  r.diag_json = s.text(4);
  return r;
}

}  // namespace

Result<HistoryReader> HistoryReader::open(const std::string& path) {
  auto db = history::open_db(path, history::OpenMode::kRead);
  if (!db.ok()) return Error{db.error()};
  return HistoryReader(path, std::move(*db));
}

Result<ReportSpan> HistoryReader::report_span(int64_t from_ms, int64_t to_ms) {
  auto s = Stmt::prepare(db_.get(),
                         "SELECT count(*), min(time_ms), max(time_ms) FROM reports "
                         "WHERE time_ms >= ?1 AND time_ms <= ?2");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, from_ms);
  s->bind_int(2, to_ms);
  if (s->step() != SQLITE_ROW) return fail(db_.errmsg());
  ReportSpan span{s->int64(0), s->int64(1), s->int64(2), ""};
  if (span.count == 0) return span;
  auto v = Stmt::prepare(db_.get(),
                         "SELECT verdict FROM reports WHERE time_ms >= ?1 AND time_ms <= ?2 "
                         "ORDER BY time_ms DESC, id DESC LIMIT 1");
  if (!v.ok()) return fail(v.error());
  v->bind_int(1, from_ms);
  v->bind_int(2, to_ms);
  if (v->step() != SQLITE_ROW) return fail(db_.errmsg());
  span.last_verdict = v->text(0);
  return span;
}

Result<bool> HistoryReader::read_findings(StoredReport* r) {
  auto s = Stmt::prepare(db_.get(),
                         "SELECT id, severity, gpus, summary FROM findings WHERE report_id = ?1 "
                         "ORDER BY rowid");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, r->id);
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) r->findings.push_back(finding_at(*s, 0));
  if (rc != SQLITE_DONE) return fail(db_.errmsg());
  return true;
}

Result<std::optional<StoredReport>> HistoryReader::report_before(int64_t ms) {
  auto s = Stmt::prepare(db_.get(),
                         "SELECT id, time_ms, verdict FROM reports WHERE time_ms < ?1 "
                         "ORDER BY time_ms DESC, id DESC LIMIT 1");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, ms);
  int rc = s->step();
  if (rc == SQLITE_DONE) return std::optional<StoredReport>();
  if (rc != SQLITE_ROW) return fail(db_.errmsg());
  StoredReport r;
  r.id = s->int64(0);
  r.time_ms = s->int64(1);
  r.verdict = s->text(2);
  if (auto f = read_findings(&r); !f.ok()) return Error{f.error()};
  return std::optional<StoredReport>(std::move(r));
}

Result<bool> HistoryReader::for_each_report(int64_t from_ms, int64_t to_ms,
                                            const std::function<void(const StoredReport&)>& fn) {
  auto s = Stmt::prepare(db_.get(),
                         "SELECT r.id, r.time_ms, r.verdict, f.id, f.severity, f.gpus, f.summary "
                         "FROM reports r LEFT JOIN findings f ON f.report_id = r.id "
                         "WHERE r.time_ms >= ?1 AND r.time_ms <= ?2 "
                         "ORDER BY r.time_ms, r.id, f.rowid");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, from_ms);
  s->bind_int(2, to_ms);
  std::optional<StoredReport> cur;
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) {
    int64_t id = s->int64(0);
    if (!cur || cur->id != id) {
      if (cur) fn(*cur);
      cur = StoredReport{id, s->int64(1), s->text(2), {}};
    }
    if (!s->is_null(3)) cur->findings.push_back(finding_at(*s, 3));
  }
  if (rc != SQLITE_DONE) return fail(db_.errmsg());
  if (cur) fn(*cur);
  return true;
}

Result<std::optional<HistoryReader::JsonAt>> HistoryReader::report_json_at(int64_t ms) {
  auto s = Stmt::prepare(db_.get(),
                         "SELECT id, time_ms, report_json, base_id, report_patch FROM reports "
                         "WHERE time_ms <= ?1 AND (report_json IS NOT NULL OR "
                         "report_patch IS NOT NULL) ORDER BY time_ms DESC, id DESC LIMIT 1");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, ms);
  int rc = s->step();
  if (rc == SQLITE_DONE) return std::optional<JsonAt>();
  if (rc != SQLITE_ROW) return fail(db_.errmsg());
  JsonAt at{s->int64(0), s->int64(1), s->text(2)};
  if (!s->is_null(2)) return std::optional<JsonAt>(std::move(at));
  int64_t base_id = s->int64(3);
  std::string patch = s->text(4);
  s->reset();
  auto b = Stmt::prepare(db_.get(), "SELECT report_json FROM reports WHERE id = ?1");
  if (!b.ok()) return fail(b.error());
  b->bind_int(1, base_id);
  rc = b->step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return fail(db_.errmsg());
  auto base = ReportJson::parse(rc == SQLITE_ROW ? b->text(0) : "", nullptr, false);
  if (base.is_discarded()) {
    return fail("report " + std::to_string(at.id) + ": its change from report " +
                std::to_string(base_id) + " cannot be applied (that report's JSON is missing)");
  }
  auto full = patched(base, patch);
  if (!full.ok()) {
    return fail("report " + std::to_string(at.id) + ": its change from report " +
                std::to_string(base_id) + " does not apply: " + full.error());
  }
  at.json = report_text(*full);
  return std::optional<JsonAt>(std::move(at));
}

Result<std::vector<StoredGpu>> HistoryReader::gpus() {
  // The newest few report JSONs are enough: GPUs seldom change, and a
  // report JSON is stored at least hourly.
  auto s = Stmt::prepare(db_.get(),
                         "SELECT time_ms, report_json FROM reports WHERE report_json IS NOT NULL "
                         "ORDER BY time_ms DESC, id DESC LIMIT 64");
  if (!s.ok()) return fail(s.error());
  std::vector<StoredGpu> out;
  std::set<std::string> seen;
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) {
    auto j = nlohmann::json::parse(s->text(1), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    auto gpus = j.find("gpus");
    if (gpus == j.end() || !gpus->is_array()) continue;
    for (const auto& g : *gpus) {
      if (!g.is_object()) continue;
      StoredGpu gpu;
      if (auto b = g.find("bus_id"); b != g.end() && b->is_string())
        gpu.bus_id = b->get<std::string>();
      if (gpu.bus_id.empty() || !seen.insert(gpu.bus_id).second) continue;
      if (auto u = g.find("uuid"); u != g.end() && u->is_string()) gpu.uuid = u->get<std::string>();
      if (auto n = g.find("name"); n != g.end() && n->is_string()) gpu.name = n->get<std::string>();
      if (auto i = g.find("nvml_index"); i != g.end() && i->is_number_integer()) {
        gpu.nvml_index = i->get<int>();
      }
      gpu.seen_ms = s->int64(0);
      out.push_back(std::move(gpu));
    }
  }
  if (rc != SQLITE_DONE) return fail(db_.errmsg());
  return out;
}

Result<std::vector<EventRun>> HistoryReader::event_runs(int64_t from_ms, int64_t to_ms,
                                                        const std::string& gpu) {
  auto s =
      Stmt::prepare(db_.get(),
                    "SELECT boot, kind, type, code, gpu, message, line, first_seen_ms, "
                    "last_seen_ms, count FROM events "
                    "WHERE last_seen_ms >= ?1 AND first_seen_ms <= ?2 AND (?3 = '' OR gpu = ?3) "
                    "ORDER BY first_seen_ms, id");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, from_ms);
  s->bind_int(2, to_ms);
  s->bind_text(3, gpu);
  std::vector<EventRun> out;
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) {
    out.push_back(EventRun{s->text(0), s->text(1), s->text(2), static_cast<int>(s->int64(3)),
                           s->text(4), s->text(5), s->text(6), s->int64(7), s->int64(8),
                           s->int64(9)});
  }
  if (rc != SQLITE_DONE) return fail(db_.errmsg());
  return out;
}

Result<std::optional<int64_t>> HistoryReader::latest_diag_id() {
  auto s = Stmt::prepare(db_.get(), "SELECT max(id) FROM diag_runs");
  if (!s.ok()) return fail(s.error());
  if (s->step() != SQLITE_ROW) return fail(db_.errmsg());
  if (s->is_null(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(s->int64(0));
}

Result<bool> HistoryReader::read_diag_findings(StoredDiagRun* r) {
  auto s = Stmt::prepare(db_.get(),
                         "SELECT id, severity, gpus, summary, evidence, remedy FROM diag_findings "
                         "WHERE run_id = ?1 ORDER BY rowid");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, r->id);
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) {
    r->findings.push_back(StoredDiagFinding{s->text(0), s->text(1),
                                            split_strings_nonempty(s->text(2), ','), s->text(3),
                                            string_array(s->text(4)), string_array(s->text(5))});
  }
  if (rc != SQLITE_DONE) return fail(db_.errmsg());
  return true;
}

Result<std::optional<StoredDiagRun>> HistoryReader::latest_diag_run() {
  // By id, not time: the run written last is the one the exporter shows,
  // even when the clock stepped back in between.
  auto s = Stmt::prepare(db_.get(), std::string(kDiagRunColumns) +
                                        ", diag_json FROM diag_runs ORDER BY id DESC LIMIT 1");
  if (!s.ok()) return fail(s.error());
  int rc = s->step();
  if (rc == SQLITE_DONE) return std::optional<StoredDiagRun>();
  if (rc != SQLITE_ROW) return fail(db_.errmsg());
  StoredDiagRun r = diag_run_at(*s);
  s->reset();
  if (auto f = read_diag_findings(&r); !f.ok()) return Error{f.error()};
  return std::optional<StoredDiagRun>(std::move(r));
}

Result<std::vector<StoredDiagRun>> HistoryReader::diag_runs(int64_t from_ms, int64_t to_ms,
                                                            bool with_json) {
  auto s =
      Stmt::prepare(db_.get(), std::string(kDiagRunColumns) + (with_json ? ", diag_json" : ", ''") +
                                   " FROM diag_runs WHERE time_ms >= ?1 AND time_ms <= ?2 "
                                   "ORDER BY time_ms, id");
  if (!s.ok()) return fail(s.error());
  s->bind_int(1, from_ms);
  s->bind_int(2, to_ms);
  std::vector<StoredDiagRun> out;
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) out.push_back(diag_run_at(*s));
  if (rc != SQLITE_DONE) return fail(db_.errmsg());
  s->reset();
  for (StoredDiagRun& r : out) {
    if (auto f = read_diag_findings(&r); !f.ok()) return Error{f.error()};
  }
  return out;
}

std::vector<EventGroup> group_events(const std::vector<EventRun>& runs) {
  std::vector<EventGroup> out;
  std::map<std::string, size_t> index;
  std::map<std::string, std::set<std::string>> boots;
  for (const EventRun& r : runs) {
    std::string key = r.gpu + '|' + r.kind + '|' + r.type + '|' + std::to_string(r.code);
    auto [it, fresh] = index.try_emplace(key, out.size());
    if (fresh) {
      out.push_back(EventGroup{r.gpu, r.kind, r.type, r.code, r.message, r.first_seen_ms,
                               r.last_seen_ms, 0, 0});
    }
    EventGroup& g = out[it->second];
    g.first_seen_ms = std::min(g.first_seen_ms, r.first_seen_ms);
    if (r.last_seen_ms >= g.last_seen_ms) {
      g.last_seen_ms = r.last_seen_ms;
      g.message = r.message;
    }
    g.count += r.count;
    boots[key].insert(r.boot);
    g.boots = static_cast<int>(boots[key].size());
  }
  return out;
}

void diff_reports(const StoredReport* before, const StoredReport& after, const std::string& gpu,
                  std::vector<Change>* out) {
  auto concerns = [&](const StoredFinding& f) {
    return gpu.empty() || std::find(f.gpus.begin(), f.gpus.end(), gpu) != f.gpus.end();
  };
  // Keyed by id and GPUs: a check may report one finding per GPU.
  auto keyed = [&](const StoredReport* r) {
    std::map<std::string, const StoredFinding*> m;
    if (!r) return m;
    for (const StoredFinding& f : r->findings) {
      if (concerns(f)) m.emplace(f.id + '|' + join_skip_leading_empty(f.gpus, ","), &f);
    }
    return m;
  };
  auto was = keyed(before);
  auto now = keyed(&after);
  std::string old_verdict = before ? before->verdict : "";
  if (gpu.empty() && old_verdict != after.verdict) {
    Change c;
    c.kind = Change::Kind::kVerdict;
    c.time_ms = after.time_ms;
    c.from = old_verdict;
    c.to = after.verdict;
    out->push_back(std::move(c));
  }
  // In the report's own order (most likely root cause first).
  for (const StoredFinding& f : after.findings) {
    auto n = now.find(f.id + '|' + join_skip_leading_empty(f.gpus, ","));
    if (n == now.end() || n->second != &f) continue;
    auto w = was.find(n->first);
    if (w != was.end() && w->second->severity == f.severity) continue;
    Change c;
    c.kind = w == was.end() ? Change::Kind::kAppeared : Change::Kind::kChanged;
    c.time_ms = after.time_ms;
    c.from = w == was.end() ? "" : w->second->severity;
    c.to = f.severity;
    c.finding = f;
    out->push_back(std::move(c));
  }
  if (!before) return;
  for (const StoredFinding& f : before->findings) {
    auto w = was.find(f.id + '|' + join_skip_leading_empty(f.gpus, ","));
    if (w == was.end() || w->second != &f || now.count(w->first)) continue;
    Change c;
    c.kind = Change::Kind::kCleared;
    c.time_ms = after.time_ms;
    c.from = f.severity;
    c.finding = f;
    out->push_back(std::move(c));
  }
}

}  // namespace gd
