// The history store and reader (src/history/): round trips, dedup of kernel
// events, retention, refusal of files that are not a current gpudoctor
// history, a reader beside the writer, --since, and the changes between
// reports. The crash test is tests/history/kill9_test.py.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "history/reader.h"
#include "history/store.h"
#include "probe/rootfs.h"
#include "test_util.h"
#include "util/since.h"

namespace gd {
namespace {

constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
constexpr int64_t kT0 = 1'772'323'200'000;  // 2026-03-01T00:00:00Z

// Each test's history files, in a directory removed afterwards.
class HistoryDir : public testing_util::TempDir {
 public:
  HistoryDir() : TempDir("history-test") {}
};

using testing_util::make_finding;
using testing_util::make_report;

KernelEvent xid(int code, const std::string& gpu, const std::string& first, const std::string& last,
                int count, double age_s = 0) {
  KernelEvent e;
  e.kind = "xid";
  e.code = code;
  e.gpu = gpu;
  e.message = "message " + std::to_string(code);
  e.line = "line";
  e.first = first;
  e.last = last;
  e.count = count;
  e.age_s = age_s;
  return e;
}

// Runs SQL on the file with a plain connection (what a power user's
// sqlite3 does); returns the first column of the first row, or "".
std::string sql(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  std::string out;
  std::string all = query;
  while (!all.empty()) {
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, all.c_str(), -1, &s, &tail) != SQLITE_OK) {
      out = std::string("error: ") + sqlite3_errmsg(db);
      break;
    }
    if (s && sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0)) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    all = tail ? std::string(tail) : "";
    while (!all.empty() && (all[0] == ' ' || all[0] == ';' || all[0] == '\n')) all.erase(0, 1);
  }
  sqlite3_close(db);
  return out;
}

std::unique_ptr<HistoryStore> must_open(const std::string& path) {
  auto s = open_history(path, true, boot_id_or_btime(RootFs("/")));
  EXPECT_TRUE(s.ok()) << s.error();
  return s.ok() ? std::move(*s) : nullptr;
}

HistoryReader must_read(const std::string& path) {
  auto r = HistoryReader::open(path);
  EXPECT_TRUE(r.ok()) << r.error();
  return std::move(*r);
}

TEST(HistoryStore, ReportsRoundTrip) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  std::string json = R"({"gpus":[{"bus_id":"0000:17:00.0","uuid":"GPU-a","name":"H100",)"
                     R"("nvml_index":3}]})";
  Report r1 = make_report(
      {make_finding("xid.79", Severity::kFail, {"0000:17:00.0", "0000:3b:00.0"}, "Xid 79"),
       make_finding("driver.nouveau", Severity::kOk),
       make_finding("uvm.hmm", Severity::kNotApplicable),
       make_finding("persistence-mode.off", Severity::kInfo)});
  ASSERT_TRUE(store->add_report(kT0, r1, json).ok());
  ASSERT_TRUE(store->add_report(kT0 + 1000, make_report({}), json).ok());

  HistoryReader reader = must_read(path);
  auto span = reader.report_span(0, kAll);
  ASSERT_TRUE(span.ok()) << span.error();
  EXPECT_EQ(span->count, 2);
  EXPECT_EQ(span->first_ms, kT0);
  EXPECT_EQ(span->last_ms, kT0 + 1000);
  EXPECT_EQ(span->last_verdict, "ok");

  std::vector<StoredReport> got;
  ASSERT_TRUE(
      reader.for_each_report(0, kAll, [&](const StoredReport& r) { got.push_back(r); }).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].verdict, "fail");
  // ok and n/a findings are not kept: only what says something.
  ASSERT_EQ(got[0].findings.size(), 2u);
  EXPECT_EQ(got[0].findings[0].id, "xid.79");
  EXPECT_EQ(got[0].findings[0].severity, "fail");
  EXPECT_EQ(got[0].findings[0].gpus, (std::vector<std::string>{"0000:17:00.0", "0000:3b:00.0"}));
  EXPECT_EQ(got[0].findings[0].summary, "Xid 79");
  EXPECT_EQ(got[0].findings[1].id, "persistence-mode.off");
  EXPECT_TRUE(got[1].findings.empty());

  auto before = reader.report_before(kT0 + 1000);
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(before->has_value());
  EXPECT_EQ((*before)->time_ms, kT0);
  EXPECT_EQ((*before)->findings.size(), 2u);

  auto gpus = reader.gpus();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].bus_id, "0000:17:00.0");
  EXPECT_EQ((*gpus)[0].uuid, "GPU-a");
  EXPECT_EQ((*gpus)[0].nvml_index, 3);
  EXPECT_EQ(sql(path, "PRAGMA journal_mode"), "wal");
}

TEST(HistoryStore, ReportJsonKeptOnChangeOrHourly) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  Report same = make_report({make_finding("thermal.high", Severity::kWarn, {"0000:17:00.0"})});
  ASSERT_TRUE(store->add_report(kT0, same, "{}").ok());
  ASSERT_TRUE(store->add_report(kT0 + 60'000, same, "{}").ok());
  Report worse_one = make_report({make_finding("thermal.high", Severity::kFail, {"0000:17:00.0"})});
  ASSERT_TRUE(store->add_report(kT0 + 120'000, worse_one, "{}").ok());
  ASSERT_TRUE(store->add_report(kT0 + 180'000, worse_one, "{}").ok());
  ASSERT_TRUE(store->add_report(kT0 + 120'000 + kReportJsonEveryMs, worse_one, "{}").ok());
  EXPECT_EQ(sql(path,
                "SELECT group_concat(report_json IS NOT NULL, '') FROM "
                "(SELECT report_json FROM reports ORDER BY time_ms)"),
            "10101");
}

TEST(HistoryStore, EventsDedupAndUpsert) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  const std::string gpu = "0000:17:00.0";
  // Read at kT0 + 100 s; the last occurrence 40 s ago, the first 20 s
  // before that (by the boot clock).
  auto n = store->add_boot_events(kT0 + 100'000, "boot-1",
                                  {xid(79, gpu, "[   10.000000]", "[   30.000000]", 2, 40)});
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(*n, 1);
  // The same log read again: no new row, times unchanged though the ages
  // are computed afresh.
  n = store->add_boot_events(kT0 + 160'000, "boot-1",
                             {xid(79, gpu, "[   10.000000]", "[   30.000000]", 2, 100.003)});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  // It happened again.
  n = store->add_boot_events(kT0 + 200'000, "boot-1",
                             {xid(79, gpu, "[   10.000000]", "[  130.000000]", 5, 0)});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  // Another boot restarts the stamps: a row of its own.
  n = store->add_boot_events(kT0 + 300'000, "boot-2",
                             {xid(79, gpu, "[   10.000000]", "[   10.000000]", 1, 0)});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  // A code on another GPU in the same read: one new row.
  n = store->add_boot_events(kT0 + 300'000, "boot-2",
                             {xid(79, gpu, "[   10.000000]", "[   10.000000]", 1, 0),
                              xid(13, "0000:3b:00.0", "[    5.000000]", "[    5.000000]", 1, 5)});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);

  HistoryReader reader = must_read(path);
  auto runs = reader.event_runs(0, kAll, gpu);
  ASSERT_TRUE(runs.ok()) << runs.error();
  ASSERT_EQ(runs->size(), 2u);
  const EventRun& a = (*runs)[0];
  EXPECT_EQ(a.boot, "boot-1");
  EXPECT_EQ(a.count, 5);
  EXPECT_EQ(a.first_seen_ms, kT0 + 40'000);
  EXPECT_EQ(a.last_seen_ms, kT0 + 200'000);
  auto groups = group_events(*runs);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 6);
  EXPECT_EQ(groups[0].boots, 2);
  EXPECT_EQ(groups[0].first_seen_ms, kT0 + 40'000);
  EXPECT_EQ(groups[0].last_seen_ms, kT0 + 300'000);
  auto all = reader.event_runs(0, kAll, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  EXPECT_EQ(sql(path, "SELECT count(*) FROM events"), "3");
}

TEST(HistoryStore, RingBufferWrapContinuesTheRun) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  const std::string gpu = "0000:17:00.0";
  ASSERT_TRUE(
      store->add_boot_events(kT0, "b", {xid(31, gpu, "[   10.000000]", "[   50.000000]", 4)}).ok());
  // The oldest lines fell out of the ring: the first occurrence moved, the
  // run is the same.
  auto n = store->add_boot_events(kT0 + 60'000, "b",
                                  {xid(31, gpu, "[   40.000000]", "[  110.000000]", 3)});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  EXPECT_EQ(
      sql(path, "SELECT count(*) || ' ' || max(count) || ' ' || min(first_stamp) FROM events"),
      "1 4 [   10.000000]");
  // An occurrence after the stored run (a follower's single line) starts a run.
  n = store->add_boot_events(kT0 + 70'000, "b",
                             {xid(31, gpu, "[  120.000000]", "[  120.000000]", 1)});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
}

TEST(HistoryStore, EventTimesFromOtherClocks) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  // Syslog stamps (wall clock) and no age: the first is the last less the
  // stamps' distance; the last is the time of storing.
  KernelEvent e = xid(48, "0000:17:00.0", "Mar  1 00:00:10", "Mar  1 00:01:10", 2);
  e.age_s.reset();
  ASSERT_TRUE(store->add_boot_events(kT0 + 100'000, "b", {e}).ok());
  EXPECT_EQ(sql(path, "SELECT first_seen_ms || ' ' || last_seen_ms FROM events"),
            std::to_string(kT0 + 40'000) + " " + std::to_string(kT0 + 100'000));
}

TEST(HistoryStore, Prune) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  Report r = make_report({make_finding("xid.79", Severity::kFail, {"0000:17:00.0"})});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store->add_report(kT0 + i * 1000, r, "{}").ok());
  ASSERT_TRUE(store->add_boot_events(kT0 + 1500, "b", {xid(79, "g", "[1.0]", "[1.0]", 1)}).ok());
  ASSERT_TRUE(store->add_boot_events(kT0 + 4000, "b", {xid(13, "g", "[2.0]", "[2.0]", 1)}).ok());
  auto removed = store->prune(kT0 + 2500);
  ASSERT_TRUE(removed.ok()) << removed.error();
  EXPECT_EQ(*removed, 3 + 1);
  EXPECT_EQ(sql(path, "SELECT count(*) FROM reports"), "2");
  EXPECT_EQ(sql(path, "SELECT count(*) FROM findings"), "2");
  EXPECT_EQ(sql(path, "SELECT group_concat(code) FROM events"), "13");
  removed = store->prune(kT0 + 2500);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 0);
  EXPECT_EQ(sql(path, "PRAGMA integrity_check"), "ok");
}

TEST(HistoryStore, CreatesDirectoryAndFileModes) {
  HistoryDir dir;
  mode_t old = umask(022);
  std::string path = dir.file("a/b/history.db");
  auto store = must_open(path);
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(dir.file("a/b").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, geteuid() == 0 ? 0750u : 0700u);
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(sql(path, "PRAGMA application_id"), std::to_string(history::kApplicationId));
  // Schema 3: reports (with their JSON as changes), events, diag runs
  // (db.cc's migrations).
  EXPECT_EQ(sql(path, "PRAGMA user_version"), "3");
}

TEST(HistoryStore, ReopensAndAppends) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  ASSERT_TRUE(must_open(path)->add_report(kT0, make_report({}), "{}").ok());
  ASSERT_TRUE(must_open(path)->add_report(kT0 + 1, make_report({}), "{}").ok());
  auto span = must_read(path).report_span(0, kAll);
  ASSERT_TRUE(span.ok());
  EXPECT_EQ(span->count, 2);
}

TEST(HistoryStore, MissingFileWithoutCreate) {
  HistoryDir dir;
  auto s = open_history(dir.file("none.db"), false, boot_id_or_btime(RootFs("/")));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("No such file"), std::string::npos) << s.error();
  auto r = HistoryReader::open(dir.file("none.db"));
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));
}

TEST(HistoryStore, NewerSchemaRefused) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  ASSERT_TRUE(must_open(path)->add_report(kT0, make_report({}), "{}").ok());
  sql(path, "PRAGMA user_version = 99");
  for (bool create : {true, false}) {
    auto s = open_history(path, create, boot_id_or_btime(RootFs("/")));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().find("written by a newer gpudoctor (history schema 99; this one knows up "
                             "to 3)"),
              std::string::npos)
        << s.error();
  }
  auto r = HistoryReader::open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().rfind(path + ": written by a newer gpudoctor", 0), 0u) << r.error();
  EXPECT_EQ(sql(path, "PRAGMA user_version"), "99");
}

TEST(HistoryStore, OtherSqliteFilesRefusedAndLeftAlone) {
  HistoryDir dir;
  std::string plain = dir.file("plain.db");
  sql(plain, "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)");
  std::string foreign = dir.file("foreign.db");
  sql(foreign, "PRAGMA application_id = 1234; CREATE TABLE t (x)");
  for (const auto& [path, why] :
       {std::pair{plain, "not a gpudoctor history (an SQLite database of another program)"},
        std::pair{foreign,
                  "not a gpudoctor history (an SQLite database with application_id "
                  "0x000004d2)"}}) {
    auto s = open_history(path, true, boot_id_or_btime(RootFs("/")));
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.error(), path + ": " + why);
    auto r = HistoryReader::open(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), path + ": " + why);
  }
  // Not written into: no tables of ours, the journal mode untouched.
  EXPECT_EQ(sql(plain, "SELECT group_concat(name) FROM sqlite_master"), "notes");
  EXPECT_EQ(sql(plain, "PRAGMA journal_mode"), "delete");
}

TEST(HistoryStore, GarbageFileRefused) {
  HistoryDir dir;
  std::string path = dir.file("garbage.db");
  {
    std::ofstream out(path);
    for (int i = 0; i < 500; ++i) out << "this is no database at all\n";
  }
  auto size = std::filesystem::file_size(path);
  for (bool create : {true, false}) {
    auto s = open_history(path, create, boot_id_or_btime(RootFs("/")));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error(), path + ": not a gpudoctor history (not an SQLite database)");
  }
  auto r = HistoryReader::open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), path + ": not a gpudoctor history (not an SQLite database)");
  EXPECT_EQ(std::filesystem::file_size(path), size);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(HistoryStore, EmptyFileIsInitialisedByTheWriterOnly) {
  HistoryDir dir;
  std::string path = dir.file("empty.db");
  std::ofstream(path).close();
  auto r = HistoryReader::open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), path + ": not a gpudoctor history (an empty database)");
  must_open(path);
  EXPECT_TRUE(HistoryReader::open(path).ok());
}

TEST(HistoryStore, ReaderBesideTheWriter) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  ASSERT_TRUE(store->add_report(kT0, make_report({}), "{}").ok());
  constexpr int kReports = 300;
  std::atomic<bool> done{false};
  std::string reader_error;
  int64_t reads = 0;
  std::thread reader([&] {
    // Its own connections, opened and reopened while the writer commits.
    int64_t last = 0;
    while (!done || reads == 0) {
      auto r = HistoryReader::open(path);
      if (!r.ok()) {
        reader_error = r.error();
        return;
      }
      for (int i = 0; i < 5; ++i) {
        auto span = r->report_span(0, kAll);
        if (!span.ok()) {
          reader_error = span.error();
          return;
        }
        if (span->count < last) {
          reader_error = "count went back from " + std::to_string(last);
          return;
        }
        last = span->count;
        int64_t seen = 0;
        auto each = r->for_each_report(0, kAll, [&](const StoredReport&) { ++seen; });
        if (!each.ok() || seen < last) {
          reader_error = each.ok() ? "a report vanished" : each.error();
          return;
        }
        ++reads;
      }
    }
  });
  Report r = make_report({make_finding("thermal.high", Severity::kWarn, {"0000:17:00.0"})});
  for (int i = 1; i < kReports; ++i) {
    auto ok = store->add_report(kT0 + i, r, "{}");
    ASSERT_TRUE(ok.ok()) << ok.error();
    auto ev = store->add_boot_events(
        kT0 + i, "b", {xid(79, "0000:17:00.0", "[1.0]", "[" + std::to_string(i) + ".0]", i)});
    ASSERT_TRUE(ev.ok()) << ev.error();
  }
  done = true;
  reader.join();
  EXPECT_EQ(reader_error, "");
  EXPECT_GT(reads, 0);
  auto span = must_read(path).report_span(0, kAll);
  ASSERT_TRUE(span.ok());
  EXPECT_EQ(span->count, kReports);
}

TEST(HistoryStore, DefaultPath) {
  const char* old_xdg = std::getenv("XDG_STATE_HOME");
  std::string saved = old_xdg ? old_xdg : "";
  setenv("XDG_STATE_HOME", "/x/state", 1);
  std::string p = default_history_path();
  if (geteuid() == 0) {
    EXPECT_EQ(p, "/var/lib/gpudoctor/history.db");
  } else {
    EXPECT_EQ(p, "/x/state/gpudoctor/history.db");
  }
  if (old_xdg) {
    setenv("XDG_STATE_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_STATE_HOME");
  }
}

TEST(HistoryStore, BootId) {
  std::string id = boot_id_or_btime(RootFs("/"));
  EXPECT_FALSE(id.empty());
  HistoryDir dir;
  EXPECT_EQ(boot_id_or_btime(RootFs(dir.file(""))), "");
}

// --- --since ---------------------------------------------------------------------

class HistorySince : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    had_tz_ = tz != nullptr;
    if (tz) old_tz_ = tz;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_tz_) {
      setenv("TZ", old_tz_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  bool had_tz_ = false;
  std::string old_tz_;
};

TEST_F(HistorySince, DurationsAndDays) {
  const int64_t now = kT0 + 36 * 3600'000;  // 2026-03-02T12:00:00Z
  EXPECT_EQ(*parse_since("2h", now), now - 2 * 3600'000);
  EXPECT_EQ(*parse_since("1d", now), now - 86400'000);
  EXPECT_EQ(*parse_since("90", now), now - 90'000);
  EXPECT_EQ(*parse_since("today", now), kT0 + 86400'000);
  EXPECT_EQ(*parse_since("yesterday", now), kT0);
  EXPECT_EQ(*parse_since("100000w", now), 0);
}

TEST_F(HistorySince, Dates) {
  const int64_t now = kT0;
  EXPECT_EQ(*parse_since("2026-03-01", now), kT0);
  EXPECT_EQ(*parse_since("2026-03-01 14:00", now), kT0 + 14 * 3600'000);
  EXPECT_EQ(*parse_since("2026-03-01T14:00:05", now), kT0 + 14 * 3600'000 + 5000);
  EXPECT_EQ(*parse_since("2026-03-01T14:00:05.250Z", now), kT0 + 14 * 3600'000 + 5250);
  EXPECT_EQ(*parse_since("2026-03-01T14:00:05+02:00", now), kT0 + 12 * 3600'000 + 5000);
  EXPECT_EQ(*parse_since("2026-03-01T14:00:05-0130", now),
            kT0 + 15 * 3600'000 + 30 * 60'000 + 5000);
  EXPECT_EQ(*parse_since("2024-02-29", now), 1'709'164'800'000);
}

TEST_F(HistorySince, BadInputIsOneLine) {
  for (const char* bad : {"", "soon", "2h ago", "-1h", "2026-02-30", "2025-02-29", "2026-13-01",
                          "2026-03-01T25:00", "2026-03-01T10:00:00+", "2026-03-01x", "1969-12-31",
                          "2026-3-1", "2026-03-01T10", "2026-03-01T10:00Zjunk"}) {
    auto r = parse_since(bad, kT0);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().find('\n'), std::string::npos);
    }
  }
  auto r = parse_since(std::string("20\n26-03-01\x01") + std::string(100, 'x'), kT0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().find('\n'), std::string::npos);
  EXPECT_LT(r.error().size(), 200u);
}

// --- what changed ----------------------------------------------------------------

StoredReport stored(int64_t t, const std::string& verdict, std::vector<StoredFinding> fs) {
  return StoredReport{t, t, verdict, std::move(fs)};
}

TEST(HistoryChanges, AppearedChangedCleared) {
  StoredReport a = stored(1, "warn",
                          {{"thermal.high", "warn", {"0000:3b:00.0"}, "88 C"},
                           {"persistence-mode.off", "info", {}, "off"}});
  StoredReport b = stored(2, "fail",
                          {{"gpu.fallen-off-bus", "fail", {"0000:9b:00.0"}, "lost"},
                           {"thermal.high", "fail", {"0000:3b:00.0"}, "93 C"},
                           {"persistence-mode.off", "info", {}, "off"}});
  StoredReport c = stored(3, "info", {{"persistence-mode.off", "info", {}, "off"}});
  std::vector<Change> out;
  diff_reports(&a, b, "", &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, Change::Kind::kVerdict);
  EXPECT_EQ(out[0].from, "warn");
  EXPECT_EQ(out[0].to, "fail");
  EXPECT_EQ(out[1].kind, Change::Kind::kAppeared);
  EXPECT_EQ(out[1].finding.id, "gpu.fallen-off-bus");
  EXPECT_EQ(out[2].kind, Change::Kind::kChanged);
  EXPECT_EQ(out[2].from, "warn");
  EXPECT_EQ(out[2].to, "fail");
  out.clear();
  diff_reports(&b, c, "", &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, Change::Kind::kCleared);
  EXPECT_EQ(out[1].finding.id, "gpu.fallen-off-bus");
  EXPECT_EQ(out[2].kind, Change::Kind::kCleared);
  EXPECT_EQ(out[2].finding.summary, "93 C");
  // Nothing new: nothing said, whatever the summaries.
  out.clear();
  StoredReport c2 = stored(4, "info", {{"persistence-mode.off", "info", {}, "still off"}});
  diff_reports(&c, c2, "", &out);
  EXPECT_TRUE(out.empty());
}

TEST(HistoryChanges, FirstReportAndGpuFilter) {
  StoredReport b = stored(2, "fail",
                          {{"gpu.fallen-off-bus", "fail", {"0000:9b:00.0"}, "lost"},
                           {"thermal.high", "fail", {"0000:3b:00.0"}, "93 C"}});
  std::vector<Change> out;
  diff_reports(nullptr, b, "", &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kind, Change::Kind::kVerdict);
  EXPECT_EQ(out[0].from, "");
  out.clear();
  diff_reports(nullptr, b, "0000:9b:00.0", &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].finding.id, "gpu.fallen-off-bus");
}

TEST(HistoryChanges, PerGpuFindingsOfOneId) {
  StoredReport a = stored(1, "warn", {{"thermal.high", "warn", {"0000:17:00.0"}, "hot"}});
  StoredReport b = stored(2, "warn", {{"thermal.high", "warn", {"0000:3b:00.0"}, "hot"}});
  std::vector<Change> out;
  diff_reports(&a, b, "", &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, Change::Kind::kAppeared);
  EXPECT_EQ(out[0].finding.gpus[0], "0000:3b:00.0");
  EXPECT_EQ(out[1].kind, Change::Kind::kCleared);
  EXPECT_EQ(out[1].finding.gpus[0], "0000:17:00.0");
}

// --- a history moved or deleted under the writer (issue 33, item 4) ---------------

TEST(HistoryStore, SaysWhenItsFileIsMovedOrDeleted) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  EXPECT_EQ(store->replaced(), "");
  ASSERT_EQ(std::rename(path.c_str(), dir.file("moved.db").c_str()), 0);
  EXPECT_EQ(store->replaced(), "moved or deleted");  // nothing at the path
  ASSERT_TRUE(store->add_report(kT0, make_report({}), "{}").ok());
  // Closed: the moved file has its report, and the path no -wal of it.
  store->close_replaced();
  EXPECT_EQ(sql(dir.file("moved.db"), "SELECT count(*) FROM reports"), "1");
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  auto other = must_open(path);  // another file there now
  EXPECT_EQ(store->replaced(), "replaced by another file");
  EXPECT_EQ(other->replaced(), "");
  ASSERT_EQ(std::remove(path.c_str()), 0);
  EXPECT_EQ(other->replaced(), "moved or deleted");
}

// --- report JSON stored as changes (issue 33, item 5) -----------------------------

// A report JSON like render_json's: ordered keys, two-space indent, with a
// bulk of findings that do not change and values that do.
std::string flap_json(bool lost, int n) {
  nlohmann::ordered_json j;
  j["schema"] = "gpudoctor.report/v1";
  j["verdict"] = lost ? "fail" : "ok";
  j["gpus"] = nlohmann::ordered_json::array();
  for (int i = 0; i < 8; ++i) {
    j["gpus"].push_back({{"bus_id", "0000:" + std::to_string(10 + i) + ":00.0"},
                         {"nvml_index", i},
                         {"uuid", "GPU-" + std::to_string(i)},
                         {"temperature_c", lost && i == 3 ? -1 : 40 + (n + i) % 7}});
  }
  j["findings"] = nlohmann::ordered_json::array();
  if (lost) {
    j["findings"].push_back({{"id", "gpu.fallen-off-bus"},
                             {"severity", "fail"},
                             {"gpus", {"0000:13:00.0"}},
                             {"evidence", {"NVML: GPU_IS_LOST"}}});
  }
  for (int i = 0; i < 20; ++i) {
    j["findings"].push_back({{"id", "check.number-" + std::to_string(i)},
                             {"severity", "ok"},
                             {"summary", std::string(300, 'x')},
                             {"evidence", {std::string(200, 'e')}}});
  }
  j["probes"] = {{"nvml", {{"status", "ok"}, {"duration_ms", 10 + n % 13}}}};
  return j.dump(2) + "\n";
}

Report flap_report(bool lost) {
  return make_report(lost ? std::vector<Finding>{make_finding("gpu.fallen-off-bus", Severity::kFail,
                                                              {"0000:13:00.0"}, "lost")}
                          : std::vector<Finding>{});
}

TEST(HistoryStore, AFlappingReportIsStoredAsChangesAndReadBackWhole) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  std::vector<std::pair<int64_t, std::string>> written;
  // Lost and back every 6 s for 2 h 10 min.
  for (int n = 0; n < 1300; ++n) {
    int64_t t = kT0 + n * 6000;
    written.emplace_back(t, flap_json(n % 2 == 1, n));
    ASSERT_TRUE(store->add_report(t, flap_report(n % 2 == 1), written.back().second).ok());
  }
  // A whole report at the start and at least hourly; the rest as changes.
  EXPECT_EQ(sql(path, "SELECT count(report_json) FROM reports"), "3");
  EXPECT_EQ(sql(path, "SELECT count(report_patch) FROM reports"), "1297");
  EXPECT_EQ(sql(path,
                "SELECT count(*) FROM reports r JOIN reports b ON b.id = r.base_id "
                "WHERE b.report_json IS NOT NULL AND r.time_ms - b.time_ms < 3600000"),
            "1297");
  auto whole = std::stoll(sql(path, "SELECT sum(length(report_json)) FROM reports")) / 3;
  auto change = std::stoll(sql(path, "SELECT max(length(report_patch)) FROM reports"));
  EXPECT_LT(change * 10, whole) << change << " bytes of change against " << whole;

  // Every report reads back as it was written, text and all.
  auto reader = must_read(path);
  for (size_t i = 0; i < written.size(); i += 47) {
    auto at = reader.report_json_at(written[i].first);
    ASSERT_TRUE(at.ok()) << at.error();
    ASSERT_TRUE(at->has_value());
    EXPECT_EQ((*at)->time_ms, written[i].first);
    ASSERT_EQ((*at)->json, written[i].second) << i;
  }
  EXPECT_FALSE(reader.report_json_at(kT0 - 1)->has_value());

  // Retention takes the first hour's whole report: the changes that
  // outlive it get a new base, and still read back.
  int64_t cutoff = kT0 + 30 * 60 * 1000 + 1;
  auto removed = store->prune(cutoff);
  ASSERT_TRUE(removed.ok()) << removed.error();
  EXPECT_EQ(*removed, 301);
  EXPECT_EQ(sql(path,
                "SELECT count(*) FROM reports r LEFT JOIN reports b ON b.id = r.base_id "
                "WHERE r.report_patch IS NOT NULL AND b.report_json IS NULL"),
            "0");
  auto after = must_read(path);
  for (size_t i = 301; i < written.size(); i += 29) {
    auto at = after.report_json_at(written[i].first);
    ASSERT_TRUE(at.ok()) << at.error();
    ASSERT_TRUE(at->has_value());
    ASSERT_EQ((*at)->json, written[i].second) << i;
  }
  // The writer goes on after the prune, from a base that is still there.
  ASSERT_TRUE(
      store->add_report(kT0 + 1300 * 6000, flap_report(false), flap_json(false, 1300)).ok());
  auto last = must_read(path).report_json_at(kAll);
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ((*last)->json, flap_json(false, 1300));
  EXPECT_EQ(sql(path, "SELECT report_patch IS NOT NULL FROM reports ORDER BY id DESC LIMIT 1"),
            "1");
}

TEST(HistoryStore, WithoutPatchesEveryChangedReportIsWhole) {
  HistoryDir dir;
  std::string path = dir.file("h.db");
  auto store = open_history(path, true, "boot", false);
  ASSERT_TRUE(store.ok()) << store.error();
  for (int n = 0; n < 10; ++n) {
    ASSERT_TRUE((*store)
                    ->add_report(kT0 + n * 3000, flap_report(n % 2 == 1), flap_json(n % 2 == 1, n))
                    .ok());
  }
  EXPECT_EQ(sql(path, "SELECT count(report_json) FROM reports"), "10");
  EXPECT_EQ(sql(path, "SELECT count(report_patch) FROM reports"), "0");
}

}  // namespace
}  // namespace gd
