// ecc.uncorrectable: uncorrectable (double-bit) memory errors, and the
// memory repair running out. An uncorrectable error since the driver loaded
// fails the GPU (its data may be corrupt; it needs a reset); a failed row
// remap or the retired-page limit mean no spare memory is left: replace the
// GPU. Lifetime counts alone are history (info), a pending ECC mode change
// waits for a reboot (info). NVML calls: facts §4.3 (ECC, retire, remap).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/health_util.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {

namespace {

template <class T>
std::string count_or(const NvmlValue<T>& v, const char* unknown = "?") {
  return v.ok() ? std::to_string(v.value) : unknown;
}

// "ECC on; uncorrectable 2 since the driver loaded (lifetime 5), correctable
// 10 (lifetime 130); retired pages 0 single-bit, 2 double-bit; remapped rows
// 0 correctable, 1 uncorrectable, pending no, failed no"
std::string memory_text(const NvmlHealth& h) {
  std::vector<std::string> parts;
  if (h.ecc_mode_current.ok()) {
    std::string mode = h.ecc_mode_current.value != 0 ? "ECC on" : "ECC off";
    if (h.ecc_mode_pending.ok() && h.ecc_mode_pending.value != h.ecc_mode_current.value) {
      mode += h.ecc_mode_pending.value != 0 ? " (on after the next reboot)"
                                            : " (off after the next reboot)";
    }
    parts.push_back(mode);
  }
  if (h.ecc_uncorrected_volatile.ok() || h.ecc_corrected_volatile.ok()) {
    parts.push_back(fmt::format(
        "uncorrectable {} since the driver loaded (lifetime {}), correctable {} (lifetime {})",
        count_or(h.ecc_uncorrected_volatile), count_or(h.ecc_uncorrected_aggregate),
        count_or(h.ecc_corrected_volatile), count_or(h.ecc_corrected_aggregate)));
  }
  if (h.retired_pages_sbe.ok() || h.retired_pages_dbe.ok()) {
    parts.push_back(fmt::format("retired pages {} single-bit, {} double-bit",
                                count_or(h.retired_pages_sbe), count_or(h.retired_pages_dbe)));
  }
  if (h.remap_pending.ok() || h.remapped_rows_uncorrectable.ok()) {
    parts.push_back(
        fmt::format("remapped rows {} correctable, {} uncorrectable, pending {}, failed {}",
                    count_or(h.remapped_rows_correctable), count_or(h.remapped_rows_uncorrectable),
                    h.remap_pending.ok() ? (h.remap_pending.value != 0 ? "yes" : "no") : "?",
                    h.remap_failure.ok() ? (h.remap_failure.value != 0 ? "yes" : "no") : "?"));
  }
  return join(parts, "; ");
}

void push_bdf(std::vector<std::string>* v, const std::string& bdf) {
  if (!bdf.empty()) v->push_back(bdf);
}

struct Counts {
  int uncorrectable = 0, remap_failed = 0, retired_limit = 0, corrected = 0, history = 0,
      mode_pending = 0, ecc_off = 0, unknown = 0;
  std::vector<std::string> reset_gpus, replace_gpus, mode_gpus, off_gpus, history_gpus;
};

}  // namespace

std::vector<Finding> check_ecc(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "ecc.uncorrectable";
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so ECC errors are unknown");
  }
  HealthTally tally;
  Counts n;
  for (const NvmlGpu& g : s.nvml.gpus) {
    const NvmlHealth& h = g.health;
    const HealthThresholds& th = thresholds_for(c, gpu_name(g));
    std::string bdf = finding_bdf(g);
    if (note_unopened(g, &tally)) continue;
    Reading mode = classify(g, h.ecc_mode_current);
    bool has_remap = h.remap_failure.ok() || h.remap_pending.ok();
    bool has_retired = h.retired_pages_sbe.ok() || h.retired_pages_dbe.ok();
    if (mode == Reading::kError) {
      ++tally.judged;
      ++n.unknown;
      tally.add(Severity::kWarn, bdf,
                unreadable_line(g, "nvmlDeviceGetEccMode", reading_rc(g, h.ecc_mode_current),
                                "memory error state"));
      continue;
    }
    if (mode == Reading::kNotApplicable && !has_remap && !has_retired) continue;
    ++tally.judged;
    bool ecc_on = mode == Reading::kValue && h.ecc_mode_current.value != 0;
    Severity sev = Severity::kOk;
    std::vector<std::string> what;
    if (ecc_on && h.ecc_uncorrected_volatile.ok() &&
        h.ecc_uncorrected_volatile.value >= th.ecc_uncorrected_fail) {
      ++n.uncorrectable;
      push_bdf(&n.reset_gpus, bdf);
      sev = worse(sev, Severity::kFail);
      what.push_back(fmt::format("{} uncorrectable ECC error{} since the driver loaded",
                                 h.ecc_uncorrected_volatile.value,
                                 h.ecc_uncorrected_volatile.value == 1 ? "" : "s"));
    } else if (ecc_on && h.ecc_uncorrected_aggregate.ok() &&
               h.ecc_uncorrected_aggregate.value > 0) {
      ++n.history;
      push_bdf(&n.history_gpus, bdf);
      sev = worse(sev, Severity::kInfo);
      what.push_back(fmt::format("{} uncorrectable ECC error{} in its lifetime, none now",
                                 h.ecc_uncorrected_aggregate.value,
                                 h.ecc_uncorrected_aggregate.value == 1 ? "" : "s"));
    }
    if (h.remap_failure.ok() && h.remap_failure.value != 0) {
      ++n.remap_failed;
      push_bdf(&n.replace_gpus, bdf);
      sev = worse(sev, Severity::kFail);
      what.push_back("a row remap failed: no spare rows left");
    }
    uint64_t retired = (h.retired_pages_sbe.ok() ? h.retired_pages_sbe.value : 0) +
                       (h.retired_pages_dbe.ok() ? h.retired_pages_dbe.value : 0);
    if (has_retired && retired >= th.retired_pages_fail) {
      ++n.retired_limit;
      push_bdf(&n.replace_gpus, bdf);
      sev = worse(sev, Severity::kFail);
      what.push_back(fmt::format("{} retired pages, at or above the limit of {}", retired,
                                 th.retired_pages_fail));
    }
    if (ecc_on && th.ecc_corrected_warn > 0 && h.ecc_corrected_volatile.ok() &&
        h.ecc_corrected_volatile.value >= th.ecc_corrected_warn) {
      ++n.corrected;
      sev = worse(sev, Severity::kWarn);
      what.push_back(fmt::format("{} correctable ECC errors since the driver loaded (warn at {})",
                                 h.ecc_corrected_volatile.value, th.ecc_corrected_warn));
    }
    if (mode == Reading::kValue && h.ecc_mode_pending.ok() &&
        h.ecc_mode_pending.value != h.ecc_mode_current.value) {
      ++n.mode_pending;
      push_bdf(&n.mode_gpus, bdf);
      sev = worse(sev, Severity::kInfo);
      what.push_back("an ECC mode change waits for a reboot or GPU reset");
    } else if (mode == Reading::kValue && !ecc_on) {
      ++n.ecc_off;
      push_bdf(&n.off_gpus, bdf);
      sev = worse(sev, Severity::kInfo);
      what.push_back("ECC is off: memory errors go undetected");
    }
    std::string details = memory_text(h);
    std::string line = gpu_label(g) + ": ";
    if (!what.empty()) line += join(what, "; ") + (details.empty() ? "" : " (" + details + ")");
    if (what.empty()) line += details;
    tally.add(sev, bdf, line);
  }
  if (tally.judged == 0) {
    return not_applicable(kId,
                          "NVML reports no ECC, page retirement or row remapping on any GPU "
                          "(GeForce cards have none)");
  }
  if (tally.worst == Severity::kOk) {
    Finding f = make_finding(kId, Severity::kOk,
                             fmt::format("no uncorrectable memory errors on {} GPU{}", tally.judged,
                                         tally.judged == 1 ? "" : "s"));
    f.evidence = tally.ok_lines;
    return {f};
  }
  std::vector<std::string> parts;
  auto part = [&](int count, const char* text) {
    if (count > 0) parts.push_back(fmt::format("{} {}", count, text));
  };
  part(n.uncorrectable, "with uncorrectable ECC errors since the driver loaded");
  part(n.remap_failed, "with a failed row remap (no spare rows left)");
  part(n.retired_limit, "at the retired-page limit");
  part(n.corrected, "with many correctable errors");
  part(n.history, "with uncorrectable errors in their history only");
  part(n.mode_pending, "with an ECC mode change pending");
  part(n.ecc_off, "with ECC off");
  part(n.unknown, "whose memory error state could not be read");
  std::string summary = parts.empty() ? "" : "GPU memory: " + join(parts, ", ");
  Finding f = tally_finding(kId, tally, {summary});
  if (n.uncorrectable > 0) {
    f.remedy.push_back(fmt::format(
        "Drain the GPU: stop its jobs (nvidia-smi --query-compute-apps=pid,process_name "
        "--format=csv -i {}), then reset it: {}; or reboot the node",
        join(n.reset_gpus, ","), per_gpu_command(n.reset_gpus, "sudo nvidia-smi -r -i {}")));
    f.remedy.push_back(fmt::format(
        "On A100 and newer the reset activates a spare row: check afterwards with nvidia-smi -q "
        "-d ECC,ROW_REMAPPER -i {}",
        join(n.reset_gpus, ",")));
  }
  if (n.remap_failed + n.retired_limit > 0) {
    f.remedy.push_back(fmt::format(
        "Replace the GPU (RMA): its spare memory is used up. Record the evidence for the vendor: "
        "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER -i {} > gpu-memory-errors.txt",
        join(n.replace_gpus, ",")));
  }
  if (n.uncorrectable + n.corrected > 0) {
    f.remedy.push_back("Errors that keep coming back: replace the GPU (RMA).");
  }
  if (n.history > 0 && n.uncorrectable == 0) {
    f.remedy.push_back(fmt::format(
        "History only: nothing to do now; watch for new errors with nvidia-smi -q -d ECC -i {}",
        join(n.history_gpus, ",")));
  }
  if (n.mode_pending > 0) {
    f.remedy.push_back(
        "Apply the pending ECC mode: " + per_gpu_command(n.mode_gpus, "sudo nvidia-smi -r -i {}") +
        " with nothing running on it, or reboot");
  }
  if (n.ecc_off > 0) {
    f.remedy.push_back("Turn ECC on if the data matters: " +
                       per_gpu_command(n.off_gpus, "sudo nvidia-smi -i {} -e 1") +
                       ", then reset the GPU or reboot");
  }
  if (n.unknown + tally.unopened > 0) f.remedy.push_back(kUnreadableRemedy);
  return {f};
}

}  // namespace gd
