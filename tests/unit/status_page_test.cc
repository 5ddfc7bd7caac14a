// The status page (serve/status_page.h): every untrusted string escaped,
// stale marks, a row per GPU, the findings, the Xid table, and nothing that
// would make a browser fetch or run anything.
#include "serve/status_page.h"

#include <gtest/gtest.h>

#include <memory>

#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

constexpr int64_t kNowMs = 1796119215000;  // 2026-12-01T10:00:15Z

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

ExporterView view_of(Snapshot snap, std::vector<Finding> findings, Severity verdict) {
  ExporterView v;
  v.hostname = "node-7";
  v.version = "0.1.0";
  v.now_unix_ms = kNowMs;
  v.started_unix_ms = kNowMs - 3600 * 1000;
  v.sample.have_sample = true;
  v.sample.stale = false;
  v.sample.nvml = snap.nvml;
  v.sample.taken_unix_ms = kNowMs - 4000;
  auto c = std::make_shared<CheckState>();
  c->snapshot = std::make_shared<const Snapshot>(std::move(snap));
  c->report.findings = std::move(findings);
  c->report.verdict = verdict;
  c->report.snapshot = c->snapshot.get();
  c->finished_unix_ms = kNowMs - 20000;
  c->duration_ms = 180;
  v.check = c;
  v.kernel_log_source = "/dev/kmsg";
  return v;
}

Finding finding(std::string id, Severity s, std::vector<std::string> gpus) {
  Finding f;
  f.id = std::move(id);
  f.severity = s;
  f.gpus = std::move(gpus);
  f.summary = "GPU 0000:17:00.0 has fallen off the bus";
  f.evidence = {"NVRM: Xid (PCI:0000:17:00): 79, pid=1234, GPU has fallen off the bus."};
  f.remedy = {"sudo nvidia-smi -r -i 0000:17:00.0", "reboot if the reset fails"};
  return f;
}

TEST(StatusPage, OneRowPerGpuAndTheFindings) {
  std::vector<Finding> fs = {finding("gpu.fallen-off-bus", Severity::kFail, {"0000:17:00.0"}),
                             finding("thermal.high", Severity::kOk, {}),
                             finding("fabric-manager.not-running", Severity::kNotApplicable, {})};
  ExporterView v = view_of(hgx_8xh100(), fs, Severity::kFail);
  v.xid_counts[{"0000:17:00.0", 79}] = 3;
  std::string html = render_status_page(v);
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_EQ(count(html, "<tr class=\"gpu "), 8u);
  EXPECT_NE(html.find("<span id=host>node-7</span>"), std::string::npos);
  EXPECT_NE(html.find("id=verdict class=\"badge fail\">fail<"), std::string::npos);
  // Only what is not ok is a row; the rest is counted.
  EXPECT_EQ(count(html, "<tr class=\"finding "), 1u);
  EXPECT_NE(html.find("gpu.fallen-off-bus"), std::string::npos);
  EXPECT_EQ(html.find("thermal.high"), std::string::npos);
  EXPECT_NE(html.find("1 checks ok, 1 not applicable"), std::string::npos);
  EXPECT_NE(html.find("<li><code>sudo nvidia-smi -r -i 0000:17:00.0</code></li>"),
            std::string::npos);
  // Xid 79 with its meaning from the catalog.
  EXPECT_NE(html.find("<td class=num>79</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=num>3</td>"), std::string::npos);
  // Links to the other endpoints, same origin.
  EXPECT_NE(html.find("<a href=\"/metrics\">"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"/report.json\">"), std::string::npos);
  EXPECT_EQ(html.find("<span class=stale>"), std::string::npos) << "fresh sample and check";
}

TEST(StatusPage, TheCauseAboveTheGpusAndTheSickGpuFirst) {
  Finding cause = finding("fabric-manager.not-running", Severity::kFail, {});
  Finding effect = finding("gpu.fallen-off-bus", Severity::kWarn, {"0000:5d:00.0"});
  effect.follows_from = "fabric-manager.not-running";
  Snapshot s = hgx_8xh100();
  ExporterView v = view_of(s, {cause, effect}, Severity::kFail);
  v.interval_s = 15;
  std::string html = render_status_page(v);
  EXPECT_LT(html.find("id=findings"), html.find("id=gpus"));
  EXPECT_NE(html.find("(follows from <code>fabric-manager.not-running</code>)"), std::string::npos);
  // The GPU the warning names is the first row, marked; the others follow
  // in nvidia-smi order.
  const std::string want = "<tr class=\"gpu warn\" data-bus=\"0000:5d:00.0\">";
  EXPECT_EQ(html.substr(html.find("<tr class=\"gpu "), want.size()), want);
  EXPECT_EQ(count(html, "<tr class=\"gpu ok\""), 7u);
  EXPECT_NE(html.find("<meta http-equiv=refresh content=15>"), std::string::npos);
}

TEST(StatusPage, GpuValuesInUnits) {
  ExporterView v = view_of(hgx_8xh100(), {}, Severity::kOk);
  NvmlHealth& h = v.sample.nvml.gpus[2].health;
  h.temperature_c.value = 41;
  h.temperature_c.rc = 0;
  h.power_usage_mw.value = 123456;
  h.power_usage_mw.rc = 0;
  h.power_limit_mw.value = 700000;
  h.power_limit_mw.rc = 0;
  h.clock_event_reasons.value = 0x44;  // SW power cap + HW thermal
  h.clock_event_reasons.rc = 0;
  std::string html = render_status_page(v);
  EXPECT_NE(html.find("41 &deg;C"), std::string::npos);
  EXPECT_NE(html.find("123 W / 700 W"), std::string::npos);
  EXPECT_NE(html.find("power cap, HW thermal"), std::string::npos);
  EXPECT_NE(html.find("id=no-findings"), std::string::npos);
}

TEST(StatusPage, EscapesEverythingFromTheMachine) {
  const std::string evil = "<script>alert(\"x\")</script><img src=//evil.example/x onerror='y'>&";
  Snapshot s = hgx_8xh100();
  s.nvml.gpus[0].name.value = evil;
  s.nvml.gpus[0].pci_bus_id.value = evil;
  Finding f = finding("gpu.fallen-off-bus", Severity::kWarn, {evil});
  f.summary = evil;
  f.evidence = {evil};
  f.remedy = {evil};
  ExporterView v = view_of(s, {f}, Severity::kWarn);
  v.hostname = evil;
  v.version = evil;
  v.sample.last_error = evil;
  v.kernel_log_source = evil;
  v.xid_counts[{evil, 13}] = 1;
  std::string html = render_status_page(v);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("evil.example/x onerror='"), std::string::npos);
  EXPECT_EQ(html.find("\"x\")"), std::string::npos);
  const std::string escaped =
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=//evil.example/x "
      "onerror=&#39;y&#39;&gt;&amp;";
  EXPECT_GE(count(html, escaped), 10u);
  // The only tags with attributes naming URLs are our own same-origin links.
  EXPECT_EQ(count(html, "href="), 3u);
  EXPECT_EQ(html.find("src="), html.find("src=//evil"));  // only inside escaped text
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(StatusPage, StaleMarks) {
  ExporterView v = view_of(hgx_8xh100(), {}, Severity::kOk);
  v.sample.stale = true;
  v.sample.last_error = "nvmlInit timed out after 10 s";
  std::string html = render_status_page(v);
  size_t sample_line = html.find("id=sample-time");
  ASSERT_NE(sample_line, std::string::npos);
  EXPECT_NE(html.find("<span class=stale>stale</span>", sample_line), std::string::npos);
  EXPECT_NE(html.find("nvmlInit timed out after 10 s"), std::string::npos);
  // The check is stale after two check intervals.
  v.sample.stale = false;
  v.sample.last_error.clear();
  auto c = std::make_shared<CheckState>(*v.check);
  c->finished_unix_ms = kNowMs - 121 * 1000;  // check_interval_s = 60
  v.check = c;
  html = render_status_page(v);
  size_t check_line = html.find("id=check-time");
  size_t end = html.find("</p>", check_line);
  EXPECT_NE(html.substr(check_line, end - check_line).find("stale"), std::string::npos);
  EXPECT_NE(html.find("(2 min ago"), std::string::npos);
}

TEST(StatusPage, BeforeTheFirstCheckAndSample) {
  ExporterView v;
  v.hostname = "node-1";
  v.now_unix_ms = kNowMs;
  std::string html = render_status_page(v);
  EXPECT_NE(html.find("class=\"badge na\">pending<"), std::string::npos);
  EXPECT_NE(html.find("No check has finished yet"), std::string::npos);
  EXPECT_NE(html.find("No GPU readings"), std::string::npos);
  EXPECT_NE(html.find("The kernel log cannot be read"), std::string::npos);
  EXPECT_EQ(html.find("<tr class=gpu"), std::string::npos);
}

TEST(StatusPage, FallsBackToTheChecksReadingsWithoutASample) {
  ExporterView v = view_of(hgx_8xh100(), {}, Severity::kOk);
  v.sample = SampleState{};
  std::string html = render_status_page(v);
  EXPECT_EQ(count(html, "<tr class=\"gpu "), 8u);
  EXPECT_NE(html.find("readings from the last check"), std::string::npos);
}

}  // namespace
}  // namespace gd
