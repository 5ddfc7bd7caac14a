// `gpudoctor diag` runs in the history (schema 2): stored apart from the
// check reports with the findings that say something, read back (the
// newest, a window), pruned, an existing version-1 file migrated in place,
// and `gpudoctor history` listing them in their own section, never as a
// change of the check reports.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "history/reader.h"
#include "history/store.h"
#include "probe/rootfs.h"
#include "test_util.h"

namespace gd {
namespace {

constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
constexpr int64_t kT0 = 1'772'323'200'000;  // 2026-03-01T00:00:00Z
constexpr int64_t kHourMs = 3600 * 1000;

class TempDir : public testing_util::TempDir {
 public:
  TempDir() : testing_util::TempDir("history-diag") {}
};

// Runs SQL with a plain connection; the first column of the last row
// returned, or "" (an error is the message, prefixed "error: ").
std::string sql(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  std::string out;
  char* err = nullptr;
  auto cb = [](void* o, int n, char** v, char**) {
    if (n > 0) *static_cast<std::string*>(o) = v[0] ? v[0] : "";
    return 0;
  };
  if (sqlite3_exec(db, query.c_str(), cb, &out, &err) != SQLITE_OK) {
    out = std::string("error: ") + (err ? err : "?");
    sqlite3_free(err);
  }
  sqlite3_close(db);
  return out;
}

using testing_util::make_finding;
using testing_util::make_report;

std::string diag_json(int level, const std::string& marker = "") {
  nlohmann::json j;
  j["run"] = {{"schema", "gpudoctor.diag/v1"}, {"level", level}, {"helper", marker}};
  j["figures"] = nlohmann::json::array();
  return j.dump();
}

// A level-2 run on two GPUs: a memory test failure with its evidence and
// remedy, a slow PCIe link, and the ok and n/a findings the store skips.
Report level2_report() {
  Finding mem = make_finding("memory.test-failed", Severity::kFail, {"0000:9b:00.0"},
                             "GPU 0000:9b:00.0 failed the memory test: 3 failing words");
  mem.evidence = {"address 0x7f0000001000: wrote 0x0, read 0x100", "pattern walking-ones"};
  mem.remedy = {"nvidia-smi -q -d ROW_REMAPPER -i 0000:9b:00.0", "drain the node and RMA the GPU"};
  return make_report(
      {make_finding("perf.compute-slow", Severity::kOk, {}, "GEMM at expected speed"), mem,
       make_finding("perf.pcie-slow", Severity::kWarn, {"0000:17:00.0"},
                    "host copies at 45 % of the link's"),
       make_finding("nccl.slow", Severity::kNotApplicable, {}, "one GPU: no NCCL test")});
}

std::unique_ptr<HistoryStore> must_open(const std::string& path) {
  auto s = open_history(path, true, boot_id_or_btime(RootFs("/")));
  EXPECT_TRUE(s.ok()) << s.error();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(HistoryDiag, RunRoundTripsWithTheFindingsThatSaySomething) {
  TempDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  ASSERT_TRUE(store->add_diag(kT0, level2_report(), diag_json(2, "first")).ok());
  auto reader = HistoryReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error();
  auto id = reader->latest_diag_id();
  ASSERT_TRUE(id.ok()) << id.error();
  ASSERT_TRUE(id->has_value());
  auto run = reader->latest_diag_run();
  ASSERT_TRUE(run.ok()) << run.error();
  ASSERT_TRUE(run->has_value());
  const StoredDiagRun& r = **run;
  EXPECT_EQ(r.id, **id);
  EXPECT_EQ(r.time_ms, kT0);
  EXPECT_EQ(r.level, 2);
  EXPECT_EQ(r.verdict, "fail");
  EXPECT_EQ(r.diag_json, diag_json(2, "first"));
  ASSERT_EQ(r.findings.size(), 2u);  // not the ok and n/a ones
  EXPECT_EQ(r.findings[0].id, "memory.test-failed");
  EXPECT_EQ(r.findings[0].severity, "fail");
  EXPECT_EQ(r.findings[0].gpus, std::vector<std::string>{"0000:9b:00.0"});
  EXPECT_EQ(r.findings[0].summary, "GPU 0000:9b:00.0 failed the memory test: 3 failing words");
  EXPECT_EQ(r.findings[0].evidence.size(), 2u);
  EXPECT_EQ(r.findings[0].remedy.at(1), "drain the node and RMA the GPU");
  EXPECT_EQ(r.findings[1].id, "perf.pcie-slow");
  EXPECT_TRUE(r.findings[1].evidence.empty());
  EXPECT_EQ(sql(path, "SELECT findings FROM diag_runs"), "2");

  // Diag runs are not check reports: the reports' tables saw nothing.
  auto span = reader->report_span(0, kAll);
  ASSERT_TRUE(span.ok());
  EXPECT_EQ(span->count, 0);
  EXPECT_EQ(sql(path, "SELECT count(*) FROM findings"), "0");
}

TEST(HistoryDiag, TheNewestRunAndAWindow) {
  TempDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  auto reader = HistoryReader::open(path);
  ASSERT_TRUE(reader.ok());
  auto none = reader->latest_diag_run();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto no_id = reader->latest_diag_id();
  ASSERT_TRUE(no_id.ok());
  EXPECT_FALSE(no_id->has_value());

  ASSERT_TRUE(store->add_diag(kT0, level2_report(), diag_json(2, "a")).ok());
  ASSERT_TRUE(store->add_diag(kT0 + kHourMs, make_report({}), diag_json(1, "b")).ok());
  ASSERT_TRUE(store->add_diag(kT0 + 2 * kHourMs, level2_report(), diag_json(3, "c")).ok());
  auto latest = reader->latest_diag_run();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->level, 3);
  EXPECT_EQ((*latest)->diag_json, diag_json(3, "c"));
  auto id = reader->latest_diag_id();
  ASSERT_TRUE(id.ok() && id->has_value());
  EXPECT_EQ(**id, (*latest)->id);

  auto window = reader->diag_runs(kT0 + 1, kT0 + 2 * kHourMs);
  ASSERT_TRUE(window.ok()) << window.error();
  ASSERT_EQ(window->size(), 2u);
  EXPECT_EQ((*window)[0].level, 1);
  EXPECT_EQ((*window)[0].verdict, "ok");
  EXPECT_TRUE((*window)[0].findings.empty());
  EXPECT_EQ((*window)[0].diag_json, "");  // not asked for
  EXPECT_EQ((*window)[1].level, 3);
  EXPECT_EQ((*window)[1].findings.size(), 2u);
  auto with_json = reader->diag_runs(0, kAll, true);
  ASSERT_TRUE(with_json.ok());
  ASSERT_EQ(with_json->size(), 3u);
  EXPECT_EQ((*with_json)[0].diag_json, diag_json(2, "a"));
}

TEST(HistoryDiag, RefusesJsonWithoutALevel) {
  TempDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  for (const char* bad : {"", "[]", "{\"figures\": []}", "{\"run\": {\"level\": \"2\"}}", "{"}) {
    auto r = store->add_diag(kT0, level2_report(), bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().rfind(path + ": diag run: ", 0), 0u) << r.error();
    EXPECT_EQ(r.error().find('\n'), std::string::npos);
  }
  EXPECT_EQ(sql(path, "SELECT count(*) FROM diag_runs"), "0");
  EXPECT_EQ(sql(path, "SELECT count(*) FROM diag_findings"), "0");
}

TEST(HistoryDiag, PruneDropsOldRunsWithTheirFindings) {
  TempDir dir;
  std::string path = dir.file("h.db");
  auto store = must_open(path);
  ASSERT_TRUE(store->add_diag(kT0, level2_report(), diag_json(2)).ok());
  ASSERT_TRUE(store->add_diag(kT0 + 10 * kHourMs, level2_report(), diag_json(2)).ok());
  ASSERT_TRUE(store->add_report(kT0, make_report({}), "{}").ok());
  auto removed = store->prune(kT0 + kHourMs);
  ASSERT_TRUE(removed.ok()) << removed.error();
  EXPECT_EQ(*removed, 2);  // one report, one diag run
  EXPECT_EQ(sql(path, "SELECT count(*) FROM diag_runs"), "1");
  EXPECT_EQ(sql(path, "SELECT count(*) FROM diag_findings"), "2");
  EXPECT_EQ(sql(path, "SELECT min(time_ms) FROM diag_findings"),
            std::to_string(kT0 + 10 * kHourMs));
  // ON DELETE CASCADE: a run deleted by other means takes its findings.
  sql(path, "PRAGMA foreign_keys = ON; DELETE FROM diag_runs");
  EXPECT_EQ(sql(path, "SELECT count(*) FROM diag_findings"), "0");
}

// Schema 1 as step 0 -> 1 of src/history/db.cc wrote it (copied: that step
// is released and never changes).
constexpr const char* kSchema1 = R"sql(
PRAGMA auto_vacuum = INCREMENTAL;
PRAGMA journal_mode = WAL;
CREATE TABLE reports (
  id INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  findings INTEGER NOT NULL,
  report_json TEXT
);
CREATE INDEX reports_time ON reports(time_ms);
CREATE TABLE findings (
  report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
  time_ms INTEGER NOT NULL,
  id TEXT NOT NULL,
  severity TEXT NOT NULL,
  gpus TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX findings_report ON findings(report_id);
CREATE INDEX findings_time ON findings(time_ms);
CREATE INDEX findings_id ON findings(id, time_ms);
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  boot TEXT NOT NULL,
  kind TEXT NOT NULL,
  type TEXT NOT NULL,
  code INTEGER NOT NULL,
  gpu TEXT NOT NULL,
  message TEXT NOT NULL,
  line TEXT NOT NULL,
  first_stamp TEXT NOT NULL,
  last_stamp TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  count INTEGER NOT NULL,
  stored_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  UNIQUE (boot, kind, type, code, gpu, first_stamp)
);
CREATE INDEX events_gpu ON events(gpu, kind, code, last_seen_ms);
CREATE INDEX events_last ON events(last_seen_ms);
CREATE INDEX events_first ON events(first_seen_ms);
PRAGMA application_id = 1195657299;
PRAGMA user_version = 1;
)sql";

TEST(HistoryDiag, AVersion1FileIsMigratedInPlace) {
  TempDir dir;
  std::string path = dir.file("v1.db");
  ASSERT_EQ(sql(path, kSchema1), "wal");
  ASSERT_EQ(
      sql(path, "INSERT INTO reports VALUES (7, " + std::to_string(kT0) +
                    ", 'fail', 1, '{}'); INSERT INTO findings VALUES (7, " + std::to_string(kT0) +
                    ", 'xid.79', 'fail', '0000:9b:00.0', 'Xid 79 on GPU 0000:9b:00.0')"),
      "");
  ASSERT_EQ(sql(path, "PRAGMA application_id"), std::to_string(history::kApplicationId));
  ASSERT_EQ(sql(path, "PRAGMA user_version"), "1");

  // A reader does not migrate: it names the writer that will.
  auto early = HistoryReader::open(path);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.error().find("history schema 1 is older than this gpudoctor's (3)"),
            std::string::npos)
      << early.error();

  auto store = open_history(path, false, boot_id_or_btime(RootFs("/")));  // the writer migrates
  ASSERT_TRUE(store.ok()) << store.error();
  EXPECT_EQ(sql(path, "PRAGMA user_version"), "3");
  ASSERT_TRUE((*store)->add_diag(kT0 + kHourMs, level2_report(), diag_json(2)).ok());
  ASSERT_TRUE((*store)->add_report(kT0 + 2 * kHourMs, make_report({}), "{}").ok());

  auto reader = HistoryReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error();
  std::vector<StoredReport> reports;
  ASSERT_TRUE(
      reader->for_each_report(0, kAll, [&](const StoredReport& r) { reports.push_back(r); }).ok());
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].id, 7);
  EXPECT_EQ(reports[0].verdict, "fail");
  ASSERT_EQ(reports[0].findings.size(), 1u);
  EXPECT_EQ(reports[0].findings[0].id, "xid.79");
  auto run = reader->latest_diag_run();
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->time_ms, kT0 + kHourMs);
  EXPECT_EQ((*run)->findings.size(), 2u);
  EXPECT_EQ(sql(path, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(sql(path, "PRAGMA foreign_key_check"), "");
}

// --- gpudoctor history ------------------------------------------------------------

std::string history_out(const HistoryArgs& args, int* rc) {
  testing::internal::CaptureStdout();
  *rc = run_history(args);
  return testing::internal::GetCapturedStdout();
}

class HistoryDiagCli : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
    path_ = dir_.file("h.db");
    auto store = must_open(path_);
    // Check reports every hour; a diag run at 02:30 between the 02:00 and
    // 03:00 checks, which do not repeat its findings.
    for (int h = 0; h < 5; ++h) {
      ASSERT_TRUE(store->add_report(kT0 + h * kHourMs, make_report({}), "{}").ok());
    }
    ASSERT_TRUE(
        store->add_diag(kT0 + 2 * kHourMs + kHourMs / 2, level2_report(), diag_json(2)).ok());
    args_.db = path_;
    args_.now = "2026-03-01T06:00:00Z";
  }
  void TearDown() override { unsetenv("TZ"); }

  TempDir dir_;
  std::string path_;
  HistoryArgs args_;
};

TEST_F(HistoryDiagCli, TextListsTheRunApartFromTheChanges) {
  int rc = -1;
  std::string out = history_out(args_, &rc);
  EXPECT_EQ(rc, 0);
  size_t changes = out.find("\nChanges:\n");
  size_t diag = out.find("\nDiag runs:\n");
  ASSERT_NE(changes, std::string::npos) << out;
  ASSERT_NE(diag, std::string::npos) << out;
  EXPECT_LT(changes, diag);
  std::string change_part = out.substr(changes, diag - changes);
  EXPECT_EQ(change_part.find("memory.test-failed"), std::string::npos) << out;
  EXPECT_EQ(change_part.find("cleared"), std::string::npos) << out;
  EXPECT_NE(
      out.find("  2026-03-01 02:30:00  level 2  fail\n"
               "      fail memory.test-failed [0000:9b:00.0]: GPU 0000:9b:00.0 failed the "
               "memory test: 3 failing words\n"
               "      warn perf.pcie-slow [0000:17:00.0]: host copies at 45 % of the link's\n"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("nccl.slow"), std::string::npos) << out;  // n/a: not stored

  // A window after the run: no section at all.
  args_.since = "2026-03-01T03:00:00Z";
  out = history_out(args_, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out.find("Diag runs"), std::string::npos) << out;
}

TEST_F(HistoryDiagCli, JsonHasTheRunsAndNoChangeOfTheirs) {
  args_.json = true;
  int rc = -1;
  auto j = nlohmann::json::parse(history_out(args_, &rc));
  EXPECT_EQ(rc, 0);
  ASSERT_TRUE(j.contains("diag_runs")) << j.dump(2);
  ASSERT_EQ(j["diag_runs"].size(), 1u);
  const auto& r = j["diag_runs"][0];
  EXPECT_EQ(r["time"], "2026-03-01T02:30:00.000Z");
  EXPECT_EQ(r["level"], 2);
  EXPECT_EQ(r["verdict"], "fail");
  ASSERT_EQ(r["findings"].size(), 2u);
  EXPECT_EQ(r["findings"][0]["id"], "memory.test-failed");
  EXPECT_EQ(r["findings"][0]["gpus"], nlohmann::json::array({"0000:9b:00.0"}));
  EXPECT_EQ(r["findings"][1]["severity"], "warn");
  for (const auto& c : j["changes"]) {
    EXPECT_FALSE(c.contains("finding")) << c.dump();  // the check reports said nothing
  }
}

TEST_F(HistoryDiagCli, GpuKeepsOnlyThatGpusFindings) {
  args_.gpu = "0000:17:00.0";
  int rc = -1;
  std::string out = history_out(args_, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("level 2  fail\n      warn perf.pcie-slow"), std::string::npos) << out;
  EXPECT_EQ(out.find("memory.test-failed"), std::string::npos) << out;
  args_.gpu = "0000:3b:00.0";
  out = history_out(args_, &rc);
  EXPECT_NE(out.find("level 2  fail  (no findings on this GPU)\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace gd
