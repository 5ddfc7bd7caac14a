// The status page: one HTML5 document, CSS inline, no script, no external
// asset (http.cc also sends a Content-Security-Policy that forbids them).
// Every piece of text from the machine (GPU names, evidence lines, bus ids,
// the hostname) is untrusted and goes through esc().
#include "serve/status_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "catalog/xid.h"
#include "diag/text.h"
#include "facts/health.h"
#include "util/time.h"

namespace gd {
namespace {

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\0':
        out += "\xEF\xBF\xBD";
        break;  // U+FFFD: NUL is not allowed in HTML text
      default:
        out += c;
    }
  }
  return out;
}

constexpr char kNa[] = "<span class=na>&mdash;</span>";

// "4 s", "3 min", "2 h 5 min", "3 d"
std::string age(int64_t ms) {
  if (ms < 0) ms = 0;
  int64_t s = ms / 1000;
  if (s < 120) return fmt::format("{} s", s);
  if (s < 7200) return fmt::format("{} min", s / 60);
  if (s < 172800) return fmt::format("{} h {} min", s / 3600, s / 60 % 60);
  return fmt::format("{} d", s / 86400);
}

// The CSS class of a severity: its name, "na" for "n/a".
const char* sev_class(Severity s) {
  return s == Severity::kNotApplicable ? "na" : severity_name(s);
}

std::string gib(uint64_t bytes) { return fmt::format("{:.1f}", bytes / 1073741824.0); }

std::string throttle_words(uint64_t bits) {
  // Only the reasons that slow a busy GPU: idle is normal, and the
  // application-clocks and display settings are choices, not events.
  static const std::pair<uint64_t, const char*> kNames[] = {
      {kReasonSwPowerCap, "power cap"}, {kReasonHwSlowdown, "HW slowdown"},
      {kReasonSyncBoost, "sync boost"}, {kReasonSwThermal, "SW thermal"},
      {kReasonHwThermal, "HW thermal"}, {kReasonHwPowerBrake, "power brake"},
      {kReasonAppClocks, "app clocks"}, {kReasonDisplayClock, "display clock"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (bits & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  if (out.empty()) return (bits & kReasonGpuIdle) ? "none (idle)" : "none";
  return out;
}

constexpr char kCss[] = R"(
:root{color-scheme:light dark;--fg:#1b1f24;--mut:#59636e;--bg:#fff;--line:#d1d9e0;--head:#f6f8fa;
--ok:#1a7f37;--info:#0969da;--warn:#9a6700;--fail:#cf222e;--na:#59636e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--mut:#9198a1;--bg:#0d1117;--line:#3d444d;
--head:#151b23;--ok:#3fb950;--info:#4493f8;--warn:#d29922;--fail:#f85149}}
*{box-sizing:border-box}
body{margin:0;padding:1.25rem 1.5rem;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"Noto Sans",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.35rem;margin:0 0 .25rem;display:flex;gap:.75rem;align-items:center;flex-wrap:wrap}
h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
.meta{color:var(--mut);margin:.15rem 0}
.badge{display:inline-block;padding:.1rem .55rem;border-radius:1rem;font-size:.8rem;
font-weight:600;color:#fff;text-transform:uppercase;letter-spacing:.03em}
.badge.ok{background:var(--ok)}.badge.info{background:var(--info)}.badge.warn{background:var(--warn)}
.badge.fail{background:var(--fail)}.badge.na{background:var(--na)}
.stale{color:var(--warn);font-weight:600}
.wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:.35rem .6rem;text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600;white-space:nowrap}
td.num{text-align:right;white-space:nowrap}
td.id,td.bus,td.name{white-space:nowrap}
tr.gpu.fail td:first-child{box-shadow:inset 4px 0 var(--fail)}
tr.gpu.warn td:first-child{box-shadow:inset 4px 0 var(--warn)}
tr.gpu.fail{background:color-mix(in srgb,var(--fail) 9%,transparent)}
tr.gpu.warn{background:color-mix(in srgb,var(--warn) 9%,transparent)}
.follows{color:var(--mut)}
td.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.na{color:var(--mut)}
.hot{color:var(--fail);font-weight:600}
ol,ul{margin:0;padding-left:1.2rem}
details{margin-top:.25rem}summary{color:var(--mut);cursor:pointer}
pre{margin:.25rem 0;white-space:pre-wrap;word-break:break-all}
footer{margin-top:1.75rem;color:var(--mut)}
a{color:var(--info)}
)";

// One cell of a value NVML may not have answered.
template <class T, class F>
std::string cell(const NvmlValue<T>& v, F render) {
  return v.ok() ? render(v.value) : std::string(kNa);
}

// "a / b unit"; one dash when neither is known.
std::string pair(const std::string& a, const std::string& b, const char* unit) {
  if (a == kNa && b == kNa) return kNa;
  return a + " / " + b + unit;
}

// Each GPU's worst problem (fail or warn) among the findings naming it.
std::map<std::string, Severity> worst_by_gpu(const Report* r) {
  std::map<std::string, Severity> out;
  if (r == nullptr) return out;
  for (const Finding& f : r->findings) {
    if (f.severity != Severity::kFail && f.severity != Severity::kWarn) continue;
    for (const std::string& bus : f.gpus) {
      auto [it, fresh] = out.emplace(bus, f.severity);
      if (!fresh && severity_weight(f.severity) > severity_weight(it->second)) {
        it->second = f.severity;
      }
    }
  }
  return out;
}

void gpu_table(std::string& o, const NvmlInfo& nvml, const Snapshot* snap, const Report* report) {
  if (nvml.gpus.empty()) {
    o += "<p class=na>No GPU readings: NVML has not answered";
    if (snap && !snap->nvml.gpus.empty()) o += " (the last check saw some, below)";
    o += ".</p>\n";
    return;
  }
  o += "<div class=wrap><table id=gpus>\n<thead><tr><th>#</th><th>Bus ID</th><th>Name</th>"
       "<th>Temp</th><th>Power / limit</th><th>Memory used / total</th><th>Util</th>"
       "<th>Clocks SM / mem</th><th>PCIe link</th><th>ECC errors</th>"
       "<th>Throttle reasons</th></tr></thead>\n<tbody>\n";
  // Worst first, so a sick GPU of eight is the first row, marked; then in
  // nvidia-smi order.
  const std::map<std::string, Severity> worst = worst_by_gpu(report);
  auto severity_of = [&](const NvmlGpu& g) {
    auto it = g.pci_bus_id.ok() ? worst.find(g.pci_bus_id.value) : worst.end();
    return it == worst.end() ? Severity::kOk : it->second;
  };
  std::vector<const NvmlGpu*> rows;
  for (const NvmlGpu& g : nvml.gpus) rows.push_back(&g);
  std::stable_sort(rows.begin(), rows.end(), [&](const NvmlGpu* a, const NvmlGpu* b) {
    return severity_weight(severity_of(*a)) > severity_weight(severity_of(*b));
  });
  for (const NvmlGpu* gp : rows) {
    const NvmlGpu& g = *gp;
    const NvmlHealth& h = g.health;
    o += fmt::format("<tr class=\"gpu {}\" data-bus=\"{}\">", sev_class(severity_of(g)),
                     esc(g.pci_bus_id.ok() ? g.pci_bus_id.value : ""));
    o += fmt::format("<td class=num>{}</td>", g.index);
    o += "<td class=mono>" + cell(g.pci_bus_id, [](const std::string& s) { return esc(s); }) +
         "</td>";
    o += "<td class=name>" + cell(g.name, [](const std::string& s) { return esc(s); }) + "</td>";
    o += "<td class=num>" +
         cell(h.temperature_c,
              [&](int t) {
                bool hot = h.temp_slowdown_c.ok() && h.temp_slowdown_c.value > 0 &&
                           t >= static_cast<int>(h.temp_slowdown_c.value) - 5;
                return fmt::format("{}{} &deg;C{}", hot ? "<span class=hot>" : "", t,
                                   hot ? "</span>" : "");
              }) +
         "</td>";
    std::string power =
        cell(h.power_usage_mw, [](uint32_t mw) { return fmt::format("{:.0f} W", mw / 1000.0); });
    if (h.power_limit_mw.ok()) power += fmt::format(" / {:.0f} W", h.power_limit_mw.value / 1000.0);
    o += "<td class=num>" + power + "</td>";
    std::string mem = pair(cell(g.memory_used_bytes, [](uint64_t b) { return gib(b); }),
                           cell(g.memory_total_bytes, [](uint64_t b) { return gib(b); }), " GiB");
    o += "<td class=num>" + mem + "</td>";
    o += "<td class=num>" +
         cell(h.utilization_gpu_pct, [](uint32_t p) { return fmt::format("{} %", p); }) + "</td>";
    std::string clocks =
        pair(cell(h.sm_clock_mhz, [](uint32_t m) { return fmt::format("{}", m); }),
             cell(h.mem_clock_mhz, [](uint32_t m) { return fmt::format("{}", m); }), " MHz");
    o += "<td class=num>" + clocks + "</td>";
    std::string link = kNa;
    if (h.pcie_link_gen.ok() && h.pcie_link_width.ok()) {
      link = fmt::format("Gen{} x{}", h.pcie_link_gen.value, h.pcie_link_width.value);
      bool degraded =
          (h.pcie_link_gen_max.ok() && h.pcie_link_gen.value < h.pcie_link_gen_max.value) ||
          (h.pcie_link_width_max.ok() && h.pcie_link_width.value < h.pcie_link_width_max.value);
      if (h.pcie_link_gen_max.ok() && h.pcie_link_width_max.ok()) {
        link += fmt::format(" <span class=na>of Gen{} x{}</span>", h.pcie_link_gen_max.value,
                            h.pcie_link_width_max.value);
      }
      // A link trained down while idle is normal power saving for the
      // generation; only a narrower width is a fault worth the color.
      if (degraded && h.pcie_link_width_max.ok() &&
          h.pcie_link_width.value < h.pcie_link_width_max.value) {
        link = "<span class=hot>" + link + "</span>";
      }
    }
    o += "<td class=num>" + link + "</td>";
    std::string ecc;
    if (h.ecc_mode_current.ok() && h.ecc_mode_current.value == 0) {
      ecc = "<span class=na>off</span>";
    } else if (h.ecc_corrected_volatile.ok() || h.ecc_uncorrected_volatile.ok()) {
      uint64_t unc = h.ecc_uncorrected_volatile.ok() ? h.ecc_uncorrected_volatile.value : 0;
      ecc = fmt::format(
          "{}{} uncorr.{}, {} corr.", unc ? "<span class=hot>" : "", unc, unc ? "</span>" : "",
          h.ecc_corrected_volatile.ok() ? fmt::format("{}", h.ecc_corrected_volatile.value) : "?");
      if (h.remap_pending.ok() && h.remap_pending.value)
        ecc += ", <span class=hot>row remap pending</span>";
    } else {
      ecc = kNa;
    }
    o += "<td>" + ecc + "</td>";
    o += "<td>" + cell(h.clock_event_reasons, [](uint64_t b) { return esc(throttle_words(b)); }) +
         "</td>";
    o += "</tr>\n";
  }
  o += "</tbody></table></div>\n";
}

// One row per finding that says something; ok and n/a ones are counted.
std::string finding_rows(const std::vector<Finding>& findings, int* ok, int* na) {
  std::string rows;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kOk) {
      ++*ok;
      continue;
    }
    if (f.severity == Severity::kNotApplicable) {
      ++*na;
      continue;
    }
    rows +=
        fmt::format("<tr class=\"finding {}\"><td><span class=\"badge {}\">{}</span></td>",
                    sev_class(f.severity), sev_class(f.severity), esc(severity_name(f.severity)));
    rows += "<td class=\"mono id\">" + esc(f.id) + "</td><td>" + esc(f.summary);
    if (!f.follows_from.empty()) {
      rows += " <span class=follows>(follows from <code>" + esc(f.follows_from) + "</code>)</span>";
    }
    if (!f.evidence.empty()) {
      rows += "<details><summary>evidence</summary><pre>";
      for (const std::string& e : f.evidence) rows += esc(e) + "\n";
      rows += "</pre></details>";
    }
    rows += "</td><td class=\"mono bus\">";
    for (size_t i = 0; i < f.gpus.size(); ++i) rows += (i ? "<br>" : "") + esc(f.gpus[i]);
    if (f.gpus.empty()) rows += kNa;
    rows += "</td><td>";
    if (f.remedy.empty()) {
      rows += kNa;
    } else {
      rows += "<ol>";
      for (const std::string& step : f.remedy) rows += "<li><code>" + esc(step) + "</code></li>";
      rows += "</ol>";
    }
    rows += "</td></tr>\n";
  }
  return rows;
}

constexpr char kFindingsHead[] =
    "<thead><tr><th>Severity</th><th>Finding</th><th>Summary</th><th>GPUs</th><th>Remedy</th>"
    "</tr></thead>\n<tbody>\n";

void findings_table(std::string& o, const Report& r) {
  int ok = 0, na = 0;
  std::string rows = finding_rows(r.findings, &ok, &na);
  if (rows.empty()) {
    o += "<p id=no-findings>Nothing to report: every check passed.</p>\n";
  } else {
    o += std::string("<div class=wrap><table id=findings>\n") + kFindingsHead + rows +
         "</tbody></table></div>\n";
  }
  o += fmt::format("<p class=meta>{} checks ok, {} not applicable on this machine.</p>\n", ok, na);
}

// The newest `gpudoctor diag` run in the history: when, its verdict, its
// findings while it is current (--diag-max-age), and what it measured.
void diag_section(std::string& o, const ExporterView& v) {
  const DiagState& d = *v.diag;
  const bool current = diag_is_current(d, v.now_unix_ms, v.diag_max_age_s);
  o += "<h2>Last diag run</h2>\n";
  o += fmt::format(
      "<p class=meta id=diag-time>gpudoctor diag level {}: {} ({} ago) <span id=diag-verdict "
      "class=\"badge {}\">{}</span>{}</p>\n",
      d.level, utc_datetime_text(d.time_unix_ms / 1000), age(v.now_unix_ms - d.time_unix_ms),
      sev_class(d.verdict), esc(severity_name(d.verdict)),
      current
          ? ""
          : " <span class=stale>older than --diag-max-age: its findings no longer count</span>");
  if (current) {
    int ok = 0, na = 0;
    std::string rows = finding_rows(d.findings, &ok, &na);
    if (rows.empty()) {
      o += "<p id=no-diag-findings>Every test passed.</p>\n";
    } else {
      o += std::string("<div class=wrap><table id=diag-findings>\n") + kFindingsHead + rows +
           "</tbody></table></div>\n";
    }
  }
  if (!d.parse_error.empty()) {
    o += "<p class=meta>Its figures cannot be shown: " + esc(d.parse_error) + "</p>\n";
  }
  if (d.figures.empty()) return;
  o += "<div class=wrap><table id=diag-figures>\n<thead><tr><th>Bus ID</th><th>Figure</th>"
       "<th>Measured</th><th>Expected at least</th><th>Peers' median</th><th>Judgement</th>"
       "</tr></thead>\n<tbody>\n";
  for (const DiagFigure& f : d.figures) {
    bool bad = !f.judgement.empty() && f.judgement != "ok";
    o += "<tr><td class=mono>" + (f.bus_id.empty() ? std::string(kNa) : esc(f.bus_id)) +
         "</td><td class=mono>" + esc(f.metric) + "</td><td class=num>" +
         esc(format_diag_value(f.value, f.unit)) + "</td><td class=num>" +
         (f.expected > 0 ? esc(format_diag_value(f.expected, f.unit)) : std::string(kNa)) +
         "</td><td class=num>" +
         (f.peer_median > 0 ? esc(format_diag_value(f.peer_median, f.unit)) : std::string(kNa)) +
         "</td><td>" + (bad ? "<span class=hot>" : "") + esc(f.judgement) + (bad ? "</span>" : "") +
         "</td></tr>\n";
  }
  o += "</tbody></table></div>\n";
}

void xid_table(std::string& o, const ExporterView& v) {
  if (v.kernel_log_source.empty()) {
    o += "<p class=na>The kernel log cannot be read (see /report.json for why).</p>\n";
    return;
  }
  o += "<p class=meta>From " + esc(v.kernel_log_source) + ", this boot.</p>\n";
  if (v.xid_counts.empty()) {
    o += "<p id=no-xids>No Xid events.</p>\n";
    return;
  }
  o += "<div class=wrap><table id=xids>\n<thead><tr><th>GPU</th><th>Xid</th><th>Meaning</th>"
       "<th>Count</th></tr></thead>\n<tbody>\n";
  for (const auto& [key, count] : v.xid_counts) {
    const XidInfo* x = find_xid(key.second);
    o += "<tr><td class=mono>" + (key.first.empty() ? std::string(kNa) : esc(key.first)) + "</td>";
    o += fmt::format("<td class=num>{}</td><td>{}</td><td class=num>{}</td></tr>\n", key.second,
                     x ? esc(x->meaning) : std::string(kNa), count);
  }
  o += "</tbody></table></div>\n";
}

// The recovery gate's GPUs that are, or were, unhealthy: shown only when
// there is one, as a person asks "is it back, and is it proven".
void recovery_table(std::string& o, const ExporterView& v) {
  std::vector<const GpuHealth*> rows;
  for (const GpuHealth& g : v.gpu_health) {
    if (!g.healthy || g.recovered > 0 || g.reprobe_failures > 0) rows.push_back(&g);
  }
  if (rows.empty()) return;
  o += "<h2>Recovery</h2>\n<p class=meta>A GPU is called healthy again only after its cause "
       "cleared and a re-probe (NVML, a CUDA context, a level-1 diag) passed.</p>\n";
  o += "<div class=wrap><table id=recovery>\n<thead><tr><th>GPU</th><th>State</th><th>Cause</th>"
       "<th>Recovered</th><th>Last re-probe</th></tr></thead>\n<tbody>\n";
  for (const GpuHealth* g : rows) {
    std::string state = g->healthy    ? "<span class=\"badge ok\">healthy</span>"
                        : g->flapping ? "<span class=\"badge fail\">flapping</span>"
                        : g->cleared  ? "<span class=\"badge warn\">cleared, re-probing</span>"
                                      : "<span class=\"badge fail\">unhealthy</span>";
    if (!g->healthy) state += " for " + age(v.now_unix_ms - g->unhealthy_since_ms);
    if (g->flapping && g->held_until_ms > v.now_unix_ms) {
      state += ", held " + age(g->held_until_ms - v.now_unix_ms) + " more";
    }
    std::string recovered = fmt::format("{}", g->recovered);
    if (g->last_recovery_s >= 0) {
      recovered += " (last took " + age(static_cast<int64_t>(g->last_recovery_s * 1000)) + ")";
    }
    o += "<tr><td class=mono>" + esc(g->bus_id) + "</td><td>" + state + "</td><td>" +
         (g->cause.empty() ? std::string(kNa) : esc(g->cause)) + "</td><td>" + recovered +
         "</td><td>" + (g->last_reprobe.empty() ? std::string(kNa) : esc(g->last_reprobe)) +
         "</td></tr>\n";
  }
  o += "</tbody></table></div>\n";
}

}  // namespace

std::string render_status_page(const ExporterView& v) {
  std::string o;
  o.reserve(16 * 1024);
  const CheckState* check = v.check.get();
  const Snapshot* snap = check ? check->snapshot.get() : nullptr;
  const std::string host = esc(v.hostname.empty() ? "this machine" : v.hostname);

  o += "<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
       "<meta name=viewport content=\"width=device-width, initial-scale=1\">\n";
  // Reloads itself at the sampling period (no script: the CSP forbids it).
  o += fmt::format("<meta http-equiv=refresh content={}>\n",
                   static_cast<int>(std::clamp(v.interval_s, 5.0, 3600.0)));
  o += "<title>gpudoctor &middot; " + host + "</title>\n<style>" + kCss +
       "</style>\n</head>\n<body>\n";

  // Header: host, verdict, when.
  o += "<h1>gpudoctor &middot; <span id=host>" + host + "</span>";
  if (check) {
    o += fmt::format(" <span id=verdict class=\"badge {}\">{}</span>",
                     sev_class(check->report.verdict), esc(severity_name(check->report.verdict)));
  } else {
    o += " <span id=verdict class=\"badge na\">pending</span>";
  }
  o += "</h1>\n";

  if (check) {
    const int64_t ago = v.now_unix_ms - check->finished_unix_ms;
    const bool stale = ago > static_cast<int64_t>(2 * v.check_interval_s * 1000);
    o += fmt::format("<p class=meta id=check-time>Last check: {} ({} ago, took {:.0f} ms){}</p>\n",
                     utc_datetime_text(check->finished_unix_ms / 1000), age(ago),
                     check->duration_ms, stale ? " <span class=stale>stale</span>" : "");
  } else {
    o += "<p class=meta id=check-time>Last check: <span class=stale>none yet</span> (the first "
         "check is running)</p>\n";
  }
  if (v.sample.have_sample) {
    o += fmt::format("<p class=meta id=sample-time>Last sample: {} ({} ago){}</p>\n",
                     utc_datetime_text(v.sample.taken_unix_ms / 1000),
                     age(v.now_unix_ms - v.sample.taken_unix_ms),
                     v.sample.stale ? " <span class=stale>stale</span>" : "");
  } else {
    o += "<p class=meta id=sample-time>Last sample: <span class=stale>none yet</span></p>\n";
  }
  if (!v.sample.last_error.empty()) {
    o += "<p class=meta>Sampler: <span class=stale>" + esc(v.sample.last_error) + "</span></p>\n";
  }
  if (!v.history_ok)
    o += "<p class=meta><span class=stale>The last history write failed.</span></p>\n";

  // The findings first (the cause on top, in rank order), above the fold.
  o += "<h2>Findings</h2>\n";
  if (check) {
    findings_table(o, check->report);
  } else {
    o += "<p class=na>No check has finished yet.</p>\n";
  }

  // GPUs: the live sample when there is one, else what the last check saw.
  const Report* report = check ? &check->report : nullptr;
  o += "<h2>GPUs</h2>\n";
  if (v.sample.have_sample) {
    gpu_table(o, v.sample.nvml, snap, report);
  } else if (snap && !snap->nvml.gpus.empty()) {
    o += "<p class=meta>No live sample yet: readings from the last check.</p>\n";
    gpu_table(o, snap->nvml, snap, report);
  } else {
    gpu_table(o, NvmlInfo{}, snap, report);
  }

  recovery_table(o, v);
  if (v.diag) diag_section(o, v);

  o += "<h2>Kernel log: Xid events</h2>\n";
  xid_table(o, v);

  o +=
      "<footer><a href=\"/metrics\">/metrics</a> &middot; <a href=\"/report.json\">/report.json</a>"
      " &middot; <a href=\"/healthz\">/healthz</a> &middot; gpudoctor " +
      esc(v.version);
  o += fmt::format(" &middot; up {}</footer>\n</body>\n</html>\n",
                   age(v.now_unix_ms - v.started_unix_ms));
  return o;
}

}  // namespace gd
