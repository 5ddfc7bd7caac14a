// ecc.rows-pending: a memory repair waits for a GPU reset. After an
// uncorrectable error, A100 and newer GPUs schedule a spare row (row
// remapping) and older ones a page retirement; either takes effect only when
// the GPU is reset (facts §4.3: nvmlDeviceGetRemappedRows "pending → GPU
// reset activates", nvmlDeviceGetRetiredPagesPendingStatus). Until then the
// driver fences the bad memory off, so the GPU keeps working but with less
// memory: by default a warning ([ecc] pending in the config file).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/health_util.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {

std::vector<Finding> check_rows_pending(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "ecc.rows-pending";
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so pending row remaps are unknown");
  }
  HealthTally tally;
  int pending = 0, unknown = 0;
  std::vector<std::string> reset_gpus;
  for (const NvmlGpu& g : s.nvml.gpus) {
    const NvmlHealth& h = g.health;
    const HealthThresholds& th = thresholds_for(c, gpu_name(g));
    std::string bdf = finding_bdf(g);
    if (note_unopened(g, &tally)) continue;
    Reading remap = classify(g, h.remap_pending);
    Reading retire = classify(g, h.retired_pages_pending);
    if (remap == Reading::kNotApplicable && retire == Reading::kNotApplicable) continue;
    ++tally.judged;
    std::vector<std::string> what;
    if (remap == Reading::kValue && h.remap_pending.value != 0) {
      what.push_back(fmt::format(
          "a row remap is pending (remapped rows: {} correctable, {} uncorrectable)",
          h.remapped_rows_correctable.ok() ? std::to_string(h.remapped_rows_correctable.value)
                                           : "?",
          h.remapped_rows_uncorrectable.ok() ? std::to_string(h.remapped_rows_uncorrectable.value)
                                             : "?"));
    }
    if (retire == Reading::kValue && h.retired_pages_pending.value != 0) {
      what.push_back(
          fmt::format("a page retirement is pending (retired pages: {} single-bit, {} double-bit)",
                      h.retired_pages_sbe.ok() ? std::to_string(h.retired_pages_sbe.value) : "?",
                      h.retired_pages_dbe.ok() ? std::to_string(h.retired_pages_dbe.value) : "?"));
    }
    if (!what.empty()) {
      ++pending;
      if (!bdf.empty()) reset_gpus.push_back(bdf);
      tally.add(to_severity(th.pending), bdf, gpu_label(g) + ": " + join(what, "; "));
      continue;
    }
    // Nothing pending where it could be read; an error on the other
    // reading leaves the GPU unknown.
    if (remap == Reading::kError || retire == Reading::kError) {
      ++unknown;
      bool remap_bad = remap == Reading::kError;
      tally.add(
          Severity::kWarn, bdf,
          unreadable_line(
              g, remap_bad ? "nvmlDeviceGetRemappedRows" : "nvmlDeviceGetRetiredPagesPendingStatus",
              reading_rc(g, remap_bad ? h.remap_pending : h.retired_pages_pending),
              remap_bad ? "row remapping state" : "page retirement state"));
      continue;
    }
    tally.add(Severity::kOk, bdf, gpu_label(g) + ": nothing pending");
  }
  if (tally.judged == 0) {
    return not_applicable(kId,
                          "NVML reports no row remapping or page retirement on any GPU (GeForce "
                          "cards have none; remapping is not reported while MIG instances exist)");
  }
  if (tally.worst == Severity::kOk) {
    Finding f = make_finding(kId, Severity::kOk,
                             fmt::format("no row remap or page retirement waits for a reset on {} "
                                         "GPU{}",
                                         tally.judged, tally.judged == 1 ? "" : "s"));
    f.evidence = tally.ok_lines;
    return {f};
  }
  std::vector<std::string> parts;
  if (pending > 0) {
    parts.push_back(fmt::format(
        "{} GPU{} wait{} for a reset to activate a memory repair (row remap or page retirement)",
        pending, pending == 1 ? "" : "s", pending == 1 ? "s" : ""));
  }
  if (unknown > 0) {
    parts.push_back(fmt::format("the row remapping state of {} GPU{} could not be read", unknown,
                                unknown == 1 ? "" : "s"));
  }
  Finding f = tally_finding(kId, tally, std::move(parts));
  if (pending > 0) {
    f.remedy = {
        fmt::format("Stop the processes on the GPU{}: nvidia-smi "
                    "--query-compute-apps=pid,process_name --format=csv -i {}",
                    reset_gpus.size() == 1 ? "" : "s", join(reset_gpus, ",")),
        "Reset it: " + per_gpu_command(reset_gpus, "sudo nvidia-smi -r -i {}"),
        "If the reset is refused (a process still holds the GPU, or an NVSwitch system needs "
        "its fabric idle), drain the node and reboot.",
        fmt::format("Afterwards nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT -i {} shows "
                    "Pending: No",
                    join(reset_gpus, ",")),
    };
  }
  if (unknown + tally.unopened > 0) f.remedy.push_back(kUnreadableRemedy);
  return {f};
}

}  // namespace gd
