// libFuzzer target: `gpudoctor explain` on pasted text (explain/explain.h):
// snapshot_from_text, then explain_snapshot. The input is whatever people
// paste, e.g.
//
//   RuntimeError: CUDA error: out of memory
//   [ 5000.123456] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has ...
//   Failed to initialize NVML: Driver/library version mismatch
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "catalog/findings.h"
#include "explain/explain.h"
#include "explain/parse.h"
#include "fuzz/invariants.h"

namespace {

void check_snapshot(const gd::Snapshot& s, std::string_view input) {
  if (s.kernel_log.attempted) gd::fuzz::check_info(s.kernel_log, input.size(), std::nullopt);
  GD_REQUIRE(s.kernel_log.events.empty() || s.kernel_log.attempted);
  // Each unobserved source once.
  std::set<std::string> unobserved(s.unobserved.begin(), s.unobserved.end());
  GD_REQUIRE(unobserved.size() == s.unobserved.size());
  // Lines are numbered as explain reads them: UTF-16 decoded, a lone
  // carriage return ending a line (explain/parse.h plain_text).
  const std::string plain = gd::plain_text(input);
  const size_t lines = static_cast<size_t>(std::count(plain.begin(), plain.end(), '\n')) + 1;
  for (const gd::ReportedError& r : s.reported) {
    GD_REQUIRE(!r.kind.empty());
    GD_REQUIRE(r.line_no >= 1 && static_cast<size_t>(r.line_no) <= lines);
    // The line is quoted from the input, or for a REPL's answer the two
    // lines in a few words; the text may be the parser's own words
    // ("lsmod: nvidia_uvm is loaded"), but stays short.
    GD_REQUIRE(r.line.size() <= std::max<size_t>(input.size(), 64) && r.text.size() <= 1000);
  }
}

void check_report(const gd::Report& r, const gd::Snapshot& s) {
  GD_REQUIRE(r.snapshot == &s);
  gd::Severity worst = gd::Severity::kOk;
  for (const gd::Finding& f : r.findings) {
    // Every id a check or a suspect rule emits is in the catalog.
    GD_REQUIRE(!f.id.empty() && gd::find_catalog_entry(f.id) != nullptr);
    GD_REQUIRE(f.follows_from != f.id);
    for (const std::string& gpu : f.gpus) GD_REQUIRE(!gpu.empty());
    // Notes (info) never lift the verdict: the worst warn or fail, else ok.
    bool problem = f.severity == gd::Severity::kWarn || f.severity == gd::Severity::kFail;
    if (problem && f.severity > worst) worst = f.severity;
  }
  GD_REQUIRE(r.verdict == worst);
  // Unknown is the answer to an error nothing attributes: it comes first,
  // and never beside a cause.
  if (r.undecided) {
    GD_REQUIRE(!r.findings.empty() && r.findings.front().id == "explain.unattributed");
    GD_REQUIRE(r.verdict == gd::Severity::kWarn);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  gd::Snapshot s = gd::snapshot_from_text(input);
  check_snapshot(s, input);
  gd::Report r = gd::explain_snapshot(s, gd::Config{});
  check_report(r, s);
  return 0;
}
