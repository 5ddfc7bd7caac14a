// serve's state logic (staleness, the last good sample served on, Xid
// counters seeded once from the first check, /healthz reasons) and the
// daemon's routes in --from mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "diag/json.h"
#include "probe/rootfs.h"
#include "serve/daemon.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

constexpr int64_t kT0 = 1'800'000'000'000;  // ms

SampleResult good_sample(int temperature_c) {
  SampleResult r;
  r.ok = true;
  r.duration_ms = 3;
  r.nvml.attempted = true;
  r.nvml.init_rc = 0;
  NvmlGpu& g = r.nvml.gpus.emplace_back();
  g.pci_bus_id = fixtures::nv_ok<std::string>("0000:17:00.0");
  g.health.temperature_c = fixtures::nv_ok(temperature_c);
  return r;
}

SampleResult failed_sample(const std::string& why) {
  SampleResult r;
  r.ok = false;
  r.error = why;
  return r;
}

KernelEvent xid(const std::string& gpu, int code, int count = 1) {
  KernelEvent e;
  e.kind = "xid";
  e.gpu = gpu;
  e.code = code;
  e.count = count;
  return e;
}

std::shared_ptr<const CheckState> check_with_events(std::vector<KernelEvent> events) {
  auto snap = std::make_shared<Snapshot>(fixtures::hgx_8xh100());
  snap->kernel_log.source = "/dev/kmsg";
  snap->kernel_log.events = std::move(events);
  auto c = std::make_shared<CheckState>();
  c->snapshot = snap;
  c->report.snapshot = snap.get();
  return c;
}

TEST(SampleIsStale, NoSampleAFailedAttemptOrAnOldSampleIsStale) {
  SampleState s;
  EXPECT_TRUE(sample_is_stale(s, kT0, 15));  // none yet
  s.have_sample = true;
  s.taken_unix_ms = kT0;
  EXPECT_FALSE(sample_is_stale(s, kT0 + 30'000, 15));  // exactly two intervals
  EXPECT_TRUE(sample_is_stale(s, kT0 + 30'001, 15));
  s.last_error = "timeout after 10.0 s in nvmlDeviceGetTemperature (GPU 0)";
  EXPECT_TRUE(sample_is_stale(s, kT0, 15));
}

TEST(DaemonState, AFailedSampleKeepsTheLastGoodOneMarkedStale) {
  DaemonState st("node1", kT0, 15, 60);
  st.record_sample(good_sample(41), kT0, {1, 0, 0});
  ExporterView v = st.view(kT0 + 1000);
  EXPECT_TRUE(v.sample.have_sample);
  EXPECT_FALSE(v.sample.stale);
  EXPECT_EQ(v.sample.nvml.gpus.at(0).health.temperature_c.value, 41);
  EXPECT_EQ(v.hostname, "node1");
  EXPECT_EQ(v.interval_s, 15);

  st.record_sample(failed_sample("crashed: SIGSEGV in nvmlDeviceGetPowerUsage (GPU 0)"),
                   kT0 + 15'000, {2, 1, 0});
  v = st.view(kT0 + 15'001);
  EXPECT_TRUE(v.sample.have_sample);
  EXPECT_TRUE(v.sample.stale);
  EXPECT_EQ(v.sample.nvml.gpus.at(0).health.temperature_c.value, 41);  // the last good values
  EXPECT_EQ(v.sample.taken_unix_ms, kT0);
  EXPECT_EQ(v.sample.last_error, "crashed: SIGSEGV in nvmlDeviceGetPowerUsage (GPU 0)");
  EXPECT_EQ(v.sample.attempts, 2u);
  EXPECT_EQ(v.sample.failures, 1u);

  st.record_sample(good_sample(43), kT0 + 30'000, {3, 1, 1});
  v = st.view(kT0 + 30'001);
  EXPECT_FALSE(v.sample.stale);
  EXPECT_EQ(v.sample.last_error, "");
  EXPECT_EQ(v.sample.nvml.gpus.at(0).health.temperature_c.value, 43);
  EXPECT_EQ(v.sample.restarts, 1u);
  // Nothing new for more than two intervals: stale without an error.
  EXPECT_TRUE(st.view(kT0 + 30'000 + 30'001).sample.stale);
}

TEST(DaemonState, NoSampleYetIsStaleAndSaysWhy) {
  DaemonState st("node1", kT0, 15, 60);
  EXPECT_TRUE(st.view(kT0).sample.stale);
  EXPECT_FALSE(st.view(kT0).sample.have_sample);
  st.record_sample(failed_sample("libnvidia-ml.so.1: cannot open shared object file"), kT0,
                   {1, 1, 0});
  ExporterView v = st.view(kT0);
  EXPECT_FALSE(v.sample.have_sample);
  EXPECT_TRUE(v.sample.stale);
  EXPECT_EQ(st.unhealthy_reason(kT0, 60'000, 600'000),
            "no NVML sample yet: libnvidia-ml.so.1: cannot open shared object file");
}

TEST(DaemonState, XidCountersAreSeededOnceFromTheFirstCheckThenFollowed) {
  DaemonState st("node1", kT0, 15, 60);
  EXPECT_FALSE(st.xids_seeded());
  KernelEvent nvrm;
  nvrm.kind = "nvrm";
  nvrm.type = "fallen-off-bus";
  st.record_check(
      check_with_events({xid("0000:17:00.0", 79, 2), xid("0000:2a:00.0", 13), nvrm, xid("", 31)}),
      "{}");
  EXPECT_TRUE(st.xids_seeded());
  ExporterView v = st.view(kT0);
  using Key = std::pair<std::string, int>;
  EXPECT_EQ(v.xid_counts.size(), 3u);
  EXPECT_EQ(v.xid_counts[Key("0000:17:00.0", 79)], 2u);
  EXPECT_EQ(v.xid_counts[Key("0000:2a:00.0", 13)], 1u);
  EXPECT_EQ(v.xid_counts[Key("", 31)], 1u);
  EXPECT_EQ(v.kernel_log_source, "/dev/kmsg");

  // A later check sees the same events again (and one more the follower
  // already counted): no second seeding, so the counters stay stable.
  st.record_kernel_event(xid("0000:17:00.0", 79));
  st.record_kernel_event(nvrm);  // not an Xid: not counted
  st.record_check(check_with_events({xid("0000:17:00.0", 79, 3), xid("0000:2a:00.0", 13)}), "{}");
  v = st.view(kT0);
  EXPECT_EQ(v.xid_counts[Key("0000:17:00.0", 79)], 3u);
  EXPECT_EQ(v.xid_counts[Key("0000:2a:00.0", 13)], 1u);
  EXPECT_EQ(v.xid_counts.size(), 3u);
}

TEST(DaemonState, TheLastCheckAndItsJsonAreServed) {
  DaemonState st("node1", kT0, 15, 60);
  EXPECT_EQ(st.report_json(), nullptr);
  EXPECT_EQ(st.view(kT0).check, nullptr);
  auto c = check_with_events({});
  st.record_check(c, "{\"schema\": \"gpudoctor.report/v1\"}\n");
  ASSERT_NE(st.report_json(), nullptr);
  EXPECT_EQ(*st.report_json(), "{\"schema\": \"gpudoctor.report/v1\"}\n");
  ExporterView v = st.view(kT0);
  ASSERT_NE(v.check, nullptr);
  EXPECT_EQ(v.check->report.snapshot, c->snapshot.get());
}

TEST(DaemonState, UnhealthyReasons) {
  DaemonState st("node1", kT0, 15, 60);
  st.record_sample(good_sample(40), kT0, {1, 0, 0});
  st.beat_sampler(kT0);
  st.beat_check(kT0);
  EXPECT_EQ(st.unhealthy_reason(kT0 + 1000, 40'000, 200'000), "");
  EXPECT_EQ(st.unhealthy_reason(kT0 + 31'000, 40'000, 200'000),
            "the last NVML sample is stale: taken 31 s ago");
  EXPECT_EQ(st.unhealthy_reason(kT0 + 41'000, 40'000, 200'000),
            "the sampler loop has not finished a round for 41 s");
  st.beat_sampler(kT0 + 250'000);
  st.record_sample(good_sample(40), kT0 + 250'000, {2, 0, 0});
  EXPECT_EQ(st.unhealthy_reason(kT0 + 250'000, 40'000, 200'000),
            "the check loop has not finished a round for 250 s");
  st.beat_check(kT0 + 250'000);
  st.record_sample(failed_sample("timeout after 10.0 s in nvmlDeviceGetCount_v2"), kT0 + 250'000,
                   {3, 1, 0});
  EXPECT_EQ(st.unhealthy_reason(kT0 + 250'000, 40'000, 200'000),
            "the last NVML sample is stale: timeout after 10.0 s in nvmlDeviceGetCount_v2");
}

// The daemon serving a recorded machine: no child, the snapshot's NVML
// values are the sample and its checks the report.
class FromSnapshotDaemon : public ::testing::Test {
 protected:
  DaemonOptions options() {
    DaemonOptions o;
    o.http.listen = "127.0.0.1:0";
    o.interval_s = 0.2;
    o.check_interval_s = 0.5;
    auto snap = std::make_shared<Snapshot>(fixtures::hgx_8xh100());
    snap->kernel_log.attempted = true;
    snap->kernel_log.source = "/dev/kmsg";
    snap->kernel_log.events = {xid("0000:18:00.0", 79, 4)};
    o.from = snap;
    o.log = [this](const std::string& line) { notes_.push_back(line); };
    return o;
  }
  std::vector<std::string> notes_;
};

TEST_F(FromSnapshotDaemon, ServesTheRecordedMachine) {
  auto d = Daemon::start(options());
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_GT((*d)->port(), 0);
  auto routes = (*d)->routes();
  HttpResponse health = routes["/healthz"]();
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.body, "ok\n");
  HttpResponse report = routes["/report.json"]();
  EXPECT_EQ(report.status, 200);
  EXPECT_EQ(report.content_type, "application/json");
  EXPECT_NE(report.body.find("\"gpudoctor.report/v1\""), std::string::npos);
  HttpResponse metrics = routes["/metrics"]();
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  HttpResponse page = routes["/"]();
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");

  ExporterView v = (*d)->state().view(kT0);
  EXPECT_EQ(v.sample.nvml.gpus.size(), 8u);
  EXPECT_EQ((v.xid_counts[{"0000:18:00.0", 79}]), 4u);
  ASSERT_NE(v.check, nullptr);
  EXPECT_GE(v.check->runs, 1u);
  EXPECT_TRUE(v.history_ok);
  EXPECT_TRUE((*d)->stop(std::chrono::milliseconds(3000)));
  EXPECT_TRUE(notes_.empty());
}

TEST_F(FromSnapshotDaemon, AHistoryThatCannotBeOpenedIsNotedOnceAndNotFatal) {
  DaemonOptions o = options();
  o.history_path = "/proc/gpudoctor-no-such-dir/history.db";
  auto d = Daemon::start(o);
  ASSERT_TRUE(d.ok()) << d.error();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // two more checks
  ExporterView v = (*d)->state().view(kT0);
  EXPECT_FALSE(v.history_ok);
  EXPECT_GE(v.check->runs, 2u);
  EXPECT_EQ((*d)->routes()["/report.json"]().status, 200);
  EXPECT_TRUE((*d)->stop(std::chrono::milliseconds(3000)));
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("history /proc/gpudoctor-no-such-dir/history.db"), std::string::npos)
      << notes_[0];
}

// `gpudoctor diag` writes a run into the history the daemon keeps: the
// daemon reads the newest one at start and after every check, and serves
// it on /metrics, /report.json and / (its findings while within
// --diag-max-age).
TEST_F(FromSnapshotDaemon, ServesTheNewestDiagRunOfTheHistory) {
  char tmpl[] = "/tmp/gd-serve-diag-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/history.db";
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  auto diag_report = [](const char* id, Severity sev) {
    Finding f;
    f.id = id;
    f.severity = sev;
    f.gpus = {"0000:18:00.0"};
    f.summary = std::string(id) + " on 0000:18:00.0";
    f.remedy = {"drain the node"};
    Report r;
    r.verdict = sev;
    r.findings = {f};
    return r;
  };
  // What `gpudoctor diag` stores: {"run": gpudoctor.diag/v1, "figures": [...]}.
  auto diag_json = [](int level) {
    DiagRun run;
    run.level = level;
    nlohmann::json j = {{"run", diag_run_to_json(run)}, {"figures", nlohmann::json::array()}};
    j["run"]["level"] = level;
    return j.dump();
  };
  // The daemon notes a stored run it cannot parse (its figures are then
  // not served); with diag/json.cc complete it notes nothing.
  const bool parses = diag_run_from_json(nlohmann::json::parse(diag_json(2))["run"]).ok();
  {
    auto store = open_history(path, true, boot_id_or_btime(RootFs("/")));
    ASSERT_TRUE(store.ok()) << store.error();
    // One too old to count, then the newest, a day old.
    ASSERT_TRUE((*store)
                    ->add_diag(now_ms() - 9 * 86400'000LL,
                               diag_report("compute.mismatch", Severity::kFail), diag_json(3))
                    .ok());
    ASSERT_TRUE((*store)
                    ->add_diag(now_ms() - 86400'000LL,
                               diag_report("memory.test-failed", Severity::kFail), diag_json(2))
                    .ok());
  }
  DaemonOptions o = options();
  o.history_path = path;
  auto d = Daemon::start(o);
  ASSERT_TRUE(d.ok()) << d.error();
  auto routes = (*d)->routes();
  std::string metrics = routes["/metrics"]().body;
  EXPECT_NE(metrics.find("\ngpudoctor_diag_level 2\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\ngpudoctor_diag_verdict{severity=\"fail\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("gpudoctor_finding{id=\"memory.test-failed\",severity=\"fail\",gpu=\"0\","
                         "bus_id=\"0000:18:00.0\""),
            std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("compute.mismatch"), std::string::npos);  // not the newest run
  std::string report = routes["/report.json"]().body;
  EXPECT_NE(report.find("\"last_diag\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"memory.test-failed\""), std::string::npos);
  EXPECT_NE(routes["/"]().body.find("gpudoctor diag level 2"), std::string::npos);

  // A newer run, written while the daemon serves, shows after the next
  // check; one older than --diag-max-age keeps its series, not its finding.
  {
    auto store = open_history(path, false, boot_id_or_btime(RootFs("/")));
    ASSERT_TRUE(store.ok()) << store.error();
    ASSERT_TRUE((*store)
                    ->add_diag(now_ms() - 8 * 86400'000LL,
                               diag_report("perf.pcie-slow", Severity::kWarn), diag_json(1))
                    .ok());
  }
  bool seen = false;
  for (int i = 0; i < 40 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    seen = routes["/metrics"]().body.find("\ngpudoctor_diag_level 1\n") != std::string::npos;
  }
  EXPECT_TRUE(seen) << routes["/metrics"]().body;
  metrics = routes["/metrics"]().body;
  EXPECT_NE(metrics.find("\ngpudoctor_diag_verdict{severity=\"warn\"} 1\n"), std::string::npos);
  EXPECT_EQ(metrics.find("perf.pcie-slow"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("memory.test-failed"), std::string::npos) << metrics;
  EXPECT_EQ(routes["/report.json"]().body.find("\"last_diag\""), std::string::npos);
  EXPECT_TRUE((*d)->stop(std::chrono::milliseconds(3000)));
  if (parses) {
    EXPECT_TRUE(notes_.empty()) << notes_.at(0);
  }
  for (const std::string& n : notes_) {
    EXPECT_NE(n.find("history " + path + ": diag run "), std::string::npos) << n;
  }
  std::filesystem::remove_all(dir);
}

TEST_F(FromSnapshotDaemon, APortTakenIsAnError) {
  auto first = Daemon::start(options());
  ASSERT_TRUE(first.ok()) << first.error();
  DaemonOptions o = options();
  o.http.listen = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = Daemon::start(o);
  EXPECT_FALSE(second.ok());
}

}  // namespace
}  // namespace gd
