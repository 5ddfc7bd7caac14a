// gpudoctor history: what the history database (written by `gpudoctor
// serve`) says about a window of time: kernel events per GPU and code
// (first seen, last seen, count: "when did GPU 3 start throwing Xid 79"),
// what changed between consecutive reports ("what changed since
// yesterday"), and the `gpudoctor diag` runs, listed apart: a diag finding
// is a measurement of its moment, never "cleared" by the next check.
// Read-only; never blocks the writer. docs/history.md.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "history/reader.h"
#include "history/store.h"
#include "probe/hw_common.h"
#include "util/ascii.h"
#include "util/since.h"
#include "util/time.h"

namespace gd {

namespace {

// Exit codes: 0 answered (an empty window too), kExitInternal (3) the
// database is absent, unreadable or not a history, kExitUsage (64) bad flags.

constexpr int64_t kBeginning = std::numeric_limits<int64_t>::min() / 2;

std::string local_time(int64_t ms) {
  return local_datetime_text(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));  // floor: before 1970 too
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 6 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string known_list(const std::vector<StoredGpu>& gpus) {
  if (gpus.empty()) return "no stored report names any GPU";
  std::string out = "known:";
  for (const StoredGpu& g : gpus) {
    out += ' ' + (g.nvml_index >= 0 ? std::to_string(g.nvml_index) + '=' : "") + g.bus_id;
  }
  return out;
}

// --gpu as a PCI bus id (any of nvidia-smi's, CUDA's or sysfs's spellings),
// an nvidia-smi index or a UUID; the last two through the GPUs the stored
// reports named.
Result<StoredGpu> resolve_gpu(const std::string& query, const std::vector<StoredGpu>& gpus) {
  if (query.find(':') != std::string::npos) {
    StoredGpu g;
    // "9b:00.0" (lspci's short form) is in domain 0.
    bool short_form = std::count(query.begin(), query.end(), ':') == 1;
    g.bus_id = normalize_bus_id(short_form ? "0000:" + query : query);
    for (const StoredGpu& k : gpus) {
      if (k.bus_id == g.bus_id) return k;
    }
    return g;
  }
  if (all_digits(query)) {
    int index = std::stoi(query);
    for (const StoredGpu& k : gpus) {
      if (k.nvml_index == index) return k;
    }
    return Error{"--gpu " + query + ": no GPU with that index in the stored reports (" +
                 known_list(gpus) + ")"};
  }
  std::string want = ascii_lower(query);
  if (want.rfind("gpu-", 0) == 0 || want.rfind("mig-", 0) == 0) {
    for (const StoredGpu& k : gpus) {
      if (ascii_lower(k.uuid) == want) return k;
    }
    return Error{"--gpu " + query.substr(0, 60) +
                 ": no GPU with that UUID in the stored reports (" + known_list(gpus) + ")"};
  }
  return Error{"--gpu '" + query.substr(0, 60) +
               "': give a PCI bus id (0000:17:00.0), an nvidia-smi index (3) or a UUID (GPU-...)"};
}

std::string event_name(const std::string& kind, const std::string& type, int code) {
  if (kind == "xid") return "Xid " + std::to_string(code);
  if (kind == "sxid") return "SXid " + std::to_string(code);
  std::string out = kind;
  if (!type.empty()) out += ' ' + type;
  if (code != 0) out += ' ' + std::to_string(code);
  return out;
}

struct Answer {
  std::string db;
  int64_t now_ms = 0;
  int64_t since_ms = kBeginning;
  std::optional<StoredGpu> gpu;
  std::string gpu_query;
  ReportSpan reports;
  std::vector<StoredGpu> gpus;
  std::vector<EventGroup> events;
  std::vector<Change> changes;
  std::vector<StoredDiagRun> diag_runs;  // in the window, oldest first

  // "GPU 3 (0000:17:00.0)" or the bus id alone.
  std::string gpu_label(const std::string& bus) const {
    for (const StoredGpu& g : gpus) {
      if (g.bus_id == bus && g.nvml_index >= 0) {
        return "GPU " + std::to_string(g.nvml_index) + " (" + bus + ")";
      }
    }
    return bus;
  }
  std::string gpu_index(const std::string& bus) const {
    for (const StoredGpu& g : gpus) {
      if (g.bus_id == bus && g.nvml_index >= 0) return std::to_string(g.nvml_index);
    }
    return "-";
  }
};

Result<Answer> answer(HistoryReader& db, Answer a) {
  auto gpus = db.gpus();
  if (!gpus.ok()) return Error{gpus.error()};
  a.gpus = std::move(*gpus);
  if (!a.gpu_query.empty()) {
    auto g = resolve_gpu(a.gpu_query, a.gpus);
    if (!g.ok()) return Error{g.error()};
    a.gpu = *g;
  }
  std::string bus = a.gpu ? a.gpu->bus_id : "";
  auto span = db.report_span(a.since_ms, a.now_ms);
  if (!span.ok()) return Error{span.error()};
  a.reports = *span;

  auto runs = db.event_runs(a.since_ms, a.now_ms, bus);
  if (!runs.ok()) return Error{runs.error()};
  a.events = group_events(*runs);
  for (const EventRun& r : *runs) {
    if (r.first_seen_ms < a.since_ms) continue;
    Change c;
    c.kind = Change::Kind::kEvent;
    c.time_ms = r.first_seen_ms;
    c.event = r;
    a.changes.push_back(std::move(c));
  }

  std::optional<StoredReport> prev;
  if (a.since_ms != kBeginning) {
    auto before = db.report_before(a.since_ms);
    if (!before.ok()) return Error{before.error()};
    prev = std::move(*before);
  }
  auto diags = db.diag_runs(a.since_ms, a.now_ms);
  if (!diags.ok()) return Error{diags.error()};
  a.diag_runs = std::move(*diags);
  if (!bus.empty()) {
    for (StoredDiagRun& r : a.diag_runs) {
      std::erase_if(r.findings, [&](const StoredDiagFinding& f) {
        return std::find(f.gpus.begin(), f.gpus.end(), bus) == f.gpus.end();
      });
    }
  }

  auto each = db.for_each_report(a.since_ms, a.now_ms, [&](const StoredReport& r) {
    diff_reports(prev ? &*prev : nullptr, r, bus, &a.changes);
    prev = r;
  });
  if (!each.ok()) return Error{each.error()};
  std::stable_sort(a.changes.begin(), a.changes.end(),
                   [](const Change& x, const Change& y) { return x.time_ms < y.time_ms; });
  return a;
}

// --- text -----------------------------------------------------------------------

std::string gpus_text(const Answer& a, const std::vector<std::string>& gpus) {
  if (gpus.empty()) return "";
  std::string out = " [";
  for (size_t i = 0; i < gpus.size(); ++i) out += (i ? ", " : "") + a.gpu_label(gpus[i]);
  return out + "]";
}

std::string change_text(const Answer& a, const Change& c) {
  std::string when = local_time(c.time_ms) + "  ";
  const StoredFinding& f = c.finding;
  switch (c.kind) {
    case Change::Kind::kVerdict:
      if (c.from.empty()) return when + "verdict  " + c.to + " (first report)";
      return when + "verdict  " + c.from + " -> " + c.to;
    case Change::Kind::kAppeared:
      return when + "new      " + c.to + " " + f.id + gpus_text(a, f.gpus) + ": " + f.summary;
    case Change::Kind::kChanged:
      return when + "changed  " + c.from + " -> " + c.to + " " + f.id + gpus_text(a, f.gpus) +
             ": " + f.summary;
    case Change::Kind::kCleared:
      return when + "cleared  " + c.from + " " + f.id + gpus_text(a, f.gpus);
    case Change::Kind::kEvent: {
      const EventRun& e = c.event;
      std::string out = when + "kernel   " + event_name(e.kind, e.type, e.code);
      if (!e.gpu.empty()) out += " on " + a.gpu_label(e.gpu);
      out += " began";
      if (e.count > 1) {
        out += " (" + std::to_string(e.count) + " times until " + local_time(e.last_seen_ms) + ")";
      }
      if (!e.message.empty()) out += ": " + e.message;
      return out;
    }
  }
  return when;
}

std::string render_text(const Answer& a) {
  std::string out = "History " + a.db + "\n";
  out += "Window: " +
         (a.since_ms == kBeginning ? std::string("everything stored")
                                   : "since " + local_time(a.since_ms)) +
         ", until " + local_time(a.now_ms) + "\n";
  if (a.gpu) {
    out += "GPU: " + a.gpu_label(a.gpu->bus_id);
    if (!a.gpu->name.empty()) out += " " + a.gpu->name;
    if (!a.gpu->uuid.empty()) out += " " + a.gpu->uuid;
    out += "\n";
  }
  if (a.reports.count == 0) {
    out += "Reports: none in the window\n";
  } else {
    out += "Reports: " + std::to_string(a.reports.count) + ", " + local_time(a.reports.first_ms) +
           " to " + local_time(a.reports.last_ms) + "; the latest says " + a.reports.last_verdict +
           "\n";
  }

  out += "\nKernel events:\n";
  if (a.events.empty()) {
    out += "  none\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"GPU", "BUS ID", "EVENT", "FIRST SEEN", "LAST SEEN", "COUNT", "MESSAGE"}};
    for (const EventGroup& g : a.events) {
      rows.push_back({g.gpu.empty() ? "-" : a.gpu_index(g.gpu), g.gpu.empty() ? "-" : g.gpu,
                      event_name(g.kind, g.type, g.code), local_time(g.first_seen_ms),
                      local_time(g.last_seen_ms), std::to_string(g.count), g.message});
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    }
    for (const auto& r : rows) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i) {
        std::string cell = r[i];
        if (i == 5) cell.insert(0, width[i] - cell.size(), ' ');  // counts right-aligned
        if (i + 1 < r.size()) cell.resize(width[i], ' ');
        line += "  " + cell;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }

  out += "\nChanges:\n";
  if (a.changes.empty()) out += "  none\n";
  for (const Change& c : a.changes) out += "  " + change_text(a, c) + "\n";

  // Only when there are some: most histories hold none.
  if (!a.diag_runs.empty()) out += "\nDiag runs:\n";
  for (const StoredDiagRun& r : a.diag_runs) {
    out += "  " + local_time(r.time_ms) + "  level " + std::to_string(r.level) + "  " + r.verdict;
    if (r.findings.empty()) {
      out += "  (no findings" + std::string(a.gpu ? " on this GPU" : "") + ")\n";
      continue;
    }
    out += "\n";
    for (const StoredDiagFinding& f : r.findings) {
      out += "      " + f.severity + " " + f.id + gpus_text(a, f.gpus) + ": " + f.summary + "\n";
    }
  }
  return out;
}

// --- JSON -----------------------------------------------------------------------

using Json = nlohmann::ordered_json;

Json gpu_json(const StoredGpu& g) {
  Json j;
  j["bus_id"] = g.bus_id;
  j["nvml_index"] = g.nvml_index >= 0 ? Json(g.nvml_index) : Json();
  j["uuid"] = g.uuid.empty() ? Json() : Json(g.uuid);
  j["name"] = g.name.empty() ? Json() : Json(g.name);
  return j;
}

Json finding_json(const StoredFinding& f) {
  return Json{{"id", f.id}, {"severity", f.severity}, {"gpus", f.gpus}, {"summary", f.summary}};
}

std::string render_json(const Answer& a) {
  Json j;
  j["schema"] = "gpudoctor.history/v1";
  j["db"] = a.db;
  j["now"] = iso_time_ms(a.now_ms);
  j["since"] = a.since_ms == kBeginning ? Json() : Json(iso_time_ms(a.since_ms));
  if (a.gpu) {
    Json g = gpu_json(*a.gpu);
    g["query"] = a.gpu_query;
    j["gpu"] = g;
  } else {
    j["gpu"] = nullptr;
  }
  Json reports;
  reports["count"] = a.reports.count;
  reports["first"] = a.reports.count ? Json(iso_time_ms(a.reports.first_ms)) : Json();
  reports["last"] = a.reports.count ? Json(iso_time_ms(a.reports.last_ms)) : Json();
  reports["verdict"] = a.reports.count ? Json(a.reports.last_verdict) : Json();
  j["reports"] = reports;
  j["gpus"] = Json::array();
  for (const StoredGpu& g : a.gpus) j["gpus"].push_back(gpu_json(g));
  j["events"] = Json::array();
  for (const EventGroup& g : a.events) {
    j["events"].push_back(Json{{"gpu", g.gpu.empty() ? Json() : Json(g.gpu)},
                               {"kind", g.kind},
                               {"type", g.type},
                               {"code", g.code},
                               {"message", g.message},
                               {"first_seen", iso_time_ms(g.first_seen_ms)},
                               {"last_seen", iso_time_ms(g.last_seen_ms)},
                               {"count", g.count},
                               {"boots", g.boots}});
  }
  j["changes"] = Json::array();
  static const char* const kKinds[] = {"verdict", "appeared", "cleared", "changed", "event"};
  for (const Change& c : a.changes) {
    Json x;
    x["time"] = iso_time_ms(c.time_ms);
    x["change"] = kKinds[static_cast<int>(c.kind)];
    if (c.kind == Change::Kind::kEvent) {
      const EventRun& e = c.event;
      x["event"] = Json{{"gpu", e.gpu.empty() ? Json() : Json(e.gpu)},
                        {"kind", e.kind},
                        {"type", e.type},
                        {"code", e.code},
                        {"message", e.message},
                        {"line", e.line},
                        {"first_seen", iso_time_ms(e.first_seen_ms)},
                        {"last_seen", iso_time_ms(e.last_seen_ms)},
                        {"count", e.count},
                        {"boot", e.boot}};
    } else {
      x["from"] = c.from.empty() ? Json() : Json(c.from);
      x["to"] = c.to.empty() ? Json() : Json(c.to);
      if (c.kind != Change::Kind::kVerdict) x["finding"] = finding_json(c.finding);
    }
    j["changes"].push_back(std::move(x));
  }
  if (!a.diag_runs.empty()) {
    j["diag_runs"] = Json::array();
    for (const StoredDiagRun& r : a.diag_runs) {
      Json findings = Json::array();
      for (const StoredDiagFinding& f : r.findings) {
        findings.push_back(
            Json{{"id", f.id}, {"severity", f.severity}, {"gpus", f.gpus}, {"summary", f.summary}});
      }
      j["diag_runs"].push_back(Json{{"time", iso_time_ms(r.time_ms)},
                                    {"level", r.level},
                                    {"verdict", r.verdict},
                                    {"findings", std::move(findings)}});
    }
  }
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

void setup_history(CLI::App* app, HistoryArgs* args) {
  std::string where = default_history_path();
  app->add_option("--history", args->db,
                  "The history database `gpudoctor serve` writes (default: " +
                      (where.empty() ? std::string("~/.local/state/gpudoctor/history.db") : where) +
                      ")")
      ->option_text("FILE");
  // The flag's first name, kept working for scripts but no longer shown:
  // every other command calls the database --history.
  app->add_option("--db", args->db)->group("");
  app->add_option("--since", args->since,
                  "Only this window: a duration back from now (2h, 1d), today, yesterday, or a "
                  "date/time (2026-03-01, 2026-03-01T14:00, with Z or +02:00 for a zone; local "
                  "time without). Default: everything stored")
      ->option_text("WHEN");
  app->add_option("--gpu", args->gpu,
                  "Only this GPU: a PCI bus id (0000:17:00.0), an nvidia-smi index (3, as the "
                  "stored reports numbered it) or a UUID (GPU-...)")
      ->option_text("GPU");
  app->add_flag("--json", args->json, "Print gpudoctor.history/v1 JSON");
  // Tests only: answer as if it were this time (a date/time as --since takes).
  app->add_option("--now", args->now)->group("");
  app->footer(
      "Examples:\n"
      "  gpudoctor history --gpu 3            when did GPU 3 start throwing Xid 79?\n"
      "  gpudoctor history --since yesterday  what changed since yesterday?\n"
      "  gpudoctor history --since 1w         ... and the gpudoctor diag runs of the week\n"
      "Exit: 0 answered, 3 no readable history database, 64 bad flags. docs/history.md");
}

int run_history(const HistoryArgs& args) {
  Answer a;
  a.now_ms = now_unix_ms();
  if (!args.now.empty()) {
    auto now = parse_since(args.now, a.now_ms);
    if (!now.ok()) {
      print_error("--now: " + now.error());
      return kExitUsage;
    }
    a.now_ms = *now;
  }
  if (!args.since.empty()) {
    auto since = parse_since(args.since, a.now_ms);
    if (!since.ok()) {
      print_error(since.error());  // it names --since
      return kExitUsage;
    }
    a.since_ms = *since;
  }
  a.gpu_query = args.gpu;
  a.db = args.db.empty() ? default_history_path() : args.db;
  if (a.db.empty()) {
    print_error("no history path: HOME is not set (give --history FILE)");
    return kExitInternal;
  }
  struct stat st {};
  if (stat(a.db.c_str(), &st) != 0 && errno == ENOENT) {
    print_error("no history at " + a.db +
                " (`gpudoctor serve` writes it; --history FILE reads another)");
    return kExitInternal;
  }
  auto db = HistoryReader::open(a.db);
  if (!db.ok()) {
    print_error(db.error());
    return kExitInternal;
  }
  auto done = answer(*db, std::move(a));
  if (!done.ok()) {
    // Only --gpu can be the user's mistake here; the rest is the database.
    bool usage = done.error().rfind("--gpu", 0) == 0;
    print_error(done.error());
    return usage ? kExitUsage : kExitInternal;
  }
  std::string out = args.json ? render_json(*done) : render_text(*done);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gd
