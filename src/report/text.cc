// The human report: the verdict at the top; then the most likely root cause
// with its evidence and the exact fix (or, when no cause was found, the
// symptom); what follows from it; other problems; notes one line each; and,
// where there is a problem to fix (or with --verbose), what the usual folk
// remedies would do on this machine. A healthy machine reads in a few lines.
#include "util/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "catalog/cuda_errors.h"
#include "catalog/findings.h"
#include "report/container_command.h"
#include "report/render.h"

namespace gd {
namespace {

// One spelling for a severity everywhere in the text: upper case.
const char* label(Severity s) {
  switch (s) {
    case Severity::kFail:
      return "FAIL";
    case Severity::kWarn:
      return "WARN";
    case Severity::kInfo:
      return "INFO";
    case Severity::kOk:
      return "OK";
    case Severity::kNotApplicable:
      return "N/A";
  }
  return "?";
}

bool is_advice(const Finding& f) { return f.id.rfind("advice.", 0) == 0; }

// ANSI SGR codes: bold red, yellow, cyan, green, dim.
const char* sgr(std::string_view word) {
  if (word == "FAIL") return "\033[1;31m";
  if (word == "WARN") return "\033[33m";
  if (word == "INFO") return "\033[36m";
  if (word == "OK") return "\033[32m";
  if (word == "N/A") return "\033[2m";
  return nullptr;
}

// `line` from `at` on starts with a severity word followed by a space or
// the line's end: that word painted, else the line as it is.
std::string paint_at(std::string_view line, size_t at) {
  size_t end = line.find_first_of(" \n", at);
  if (end == std::string_view::npos) end = line.size();
  const char* code = sgr(line.substr(at, end - at));
  if (code == nullptr) return std::string(line);
  return std::string(line.substr(0, at)) + code + std::string(line.substr(at, end - at)) +
         "\033[0m" + std::string(line.substr(end));
}

std::string cuda_line(const Snapshot& s) {
  if (!s.cuda.attempted || s.cuda.runs.empty()) return "CUDA not tried";
  const CudaRun& r = s.cuda.runs.front();
  if (!r.child_error.empty()) return "CUDA probe " + r.child_error;
  if (r.library_loaded.empty()) return "libcuda not loadable";
  if (r.init_rc != 0) return "cuInit failed: " + cuda_driver_error(r.init_rc);
  if (r.device_count_rc != 0)
    return "cuDeviceGetCount failed: " + cuda_driver_error(r.device_count_rc);
  return fmt::format("CUDA sees {}", r.device_count);
}

std::string nvml_line(const Snapshot& s) {
  const NvmlInfo& n = s.nvml;
  if (!n.attempted) return "NVML not tried";
  if (!n.child_error.empty()) return "NVML probe " + n.child_error;
  if (n.library_loaded.empty()) return "libnvidia-ml not loadable";
  if (n.init_rc != 0) return "nvmlInit failed: " + nvml_error(n.init_rc);
  return fmt::format("NVML sees {}", n.device_count.value);
}

std::string machine_line(const Snapshot& s) {
  int gpus = 0;
  for (const auto& d : s.pci) gpus += d.kind == PciKind::kGpu ? 1 : 0;
  std::string driver =
      s.driver.version.empty() ? "no NVIDIA driver loaded" : "driver " + s.driver.version;
  if (s.driver.wsl.detected) {
    // The Windows driver serves the GPU: no PCI device, no Linux module.
    driver = s.driver.wsl.wsl1 ? "WSL 1 (no GPU support)" : "WSL 2 (the Windows driver)";
    return fmt::format("{} · {} · {}", driver, nvml_line(s), cuda_line(s));
  }
  return fmt::format("{} NVIDIA GPU{} on the PCI bus · {} · {} · {}", gpus, gpus == 1 ? "" : "s",
                     driver, nvml_line(s), cuda_line(s));
}

// Evidence lines, at most kEvidenceShown of them unless verbose: a finding
// over a forged snapshot of a thousand GPUs has a line per GPU, and the
// report must still fit a screen or two. --json keeps every line.
constexpr size_t kEvidenceShown = 40;

void append_lines(std::string* out, const std::vector<std::string>& lines, std::string_view indent,
                  bool verbose) {
  const size_t shown = verbose ? lines.size() : std::min(lines.size(), kEvidenceShown);
  for (size_t i = 0; i < shown; ++i) *out += fmt::format("{}{}\n", indent, lines[i]);
  if (shown < lines.size()) {
    *out += fmt::format("{}... and {} more lines (--verbose or --json shows them all)\n", indent,
                        lines.size() - shown);
  }
}

void append_detail(std::string* out, const Finding& f, const char* indent, bool verbose) {
  if (!f.gpus.empty()) {
    *out += fmt::format("{}GPUs: {}\n", indent, join_skip_leading_empty(f.gpus, ", "));
  }
  if (!f.evidence.empty()) {
    *out += fmt::format("{}evidence:\n", indent);
    append_lines(out, f.evidence, fmt::format("{}  ", indent), verbose);
  }
  if (!f.remedy.empty()) {
    *out += fmt::format("{}fix:\n", indent);
    for (const auto& e : f.remedy) *out += fmt::format("{}  {}\n", indent, e);
  }
  if (verbose && !f.ranked_by.empty())
    *out += fmt::format("{}ranked by: {}\n", indent, f.ranked_by);
}

void append_full(std::string* out, const Finding& f, bool verbose) {
  *out += fmt::format("  {:<5} {}\n", label(f.severity), f.id);
  *out += fmt::format("        {}\n", f.summary);
  append_detail(out, f, "        ", verbose);
}

}  // namespace

std::string colorize_report(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 256);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    std::string_view line(text.data() + pos, end - pos);
    if (line.starts_with("Verdict: ")) {
      out += paint_at(line, 9);
    } else if (line.starts_with("  ") && line.size() > 2 && line[2] != ' ') {
      out += paint_at(line, 2);
    } else {
      out += line;
    }
    pos = end;
  }
  return out;
}

std::string render_text(const Report& r, const TextOptions& opt) {
  std::vector<const Finding*> roots, follows, others, notes, advice, passed;
  for (const auto& f : r.findings) {
    bool problem = f.severity == Severity::kFail || f.severity == Severity::kWarn;
    if (is_advice(f)) {
      advice.push_back(&f);
    } else if (problem && !f.follows_from.empty()) {
      follows.push_back(&f);
    } else if (problem && roots.empty()) {
      roots.push_back(&f);
    } else if (problem) {
      others.push_back(&f);
    } else if (f.severity == Severity::kInfo) {
      notes.push_back(&f);
    } else {
      passed.push_back(&f);
    }
  }
  int ok = 0, na = 0;
  for (const Finding* f : passed) (f->severity == Severity::kOk ? ok : na)++;
  size_t problems = roots.size() + follows.size() + others.size();
  std::string verdict = fmt::format(
      "Verdict: {} — {} problem{}{}, {} ok, {} not applicable{}\n",
      r.undecided ? "UNKNOWN" : label(r.verdict), problems, problems == 1 ? "" : "s",
      notes.empty() ? "" : fmt::format(", {} note{}", notes.size(), notes.size() == 1 ? "" : "s"),
      ok, na, opt.verbose || passed.empty() ? "" : " (--verbose lists them)");
  if (opt.quiet) return verdict;

  std::string out;
  if (r.snapshot != nullptr) {
    const Snapshot& s = *r.snapshot;
    out += fmt::format("gpudoctor {} · host {} · {}\n", s.tool_version,
                       s.hostname.empty() ? "?" : s.hostname, s.taken_at);
    out += machine_line(s) + "\n";
  }
  out += verdict;

  auto append_notes = [&] {
    for (const Finding* f : notes) {
      if (opt.verbose) {
        append_full(&out, *f, opt.verbose);
      } else {
        out += fmt::format("  {:<5} {}: {}\n", label(f->severity), f->id, f->summary);
      }
    }
  };
  if (problems == 0) append_notes();  // a healthy machine: the notes right under the verdict

  if (!roots.empty()) {
    // A symptom at the top means no narrower cause was proven: said as such.
    const CatalogEntry* e = find_catalog_entry(roots.front()->id);
    out += e != nullptr && e->symptom ? "\nNo cause found; the symptom\n"
                                      : "\nMost likely root cause\n";
    append_full(&out, *roots.front(), opt.verbose);
  }
  if (!follows.empty()) {
    out += "\nFollows from it (fix the cause first)\n";
    for (const Finding* f : follows) {
      out += fmt::format("  {:<5} {} (follows from {})\n        {}\n", label(f->severity), f->id,
                         f->follows_from, f->summary);
    }
  }
  if (!others.empty()) {
    out += "\nAlso found\n";
    for (const Finding* f : others) append_full(&out, *f, opt.verbose);
  }
  if (auto cmd = container_command(r)) {
    out +=
        cmd->engine == "kubernetes"
            ? "\nThe pod spec that fixes it (" + join(cmd->fixes, ", ") + ")\n"
            : "\nThe " + cmd->engine + " command that fixes it (" + join(cmd->fixes, ", ") + ")\n";
    for (const std::string& line : cmd->lines) out += "  " + line + "\n";
  }
  if (problems > 0 && !notes.empty()) {
    out += "\nNotes\n";
    append_notes();
  }
  // The folk remedies bear on a problem; on a healthy machine they are
  // there for the asking.
  if (!advice.empty() && (problems > 0 || opt.verbose)) {
    out += "\nWhat the usual remedies do on this machine\n";
    for (const Finding* f : advice) {
      out += fmt::format("  - {}\n", f->summary);
      append_lines(&out, f->evidence, "      ", opt.verbose);
    }
  }
  if (opt.verbose && !passed.empty()) {
    out += "\nPassed or not applicable\n";
    for (const Finding* f : passed) {
      out += fmt::format("  {:<5} {:<30} {}\n", label(f->severity), f->id, f->summary);
    }
  }
  return out;
}

}  // namespace gd
