// Tests of /metrics (serve/metrics.h): the golden scrapes in
// tests/prometheus/golden/ (GD_UPDATE_GOLDEN=1 rewrites them; see
// tests/prometheus/promtool_check.py --update, which also runs promtool on them),
// escaping, omitted values, a lost GPU, the series count per GPU, and that
// docs/metrics.md and the alert rules agree with what render_metrics emits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "catalog/xid.h"
#include "checks/health_util.h"
#include "checks/runner.h"
#include "config/config.h"
#include "kernlog/scanner.h"
#include "serve/metrics.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using namespace gd::fixtures;

constexpr int64_t kNowMs = 1796119215000;  // 2026-12-01T10:00:15Z

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string source_path(const std::string& rel) { return std::string(GD_SOURCE_DIR) + "/" + rel; }

// An idle H100 SXM as the fake scenario hgx-8xh100 describes it.
void idle_h100(NvmlGpu* g) {
  NvmlHealth& h = g->health;
  int i = static_cast<int>(g->index);
  g->vbios_version = nv_ok(std::string("96.00.89.00.01"));
  g->memory_used_bytes = nv_ok<uint64_t>(557842432);
  h.temperature_c = nv_ok(31 + i);
  h.memory_temperature_c = nv_ok(39 + i);
  h.temp_shutdown_c = nv_ok<uint32_t>(92);
  h.temp_slowdown_c = nv_ok<uint32_t>(90);
  h.temp_mem_max_c = nv_ok<uint32_t>(95);
  h.temp_gpu_max_c = nv_ok<uint32_t>(88);
  h.power_usage_mw = nv_ok<uint32_t>(69870 + 125 * i);
  h.power_limit_mw = nv_ok<uint32_t>(700000);
  h.power_max_limit_mw = nv_ok<uint32_t>(700000);
  h.sm_clock_mhz = nv_ok<uint32_t>(345);
  h.mem_clock_mhz = nv_ok<uint32_t>(2619);
  h.max_mem_clock_mhz = nv_ok<uint32_t>(2619);
  h.clock_event_reasons = nv_ok<uint64_t>(kReasonGpuIdle);
  h.pstate = nv_ok(0);
  h.utilization_gpu_pct = nv_ok<uint32_t>(0);
  h.utilization_memory_pct = nv_ok<uint32_t>(0);
  h.fan_speed_pct = nv_rc<uint32_t>(kNvmlNotSupported);  // passively cooled
  h.ecc_mode_current = nv_ok(1);
  h.ecc_mode_pending = nv_ok(1);
  h.ecc_corrected_volatile = nv_ok<uint64_t>(0);
  h.ecc_uncorrected_volatile = nv_ok<uint64_t>(0);
  h.ecc_corrected_aggregate = nv_ok<uint64_t>(0);
  h.ecc_uncorrected_aggregate = nv_ok<uint64_t>(0);
  h.retired_pages_sbe = nv_rc<uint32_t>(kNvmlNotSupported);  // Hopper remaps rows instead
  h.retired_pages_dbe = nv_rc<uint32_t>(kNvmlNotSupported);
  h.retired_pages_pending = nv_rc<int>(kNvmlNotSupported);
  h.remapped_rows_correctable = nv_ok<uint32_t>(0);
  h.remapped_rows_uncorrectable = nv_ok<uint32_t>(0);
  h.remap_pending = nv_ok(0);
  h.remap_failure = nv_ok(0);
  h.pcie_link_gen = nv_ok<uint32_t>(5);
  h.pcie_link_gen_max = nv_ok<uint32_t>(5);
  h.pcie_link_width = nv_ok<uint32_t>(16);
  h.pcie_link_width_max = nv_ok<uint32_t>(16);
  h.pcie_replay_count = nv_ok<uint32_t>(0);
}

Snapshot hgx() {
  Snapshot s = hgx_8xh100();
  for (auto& g : s.nvml.gpus) idle_h100(&g);
  s.kernel_log.attempted = true;
  s.kernel_log.source = "/dev/kmsg";
  return s;
}

std::vector<const CheckEntry*> every_check() {
  std::vector<const CheckEntry*> out;
  for (const auto& c : all_checks()) out.push_back(&c);
  return out;
}

// The exporter's state after an hour of serving this snapshot: the sample is
// its NVML data, the check its report.
ExporterView view_of(const Snapshot& snap) {
  ExporterView v;
  v.hostname = snap.hostname;
  v.version = "0.1.0";  // not GD_VERSION: the goldens outlive releases
  v.now_unix_ms = kNowMs;
  v.started_unix_ms = kNowMs - 3600 * 1000;
  v.sample.have_sample = true;
  v.sample.nvml = snap.nvml;
  v.sample.taken_unix_ms = kNowMs - 2500;
  v.sample.duration_ms = 38.5;
  v.sample.stale = false;
  v.sample.attempts = 240;
  auto check = std::make_shared<CheckState>();
  auto owned = std::make_shared<const Snapshot>(snap);
  check->snapshot = owned;
  check->report = run_checks(*owned, Config{}, every_check());
  check->report.snapshot = owned.get();
  check->finished_unix_ms = kNowMs - 20250;
  check->duration_ms = 412.5;
  check->runs = 60;
  v.check = check;
  v.kernel_log_source = snap.kernel_log.source;
  // The recovery gate as the daemon feeds it: the sample, then the check.
  RecoveryGate gate;
  gate.on_sample(snap.nvml, 0, v.sample.taken_unix_ms);
  gate.on_check(check->report, *owned, check->finished_unix_ms);
  v.gpu_health = gate.gpus();
  return v;
}

NvmlGpu& gpu_at(Snapshot& s, std::string_view bdf) {
  for (auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.value == bdf) return g;
  }
  ADD_FAILURE() << "no NVML GPU " << bdf;
  return s.nvml.gpus.front();
}

// hgx-8xh100 on a bad day: GPU 5 fell off the bus (Xid 79, NVML says
// GPU_IS_LOST), GPU 3 is past its slowdown temperature and in HW thermal
// slowdown, GPU 6 had uncorrectable ECC errors and waits for a row remap,
// GPU 7's link trained at x8, a job hit Xid 13 twice on GPU 0, a stray
// CUDA_VISIBLE_DEVICES; and the sampler just timed out once.
ExporterView sick_view() {
  Snapshot s = hgx();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,1,2,3";
  NvmlGpu& hot = gpu_at(s, "0000:5d:00.0");
  hot.health.temperature_c = nv_ok(91);
  hot.health.memory_temperature_c = nv_ok(93);
  hot.health.power_usage_mw = nv_ok<uint32_t>(512250);
  hot.health.sm_clock_mhz = nv_ok<uint32_t>(990);
  hot.health.utilization_gpu_pct = nv_ok<uint32_t>(100);
  hot.health.utilization_memory_pct = nv_ok<uint32_t>(37);
  hot.health.clock_event_reasons = nv_ok<uint64_t>(0x48);  // HW slowdown + HW thermal
  NvmlGpu& ecc = gpu_at(s, "0000:ba:00.0");
  ecc.health.ecc_uncorrected_volatile = nv_ok<uint64_t>(2);
  ecc.health.ecc_uncorrected_aggregate = nv_ok<uint64_t>(2);
  ecc.health.ecc_corrected_aggregate = nv_ok<uint64_t>(117);
  ecc.health.remapped_rows_uncorrectable = nv_ok<uint32_t>(1);
  ecc.health.remap_pending = nv_ok(1);
  NvmlGpu& narrow = gpu_at(s, "0000:db:00.0");
  narrow.health.pcie_link_width = nv_ok<uint32_t>(8);
  narrow.health.pcie_replay_count = nv_ok<uint32_t>(14);
  pci_at(s, "0000:db:00.0")->current_link_width = 8;
  NvmlGpu& lost = gpu_at(s, "0000:ab:00.0");
  uint32_t index = lost.index;
  lost = NvmlGpu{};
  lost.index = index;
  lost.handle_rc = 15;  // NVML_ERROR_GPU_IS_LOST

  KernelLogScanner scanner(2026);
  for (const char* line : {
           "[ 3600.100000] NVRM: Xid (PCI:0000:18:00): 13, pid=4711, name=python3, Graphics "
           "Exception: ESR 0x405840=0xa0040800",
           "[ 3601.200000] NVRM: Xid (PCI:0000:18:00): 13, pid=4711, name=python3, Graphics "
           "Exception: ESR 0x405840=0xa0040800",
           "[ 3700.000000] NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU "
           "has fallen off the bus.",
       }) {
    scanner.add_line(line);
  }
  s.kernel_log = scanner.finish({.now_boot_s = 3800, .now_unix_s = {}});
  s.kernel_log.source = "/dev/kmsg";

  ExporterView v = view_of(s);
  v.sample.stale = true;
  v.sample.last_error = "NVML sampler did not answer within 10 s";
  v.sample.taken_unix_ms = kNowMs - 47000;
  v.sample.attempts = 243;
  v.sample.failures = 3;
  v.sample.restarts = 1;
  v.xid_counts[{"0000:18:00.0", 13}] = 2;
  v.xid_counts[{"0000:ab:00.0", 79}] = 1;
  // GPU 0000:18:00.0 came back once, 312.5 s after it was lost, on its
  // second re-probe.
  for (GpuHealth& g : v.gpu_health) {
    if (g.bus_id != "0000:18:00.0") continue;
    g.recovered = 1;
    g.last_recovery_s = 312.5;
    g.reprobe_passes = 1;
    g.reprobe_failures = 1;
    g.last_reprobe = "re-probe passed on 0000:18:00.0: NVML: answers (NVIDIA H100 80GB HBM3)";
  }
  // GPU 0000:ab:00.0 keeps coming back: held as flapping.
  for (GpuHealth& g : v.gpu_health) {
    if (g.bus_id != "0000:ab:00.0") continue;
    g.healthy = false;
    g.recovered = 2;
    g.flapping = true;
    g.flaps = 1;
  }
  return v;
}

// hgx-8xh100 the day after a level-3 `gpudoctor diag`: GPU 2's memory test
// found 3 failing words, GPU 6 computed two wrong bf16 elements, GPU 7's
// host copies are slow (its x8 link), one p2p pair, NCCL over three sizes.
// The run is 26 h old, within the default --diag-max-age, so its findings
// join the check's.
std::shared_ptr<const DiagState> diag_state() {
  auto d = std::make_shared<DiagState>();
  d->id = 4;
  d->time_unix_ms = kNowMs - 26 * 3600 * 1000;
  d->level = 3;
  d->verdict = Severity::kFail;
  auto finding = [](const char* id, Severity sev, std::string bus, const char* summary) {
    Finding f;
    f.id = id;
    f.severity = sev;
    f.gpus = {std::move(bus)};
    f.summary = summary;
    f.check = "diag";
    return f;
  };
  d->findings = {
      finding("memory.test-failed", Severity::kFail, "0000:3a:00.0",
              "memory test: 3 failing words"),
      finding("compute.mismatch", Severity::kFail, "0000:ba:00.0", "bf16 GEMM: 2 wrong elements"),
      finding("perf.pcie-slow", Severity::kWarn, "0000:db:00.0", "host copies at half speed")};
  DiagRun run;
  run.level = 3;
  const char* buses[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                         "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (int i = 0; i < 8; ++i) {
    std::string bus = buses[i];
    for (auto [dtype, tflops] : {std::pair{"bf16", 700.5}, std::pair{"fp32", 51.25}}) {
      DiagGemmResult g;
      g.bus_id = bus;
      g.dtype = dtype;
      g.flops_per_s = (tflops + i) * 1e12;
      g.mismatches = (i == 6 && std::string(dtype) == "bf16") ? 2 : 0;
      g.status = g.mismatches ? DiagStatus::kFail : DiagStatus::kPass;
      run.gemms.push_back(g);
    }
    for (auto [dir, bps] :
         {std::pair{"h2d", 55.0e9}, std::pair{"d2h", 52.5e9}, std::pair{"d2d", 3.35e12}}) {
      DiagCopyResult c;
      c.bus_id = bus;
      c.direction = dir;
      c.bytes_per_s = i == 7 && std::string(dir) != "d2d" ? bps / 2 : bps;
      run.copies.push_back(c);
    }
    DiagMemtestResult m;
    m.bus_id = bus;
    m.errors = i == 2 ? 3 : 0;
    m.status = m.errors ? DiagStatus::kFail : DiagStatus::kPass;
    run.memtests.push_back(m);
  }
  DiagGemmResult skipped;  // measured nothing: no series
  skipped.bus_id = buses[0];
  skipped.dtype = "fp64";
  skipped.status = DiagStatus::kSkip;
  run.gemms.push_back(skipped);
  for (auto [src, dst] : {std::pair{0, 1}, std::pair{1, 0}}) {
    DiagP2pResult p;
    p.src = buses[src];
    p.dst = buses[dst];
    p.access = true;
    p.bytes_per_s = 370.0e9 + src;
    run.p2p.push_back(p);
  }
  DiagNcclResult nccl;
  for (const char* b : buses) nccl.bus_ids.push_back(b);
  for (auto [bytes, busbw] : {std::pair{1048576ULL, 40.5e9}, std::pair{67108864ULL, 350.0e9},
                              std::pair{1073741824ULL, 480.25e9}}) {
    DiagNcclPoint pt;
    pt.bytes = bytes;
    pt.busbw_bytes_per_s = busbw;
    nccl.points.push_back(pt);
  }
  run.nccl = nccl;
  DiagScalingResult scaling;
  scaling.efficiency = 0.9625;
  scaling.speedup = 7.7;
  run.scaling = scaling;
  d->run = std::move(run);
  return d;
}

ExporterView diag_view() {
  ExporterView v = view_of(hgx());
  v.diag = diag_state();
  return v;
}

// gpudoctor serve a moment after it started: no sample, no check yet.
ExporterView starting_view() {
  ExporterView v;
  v.hostname = "hgx-8xh100";
  v.version = "0.1.0";
  v.now_unix_ms = kNowMs;
  v.started_unix_ms = kNowMs - 250;
  v.sample.attempts = 1;
  return v;
}

void expect_golden(const std::string& name, const std::string& actual) {
  std::string path = source_path("tests/prometheus/golden/" + name + ".prom");
  if (std::getenv("GD_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::string want = read_file(path);
  EXPECT_EQ(want, actual) << path << " differs; review and run tests/prometheus/promtool_check.py "
                          << "--update to rewrite it";
}

TEST(PrometheusGolden, HealthyHgx) { expect_golden("hgx-8xh100", render_metrics(view_of(hgx()))); }

TEST(PrometheusGolden, SickHgx) { expect_golden("hgx-8xh100-sick", render_metrics(sick_view())); }

TEST(PrometheusGolden, Starting) { expect_golden("starting", render_metrics(starting_view())); }

TEST(PrometheusGolden, HgxWithDiagRun) {
  expect_golden("hgx-8xh100-diag", render_metrics(diag_view()));
}

using testing_util::lines_with;

// The sick machine's facts come through as series an alert can use.
TEST(Prometheus, SickMachineSeries) {
  std::string m = render_metrics(sick_view());
  EXPECT_EQ(lines_with(m, "gpudoctor_gpu_up{gpu=\"5\",bus_id=\"\",uuid=\"\"} 0").size(), 1u) << m;
  // The lost GPU has no other series: NVML answered nothing for it.
  EXPECT_EQ(lines_with(m, "gpu=\"5\"").size(), 1u) << m;
  EXPECT_EQ(lines_with(m, "gpudoctor_gpu_up{").size(), 8u);
  EXPECT_EQ(lines_with(m, "gpudoctor_gpu_up{gpu=\"3\",bus_id=\"0000:5d:00.0\"").size(), 1u);
  EXPECT_EQ(lines_with(m,
                       "gpudoctor_gpu_temperature_celsius{gpu=\"3\",bus_id=\"0000:5d:00.0\","
                       "uuid=\"GPU-5f2e81a4-7b6c-4d8e-8f10-00000000005d\"} 91")
                .size(),
            1u)
      << m;
  EXPECT_EQ(lines_with(m, "reason=\"hw_thermal_slowdown\"} 1").size(), 1u) << m;
  EXPECT_EQ(lines_with(m, "reason=\"hw_slowdown\"} 1").size(), 1u) << m;
  EXPECT_EQ(
      lines_with(m, "gpudoctor_xid_events_total{bus_id=\"0000:ab:00.0\",xid=\"79\"} 1").size(), 1u)
      << m;
  EXPECT_EQ(lines_with(m, "gpudoctor_verdict{severity=\"fail\"} 1").size(), 1u) << m;
  // Which GPU: the lost one has no NVML index any more, its bus id stays.
  EXPECT_EQ(lines_with(m,
                       "gpudoctor_finding{id=\"gpu.fallen-off-bus\",severity=\"fail\",gpu=\"\","
                       "bus_id=\"0000:ab:00.0\",uuid=\"\"} 1")
                .size(),
            1u)
      << m;
  EXPECT_EQ(lines_with(m,
                       "gpudoctor_finding{id=\"thermal.high\",severity=\"fail\",gpu=\"3\","
                       "bus_id=\"0000:5d:00.0\"")
                .size(),
            1u)
      << m;
  EXPECT_EQ(lines_with(m, "gpudoctor_sample_stale 1").size(), 1u);
  EXPECT_EQ(lines_with(m, "gpudoctor_sample_age_seconds 47").size(), 1u) << m;
  EXPECT_EQ(lines_with(m, "cuda_visible_devices=\"0,1,2,3\"").size(), 1u) << m;
}

// A value NVML did not return is absent, never 0.
TEST(Prometheus, NotSupportedIsOmitted) {
  std::string m = render_metrics(view_of(hgx()));
  EXPECT_TRUE(lines_with(m, "gpudoctor_gpu_fan_speed_ratio").empty()) << m;
  EXPECT_TRUE(lines_with(m, "gpudoctor_gpu_retired_pages").empty()) << m;
  EXPECT_EQ(lines_with(m, "gpudoctor_gpu_temperature_celsius{").size(), 8u);
}

TEST(Prometheus, NoSampleNoCheck) {
  std::string m = render_metrics(starting_view());
  EXPECT_EQ(lines_with(m, "gpudoctor_sample_stale 1").size(), 1u) << m;
  EXPECT_TRUE(lines_with(m, "gpudoctor_gpu_").empty()) << m;
  EXPECT_TRUE(lines_with(m, "gpudoctor_verdict").empty()) << m;
  EXPECT_TRUE(lines_with(m, "gpudoctor_sample_age_seconds").empty()) << m;
}

TEST(Prometheus, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label_value("GPU-0,1 ü"), "GPU-0,1 ü");
  Snapshot s = hgx();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,\"1\"\\\n";
  std::string m = render_metrics(view_of(s));
  EXPECT_EQ(lines_with(m, "cuda_visible_devices=\"0,\\\"1\\\"\\\\\\n\"").size(), 1u) << m;
}

// Every sample line belongs to the family whose HELP/TYPE precede it, and
// each family appears once: what the text format demands.
TEST(Prometheus, FamiliesAreContiguous) {
  ExporterView sick_with_diag = sick_view();  // every family, the diag run's too
  sick_with_diag.diag = diag_state();
  std::string m = render_metrics(sick_with_diag);
  std::set<std::string> seen;
  std::string current;
  std::istringstream in(m);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      current = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(seen.insert(current).second) << current << " twice";
      continue;
    }
    if (line.rfind("#", 0) == 0) continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_EQ(name, current) << line;
  }
}

// Series per GPU: at most kMaxPerGpu with every value supported, and
// docs/metrics.md says so.
TEST(Prometheus, SeriesPerGpuIsModestAndDocumented) {
  constexpr size_t kMaxPerGpu = 51;
  Snapshot s = hgx();
  NvmlHealth& h = s.nvml.gpus[0].health;
  h.fan_speed_pct = nv_ok<uint32_t>(40);
  h.retired_pages_sbe = nv_ok<uint32_t>(0);
  h.retired_pages_dbe = nv_ok<uint32_t>(0);
  h.retired_pages_pending = nv_ok(0);
  // The per-GPU families; gpudoctor_finding follows the findings.
  ExporterView v = view_of(s);
  v.gpu_health.front().last_recovery_s = 312.5;  // GPU 0 recovered once
  std::string m;
  for (const std::string& line : lines_with(render_metrics(v), "gpu=\"")) {
    if (!line.starts_with("gpudoctor_finding{")) m += line + "\n";
  }
  EXPECT_EQ(lines_with(m, "gpu=\"0\"").size(), kMaxPerGpu) << m;
  size_t h100 = lines_with(m, "gpu=\"1\"").size();
  EXPECT_EQ(h100, 46u) << m;
  std::string docs = read_file(source_path("docs/metrics.md"));
  EXPECT_NE(docs.find(std::to_string(kMaxPerGpu) + " series per GPU"), std::string::npos);
  EXPECT_NE(docs.find(std::to_string(h100) + " on an H100"), std::string::npos);
}

std::set<std::string> emitted_names(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) out.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  return out;
}

// docs/metrics.md documents exactly the families of the table, and the
// goldens together emit every one of them (no dead table entry).
TEST(Prometheus, DocsListEveryMetric) {
  std::string docs = read_file(source_path("docs/metrics.md"));
  ASSERT_FALSE(docs.empty());
  std::set<std::string> table;
  for (const auto& f : metric_families()) {
    table.insert(f.name);
    EXPECT_NE(docs.find("| `" + std::string(f.name) + "`"), std::string::npos)
        << f.name << " has no row in docs/metrics.md";
  }
  std::regex row("\\| `(gpudoctor_[a-z0-9_]+)`");
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), row); it != std::sregex_iterator();
       ++it) {
    EXPECT_TRUE(table.count((*it)[1].str())) << (*it)[1].str() << " documented but never emitted";
  }
  Snapshot full = hgx();
  NvmlHealth& h = full.nvml.gpus[0].health;
  h.fan_speed_pct = nv_ok<uint32_t>(40);
  h.retired_pages_sbe = nv_ok<uint32_t>(0);
  h.retired_pages_pending = nv_ok(0);
  std::set<std::string> emitted = emitted_names(render_metrics(view_of(full)));
  for (const auto& n : emitted_names(render_metrics(sick_view()))) emitted.insert(n);
  for (const auto& n : emitted_names(render_metrics(diag_view()))) emitted.insert(n);
  EXPECT_EQ(emitted, table);
}

// The Xid alerts name exactly the catalog's codes with that action.
std::set<int> rule_xids(const std::string& rules, const std::string& alert) {
  size_t at = rules.find("alert: " + alert + "\n");
  EXPECT_NE(at, std::string::npos) << alert;
  if (at == std::string::npos) return {};
  size_t start = rules.find("xid=~\"", at);
  size_t end = rules.find('"', start + 6);
  std::set<int> out;
  std::stringstream codes(rules.substr(start + 6, end - start - 6));
  for (std::string c; std::getline(codes, c, '|');) out.insert(std::stoi(c));
  return out;
}

TEST(Prometheus, XidAlertsFollowTheCatalog) {
  std::string rules = read_file(source_path("deploy/prometheus/gpudoctor-rules.yml"));
  std::set<int> reset, drain;
  for (const auto& x : xid_catalog()) {
    if (x.action == XidAction::kResetGpu) reset.insert(x.code);
    if (x.action == XidAction::kReboot || x.action == XidAction::kDrainInspect) {
      drain.insert(x.code);
    }
  }
  EXPECT_EQ(rule_xids(rules, "GpuXidResetRequired"), reset);
  EXPECT_EQ(rule_xids(rules, "GpuXidDrainNode"), drain);
}

}  // namespace
}  // namespace gd
