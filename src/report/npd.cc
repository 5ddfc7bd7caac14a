#include "report/npd.h"

#include <fmt/format.h>

#include "facts/identity.h"
#include "util/text.h"

namespace gd {
namespace {

int gpu_count(const Snapshot& s) {
  int n = node_identity(s).gpu_count;  // on the PCI bus: also the GPUs NVML lost
  int listed = static_cast<int>(s.nvml.gpus.size());
  return n > 0 ? n : listed;
}

std::string plural(int n, const char* what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

// "gpudoctor: fail xid.79 GPU 0000:17:00.0 +1 GPU; +2 more": the parts in
// the order they matter; a part that would push the line past the limit is
// left out, and the head alone is cut to the limit. NPD puts the line into a
// Node condition and an Event: keep it printable ASCII on one line, whatever
// a snapshot holds (ids and bus ids come from files a user may hand us).
std::string problem_line(const Report& r, const Finding& top) {
  std::string line =
      printable_or_question_mark(fmt::format("gpudoctor: {} {}", severity_name(r.verdict), top.id));
  std::vector<std::string> tail;
  if (!top.gpus.empty()) {
    tail.push_back(printable_or_question_mark(" GPU " + top.gpus.front()));
    if (top.gpus.size() > 1) {
      tail.push_back(" +" + plural(static_cast<int>(top.gpus.size() - 1), "GPU"));
    }
  }
  int others = 0;
  for (const auto& f : r.findings) {
    if (&f == &top) continue;
    if (f.severity == Severity::kFail || f.severity == Severity::kWarn) ++others;
  }
  if (others > 0) tail.push_back(fmt::format("; +{} more", others));
  if (line.size() > kNpdMaxMessage) line.resize(kNpdMaxMessage);
  for (const auto& part : tail) {
    if (line.size() + part.size() > kNpdMaxMessage) break;
    line += part;
  }
  return line;
}

}  // namespace

NpdResult render_npd(const Report& r) { return render_npd(r, NpdOptions{}); }

NpdResult render_npd(const Report& r, const NpdOptions& opt) {
  if (r.snapshot == nullptr && r.findings.empty()) return {2, "gpudoctor: unknown (no report)\n"};
  const Finding* top = nullptr;
  for (const auto& f : r.findings) {
    if (f.severity == r.verdict) {
      top = &f;  // rank order: the most likely root cause of that severity
      break;
    }
  }
  bool problem = r.verdict == Severity::kFail || r.verdict == Severity::kWarn;
  if (!problem || top == nullptr) {
    std::string line = "gpudoctor: ok";
    if (r.snapshot != nullptr) line += " (" + plural(gpu_count(*r.snapshot), "GPU") + ")";
    return {0, line + "\n"};
  }
  int code = r.verdict == Severity::kFail || opt.warn_is_problem ? 1 : 0;
  return {code, problem_line(r, *top) + "\n"};
}

}  // namespace gd
