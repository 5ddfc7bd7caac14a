// The history tests' writer: the real store (history/store.h) driven by a
// script instead of `gpudoctor serve`.
//
//   history_writer loop DB      commit reports and events until killed; after
//                               each commit print "report N" / "events N"
//                               (flushed), N the report's number. Resumes
//                               after the newest report already in DB.
//   history_writer fixture DB   a fixed story over 2026-03-01..02 (UTC) for
//                               the golden test of `gpudoctor history`
//                               (tests/history/golden_test.py)
//   history_writer flap DB HOURS STEP_S BUS [--whole] OK.json LOST.json ...
//                               a GPU lost and back every STEP_S seconds for
//                               HOURS: reports alternately from the OK and
//                               LOST JSONs (each list cycled; a LOST one
//                               fails gpu.fallen-off-bus on BUS), pruned
//                               at 30 days as serve does; --whole stores
//                               every changed report whole (schema 2's way).
//                               Prints "reports N" (bench/history_flap.py)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "history/reader.h"
#include "history/store.h"
#include "probe/rootfs.h"

namespace {

using gd::Finding;
using gd::KernelEvent;
using gd::Report;
using gd::Severity;

constexpr int64_t kLoopBaseMs = 1'700'000'000'000;  // 2023-11-14T22:13:20Z

Finding finding(const char* id, Severity sev, std::vector<std::string> gpus, std::string summary) {
  Finding f;
  f.id = id;
  f.severity = sev;
  f.gpus = std::move(gpus);
  f.summary = std::move(summary);
  return f;
}

Report report(std::vector<Finding> findings) {
  Report r;
  r.verdict = Severity::kOk;
  for (const Finding& f : findings) r.verdict = gd::worse(r.verdict, f.severity);
  r.findings = std::move(findings);
  return r;
}

// "[  123.456789]": the kernel's boot-relative stamp, as the scanner prints it.
std::string boot_stamp(double boot_s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "[%5lld.%06lld]", static_cast<long long>(boot_s),
                static_cast<long long>((boot_s - static_cast<long long>(boot_s)) * 1e6 + 0.5));
  return buf;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "history_writer: %s\n", why.c_str());
  return 1;
}

int loop(const std::string& path) {
  auto store = gd::open_history(path, true, gd::boot_id_or_btime(gd::RootFs("/")));
  if (!store.ok()) return fail(store.error());
  int64_t n = 0;
  {
    auto reader = gd::HistoryReader::open(path);
    if (!reader.ok()) return fail(reader.error());
    auto span = reader->report_span(0, std::numeric_limits<int64_t>::max());
    if (!span.ok()) return fail(span.error());
    if (span->count > 0) n = (span->last_ms - kLoopBaseMs) / 1000;
  }
  const std::string json =
      R"({"schema":"gpudoctor.report/v1","gpus":[{"bus_id":"0000:17:00.0","uuid":"GPU-loop-0",)"
      R"("nvml_index":0,"name":"Fake"}],"findings":[],"pad":")" +
      std::string(4000, 'x') + R"("})";
  for (;;) {
    ++n;
    int64_t now = kLoopBaseMs + n * 1000;
    std::vector<Finding> fs;
    if (n % 3 == 0) fs.push_back(finding("xid.79", Severity::kFail, {"0000:17:00.0"}, "Xid 79"));
    fs.push_back(finding("thermal.high", n % 2 ? Severity::kWarn : Severity::kOk, {"0000:17:00.0"},
                         "hot " + std::to_string(n)));
    if (auto r = (*store)->add_report(now, report(fs), json); !r.ok()) return fail(r.error());
    std::printf("report %lld\n", static_cast<long long>(n));
    std::fflush(stdout);

    // One run whose count is the report's number: the count stored must
    // never fall behind the last one acknowledged.
    KernelEvent e;
    e.kind = "xid";
    e.code = 79;
    e.gpu = "0000:17:00.0";
    e.message = "GPU has fallen off the bus.";
    e.first = boot_stamp(10);
    e.last = boot_stamp(10 + static_cast<double>(n));
    e.count = static_cast<int>(n);
    e.age_s = 0;
    e.line = "NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the bus.";
    if (auto r = (*store)->add_boot_events(now, "loop-boot", {e}); !r.ok()) {
      return fail(r.error());
    }
    std::printf("events %lld\n", static_cast<long long>(n));
    std::fflush(stdout);
    // Retention at work too: keep the newest 500 reports.
    if (n % 100 == 0) {
      if (auto r = (*store)->prune(now - 500 * 1000); !r.ok()) return fail(r.error());
    }
  }
}

// --- the golden story ---------------------------------------------------------------

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kMinute = 60 * 1000;
// 2026-03-01T00:00:00Z
constexpr int64_t kDay1 = 1'772'323'200'000;

const char* const kGpus[] = {"0000:17:00.0", "0000:3b:00.0", "0000:5d:00.0", "0000:9b:00.0"};

std::string gpus_json() {
  std::string out = R"({"schema":"gpudoctor.report/v1","gpus":[)";
  for (int i = 0; i < 4; ++i) {
    out += std::string(i ? "," : "") + R"({"bus_id":")" + kGpus[i] +
           R"(","name":"NVIDIA H100 80GB HBM3","uuid":"GPU-00000000-0000-0000-0000-00000000000)" +
           std::to_string(i) + R"(","nvml_index":)" + std::to_string(i) + "}";
  }
  return out + "]}";
}

// One occurrence in the kernel log: its boot, its wall time and what it is.
struct Occurrence {
  const char* boot;
  int64_t boot_start_ms;
  int64_t at_ms;
  const char* kind;
  const char* type;
  int code;
  const char* gpu;
  const char* message;
};

// Boot A from 2026-02-28T00:00Z; boot B from the reboot at 2026-03-02T04:00Z.
constexpr int64_t kBootA = kDay1 - 24 * kHour;
constexpr int64_t kBootB = kDay1 + 28 * kHour;

std::vector<Occurrence> story_log() {
  std::vector<Occurrence> log;
  // A corrected AER on GPU 2's link, day 1 at noon (twice).
  for (int i = 0; i < 2; ++i) {
    log.push_back({"boot-a", kBootA, kDay1 + 12 * kHour + i * 30 * 1000, "aer", "corrected", 0,
                   kGpus[2], "PCIe Bus Error: severity=Corrected, type=Physical Layer"});
  }
  // GPU 3 falls off the bus on day 2 at 03:14:07, three lines in 23 s.
  for (int64_t s : {7, 15, 30}) {
    log.push_back({"boot-a", kBootA, kDay1 + 27 * kHour + 14 * kMinute + s * 1000, "xid", "", 79,
                   kGpus[3], "GPU has fallen off the bus."});
  }
  // After the reboot: GPU 3 again at 09:00, and an application's Xid 13
  // on GPU 0 at 10:00.
  log.push_back({"boot-b", kBootB, kDay1 + 33 * kHour, "xid", "", 79, kGpus[3],
                 "GPU has fallen off the bus."});
  log.push_back(
      {"boot-b", kBootB, kDay1 + 34 * kHour, "xid", "", 13, kGpus[0], "Graphics Engine Exception"});
  return log;
}

// The kernel log as serve would pass it at `now`: the running boot's
// occurrences so far, folded per event.
std::vector<KernelEvent> folded_at(const std::vector<Occurrence>& log, int64_t now,
                                   const char** boot) {
  *boot = now >= kBootB ? "boot-b" : "boot-a";
  std::vector<KernelEvent> out;
  for (const Occurrence& o : log) {
    if (std::strcmp(o.boot, *boot) != 0 || o.at_ms > now) continue;
    KernelEvent* e = nullptr;
    for (KernelEvent& k : out) {
      if (k.kind == o.kind && k.code == o.code && k.gpu == o.gpu) e = &k;
    }
    std::string stamp = boot_stamp(static_cast<double>(o.at_ms - o.boot_start_ms) / 1000);
    if (!e) {
      out.emplace_back();
      e = &out.back();
      e->kind = o.kind;
      e->type = o.type;
      e->code = o.code;
      e->gpu = o.gpu;
      e->message = o.message;
      e->first = stamp;
      e->count = 0;
    }
    e->last = stamp;
    e->line = stamp + " NVRM: " + o.message;
    e->age_s = static_cast<double>(now - o.at_ms) / 1000;
    ++e->count;
  }
  return out;
}

std::vector<Finding> story_findings(int64_t t) {
  std::vector<Finding> fs;
  auto in = [&](double from_h, double to_h) {
    return t >= kDay1 + static_cast<int64_t>(from_h * kHour) &&
           t < kDay1 + static_cast<int64_t>(to_h * kHour);
  };
  // Persistence mode off all along: an info that never changes.
  fs.push_back(finding("persistence-mode.off", Severity::kInfo, {}, "Persistence mode is off"));
  if (in(6, 7)) {
    fs.push_back(finding("thermal.high", Severity::kWarn, {kGpus[1]}, "GPU 1 is at 88 C"));
  }
  if (in(6.5, 7)) {
    // The same finding turning worse.
    fs.back().severity = Severity::kFail;
    fs.back().summary = "GPU 1 is at 93 C";
  }
  if (in(27.25, 28)) {
    fs.insert(fs.begin(), finding("gpu.fallen-off-bus", Severity::kFail, {kGpus[3]},
                                  "GPU 0000:9b:00.0 has fallen off the bus (Xid 79)"));
  }
  if (in(33, 33.5)) {
    fs.insert(fs.begin(), finding("xid.79", Severity::kFail, {kGpus[3]},
                                  "Xid 79 on GPU 0000:9b:00.0: the GPU has fallen off the bus"));
  }
  if (in(34, 35)) {
    fs.push_back(finding("xid.13", Severity::kWarn, {kGpus[0]},
                         "Xid 13 on GPU 0000:17:00.0: an application's kernel faulted"));
  }
  return fs;
}

int fixture(const std::string& path) {
  auto store = gd::open_history(path, true, gd::boot_id_or_btime(gd::RootFs("/")));
  if (!store.ok()) return fail(store.error());
  std::vector<Occurrence> log = story_log();
  const std::string json = gpus_json();
  // A report every 15 minutes over a day and a half, the node down from
  // 03:45 to 04:00 on day 2; the events with every report, as serve does.
  for (int64_t t = kDay1; t <= kDay1 + 36 * kHour; t += 15 * kMinute) {
    if (t > kDay1 + 27 * kHour + 45 * kMinute && t < kBootB) continue;
    if (auto r = (*store)->add_report(t, report(story_findings(t)), json); !r.ok()) {
      return fail(r.error());
    }
    const char* boot = nullptr;
    std::vector<KernelEvent> events = folded_at(log, t, &boot);
    if (auto r = (*store)->add_boot_events(t, boot, events); !r.ok()) return fail(r.error());
  }
  return 0;
}

// --- the flapping GPU (bench/history_flap.py) ------------------------------------

std::string read_all(const char* path) {
  std::string out;
  if (FILE* f = std::fopen(path, "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

int flap(int argc, char** argv) {
  const std::string path = argv[2];
  const double hours = std::atof(argv[3]);
  const auto step_ms = static_cast<int64_t>(std::atof(argv[4]) * 1000);
  const std::string bus = argv[5];
  int i = 6;
  bool whole = i < argc && std::strcmp(argv[i], "--whole") == 0;
  if (whole) ++i;
  std::vector<std::string> ok, lost;
  for (; i < argc; ++i) {
    std::string text = read_all(argv[i]);
    if (text.empty()) return fail(std::string(argv[i]) + ": empty or unreadable");
    (std::strstr(argv[i], "lost") ? lost : ok).push_back(std::move(text));
  }
  if (ok.empty() || lost.empty() || step_ms <= 0 || hours <= 0) {
    return fail("flap: give HOURS, STEP_S, BUS and OK and LOST JSONs (names with \"lost\")");
  }
  auto store = gd::open_history(path, true, "flap-boot", !whole);
  if (!store.ok()) return fail(store.error());
  const Report healthy = report({});
  const Report down = report({finding("gpu.fallen-off-bus", Severity::kFail, {bus},
                                      "GPU " + bus + " has fallen off the bus")});
  const auto end = kLoopBaseMs + static_cast<int64_t>(hours * kHour);
  int64_t n = 0;
  for (int64_t t = kLoopBaseMs; t < end; t += step_ms, ++n) {
    bool is_lost = n % 2 == 1;
    const auto& pool = is_lost ? lost : ok;
    const std::string& json = pool[static_cast<size_t>(n / 2) % pool.size()];
    if (auto r = (*store)->add_report(t, is_lost ? down : healthy, json); !r.ok()) {
      return fail(r.error());
    }
    if (auto r = (*store)->prune(t - 30 * 24 * kHour); !r.ok()) return fail(r.error());
  }
  std::printf("reports %lld\n", static_cast<long long>(n));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "loop") == 0) return loop(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "fixture") == 0) return fixture(argv[2]);
  if (argc >= 8 && std::strcmp(argv[1], "flap") == 0) return flap(argc, argv);
  std::fprintf(stderr, "usage: history_writer loop|fixture DB | flap DB HOURS STEP_S BUS ...\n");
  return 64;
}
