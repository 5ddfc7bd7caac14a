// explain: pasted text -> the snapshot fields the probes fill -> the same
// checks -> a Report (shared/DESIGN.md "The flow"). The checks stay the only
// brain: a check runs when the text showed every source it needs; what the
// text shows but cannot decide becomes a "possible cause" (suspects.cc,
// over the tables explain/ranking.h lists).
#include "explain/explain.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <optional>

#include "catalog/findings.h"
#include "checks/runner.h"
#include "checks/util.h"
#include "explain/parse.h"
#include "explain/ranking.h"
#include "explain/suspects.h"
#include "kernlog/scanner.h"
#include "util/ascii.h"
#include "util/time.h"

namespace gd {
namespace {

// Every source a probe fills (ProbeRecord names), plus "reported".
const char* const kSources[] = {"env",        "limits",   "driver",  "pci",  "devnodes",
                                "container",  "services", "fabric",  "nvml", "cuda",
                                "kernel-log", "reported", "workload"};

// "[ 1234.567890] ...", "Mar  2 10:00:01 host kernel: ...", "NVRM: ...": a kernel log line.
bool kernel_line(std::string_view t) {
  if (t.find("NVRM:") != std::string_view::npos || t.find("kernel: ") != std::string_view::npos) {
    return true;
  }
  if (t.size() > 4 && t[0] == '[') {
    size_t i = 1;
    while (i < t.size() && t[i] == ' ') ++i;
    size_t digits = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > digits && i < t.size() && t[i] == '.';
  }
  return false;
}

bool is_cause(const Finding& f) {
  if (f.severity != Severity::kFail && f.severity != Severity::kWarn) return false;
  if (f.id.rfind("advice.", 0) == 0) return false;
  const CatalogEntry* e = find_catalog_entry(f.id);
  return e == nullptr || !e->symptom;
}

bool is_symptom(const Finding& f) {
  if (f.severity != Severity::kFail && f.severity != Severity::kWarn) return false;
  const CatalogEntry* e = find_catalog_entry(f.id);
  return e != nullptr && e->symptom;
}

bool needs_observed(const CheckEntry& c, const Snapshot& s) {
  return std::none_of(c.needs.begin(), c.needs.end(), [&](const std::string& n) {
    return std::find(s.unobserved.begin(), s.unobserved.end(), n) != s.unobserved.end();
  });
}

}  // namespace

Snapshot snapshot_from_text(std::string_view raw) {
  const std::string plain = plain_text(raw);
  const std::string_view text = plain;
  Snapshot s;
  s.tool_version = GD_VERSION;
  s.root = "";
  TextParse p;
  p.s = &s;
  bool kernel_text = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.size() > kMaxLineChars) line = line.substr(0, kMaxLineChars);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    std::string lowered = ascii_lower(line);
    kernel_text = kernel_text || kernel_line(line);
    parse_smi_table_line(line, line_no, &p);
    parse_smi_query_line(line, &p);
    parse_env_line(line, line_no, &p);
    if (!parse_container_line(line, lowered, line_no, &p) &&
        !parse_nvml_line(line, lowered, line_no, &p)) {
      parse_cuda_line(line, lowered, line_no, &p);
    }
    parse_hint_line(line, lowered, line_no, &p);
    parse_error_line(line, lowered, line_no, &p);
    parse_phrase_line(line, lowered, line_no, &p);
    parse_component_line(line, lowered, line_no, &p);
  }

  add_regression_lines(text, &p);

  KernelLogScanner scanner(utc_year(std::time(nullptr)));
  scanner.add_text(text);
  KernelLogInfo log = scanner.finish(ScanReference{});
  if (kernel_text || !log.events.empty()) {
    s.kernel_log = std::move(log);
    s.kernel_log.attempted = true;
    s.kernel_log.source = "text";
    s.kernel_log.bytes = text.size();
    p.observed.insert("kernel-log");
  }

  for (const char* src : kSources) {
    ProbeRecord rec;
    rec.name = src;
    if (p.observed.count(src) != 0) {
      rec.detail = "from the pasted text";
    } else {
      rec.status = ProbeStatus::kUnavailable;
      rec.detail = "not in the pasted text";
      s.unobserved.push_back(src);
    }
    s.probes.push_back(std::move(rec));
  }
  return s;
}

namespace {

// A line a program printed as a warning and went on after: Python's
// UserWarning (PyTorch's "CUDA initialization: ..."), glog's W prefix
// ("W0812 11:02:51.856 ..."), c10's "[W ...]".
bool warning_line(std::string_view line) {
  std::string_view t = trim(line);
  if (t.find("UserWarning") != std::string_view::npos || t.starts_with("warnings.warn(")) {
    return true;
  }
  auto digit = [&](size_t i) {
    return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0;
  };
  if (t.starts_with("[W ")) return true;                 // [W CUDAFunctions.cpp:108]
  if (t.starts_with("[W")) return digit(2) && digit(5);  // [W1205 12:00:00.000 ...]
  return t.starts_with("W") && digit(1) && digit(4);     // W0812 11:02:51.856630
}

// The text's only CUDA error is PyTorch's "Found no NVIDIA driver" (the
// driver version is 0), printed as a warning the program went on after:
// what any machine without an NVIDIA GPU prints when it falls back to the
// CPU. A warning, then, not a failure; another code means a driver exists.
bool only_warned_of_no_driver(const Snapshot& s) {
  bool no_driver = std::any_of(s.cuda.runs.begin(), s.cuda.runs.end(), [](const CudaRun& r) {
    return r.label == "user" && r.driver_version_rc == 0 && r.driver_version == 0 &&
           r.cudart_rc == 35;
  });
  if (!no_driver) return false;
  bool any = false;
  for (const auto& r : s.reported) {
    if (r.kind != "cuda-runtime" && r.kind != "cuda-driver") continue;
    if (!warning_line(r.line)) return false;
    any = true;
  }
  return any;
}

// The text shows an error, and no cause (confirmed or possible) came of
// it: the answer is "unknown", with the error lines and what to run next,
// never "ok". nullopt when a cause was named or the text shows no error.
std::optional<Finding> unattributed(const Snapshot& s, const std::vector<Finding>& ranked) {
  if (std::any_of(ranked.begin(), ranked.end(), [](const Finding& f) {
        return is_cause(f) || (f.check == "explain" && f.severity == Severity::kWarn);
      })) {
    return std::nullopt;
  }
  std::vector<std::string> lines;
  for (const auto& r : s.reported) {
    if (r.kind == "error-line" && lines.size() < 5) lines.push_back(line_ref(r));
  }
  if (lines.empty()) return std::nullopt;
  Finding f;
  f.id = "explain.unattributed";
  f.severity = Severity::kWarn;
  f.summary =
      "The text shows an error whose cause the text alone does not decide: the verdict is "
      "unknown, not ok.";
  f.evidence = std::move(lines);
  f.remedy = {
      "gpudoctor check   # on the machine that printed it: reads the driver, device nodes, GPUs "
      "and "
      "limits the text does not show",
      "sudo dmesg | grep -i -e nvrm -e xid   # the driver's side of the failure (or: gpudoctor "
      "logs)",
      "gpudoctor explain error.txt   # with the program's whole error output, not only its last "
      "line"};
  f.check = "explain";
  f.ranked_by = "no rule attributes the error lines; the next step is the machine's own check";
  f.signals = {"error-line"};
  return f;
}

}  // namespace

Report explain_snapshot(const Snapshot& s, const Config& c) {
  std::vector<const CheckEntry*> runnable;
  for (const auto& entry : all_checks()) {
    if (needs_observed(entry, s)) runnable.push_back(&entry);
  }
  Report checked = run_checks(s, c, runnable);
  if (only_warned_of_no_driver(s)) {
    for (auto& f : checked.findings) {
      if (f.id != "cuda.init-failed" || f.severity != Severity::kFail) continue;
      f.severity = Severity::kWarn;
      f.summary +=
          " The program printed it as a warning and went on without the GPU: on a machine "
          "without an NVIDIA GPU that is expected.";
    }
  }
  // A check that judged (ok or a problem) decides its id; one that found its
  // data missing from the text (n/a) leaves the id to the possible causes.
  std::set<std::string> decided;
  for (const auto& f : checked.findings) {
    if (f.severity != Severity::kNotApplicable) decided.insert(f.id);
  }
  std::vector<Finding> suspects = suspect_findings(s, decided);

  // Confirmed causes, then possible ones, then symptoms, then the rest (in
  // the checks' own rank order).
  std::vector<Finding> causes, symptoms, rest;
  for (auto& f : checked.findings) {
    if (is_cause(f)) {
      f.ranked_by = "confirmed: the " + f.check +
                    " check judged it from the text (confirmed causes first, in catalog rank)";
      f.signals = {"check:" + f.check};
      causes.push_back(std::move(f));
    } else if (is_symptom(f)) {
      symptoms.push_back(std::move(f));
    } else {
      rest.push_back(std::move(f));
    }
  }
  Report r;
  r.snapshot = &s;
  r.findings = std::move(causes);
  for (auto& f : suspects) r.findings.push_back(std::move(f));
  std::string top = r.findings.empty() ? std::string() : r.findings.front().id;
  for (auto& f : symptoms) {
    f.follows_from = top;
    f.ranked_by = top.empty() ? "a symptom: the text names no cause for it"
                              : "a symptom: it follows from the first cause";
    r.findings.push_back(std::move(f));
  }
  for (auto& f : rest) r.findings.push_back(std::move(f));
  if (auto u = unattributed(s, r.findings)) {
    r.findings.insert(r.findings.begin(), std::move(*u));
    r.undecided = true;
  }
  r.verdict = verdict_of(r.findings);
  return r;
}

std::vector<std::string> explain_ids() {
  std::vector<std::string> ids = rule_ids();
  ids.emplace_back("explain.unattributed");
  return ids;
}

}  // namespace gd
