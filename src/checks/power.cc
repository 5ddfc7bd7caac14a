// power.throttled: a GPU held back by power. The hardware power brake
// (clock-event reason 0x80, facts §4.5) is asserted from outside the GPU
// (power supply, cabling, a chassis power cap) and slows it by half or more:
// a problem. The software power cap (0x4) is the GPU staying within its
// power limit under load: normal, unless that limit was lowered far below
// the board's maximum, which is worth saying (info).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/health_util.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {

namespace {

// "drawing 448.2 W of its 450.0 W limit (board max 600.0 W); SM 2520 MHz"
std::string power_text(const NvmlHealth& h) {
  std::string out;
  if (h.power_usage_mw.ok()) out = "drawing " + watts(h.power_usage_mw.value);
  if (h.power_limit_mw.ok()) {
    out += (out.empty() ? "power limit " : " of its ") + watts(h.power_limit_mw.value) +
           (out.empty() ? "" : " limit");
  }
  if (h.power_max_limit_mw.ok()) out += " (board max " + watts(h.power_max_limit_mw.value) + ")";
  if (h.sm_clock_mhz.ok()) {
    out += fmt::format("{}SM {} MHz", out.empty() ? "" : "; ", h.sm_clock_mhz.value);
  }
  return out;
}

// The enforced limit as a percentage of the board's maximum; -1 unknown.
double limit_pct(const NvmlHealth& h) {
  if (!h.power_limit_mw.ok() || !h.power_max_limit_mw.ok() || h.power_max_limit_mw.value == 0) {
    return -1;
  }
  return 100.0 * h.power_limit_mw.value / h.power_max_limit_mw.value;
}

}  // namespace

std::vector<Finding> check_power(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "power.throttled";
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so power throttling is unknown");
  }
  HealthTally tally;
  int braked = 0, lowered = 0, capped = 0, unknown = 0;
  std::vector<std::string> lowered_gpus, braked_gpus;
  for (const NvmlGpu& g : s.nvml.gpus) {
    const NvmlHealth& h = g.health;
    const HealthThresholds& th = thresholds_for(c, gpu_name(g));
    std::string bdf = finding_bdf(g);
    if (note_unopened(g, &tally)) continue;
    Reading r = classify(g, h.clock_event_reasons);
    double pct = g.handle_rc == 0 ? limit_pct(h) : -1;
    if (r == Reading::kNotApplicable && pct < 0) continue;
    ++tally.judged;
    if (r == Reading::kError) {
      ++unknown;
      tally.add(Severity::kWarn, bdf,
                unreadable_line(g, "nvmlDeviceGetCurrentClocksEventReasons",
                                reading_rc(g, h.clock_event_reasons), "clock-event reasons"));
      continue;
    }
    uint64_t bits = r == Reading::kValue ? h.clock_event_reasons.value : 0;
    std::string reasons =
        r == Reading::kValue ? "clock-event reasons " + reasons_text(bits) + "; " : "";
    std::string line = fmt::format("{}: {}{}", gpu_label(g), reasons, power_text(h));
    bool low = pct >= 0 && pct < th.power_limit_info_pct;
    if ((bits & kReasonHwPowerBrake) != 0) {
      ++braked;
      if (!bdf.empty()) braked_gpus.push_back(bdf);
      tally.add(to_severity(th.power_brake), bdf, line + ": the hardware power brake is on");
    } else if (low) {
      ++lowered;
      if (!bdf.empty()) lowered_gpus.push_back(bdf);
      tally.add(Severity::kInfo, bdf,
                line + fmt::format(": the enforced limit is {:.0f} % of the board's maximum{}", pct,
                                   (bits & kReasonSwPowerCap) != 0
                                       ? ", and the GPU is capped at it now (SW power cap)"
                                       : ""));
    } else if ((bits & kReasonSwPowerCap) != 0) {
      ++capped;
      tally.add(Severity::kOk, bdf,
                line + ": at its power limit (SW power cap), normal under load");
    } else {
      tally.add(Severity::kOk, bdf, line);
    }
  }
  if (tally.judged == 0) {
    return not_applicable(kId, "NVML reported no GPU's clock-event reasons or power limit");
  }
  if (tally.worst == Severity::kOk) {
    Finding f = make_finding(
        kId, Severity::kOk,
        capped > 0
            ? fmt::format("no GPU is held back by a power brake; {} of {} at {} power limit under "
                          "load (SW power cap), which is normal",
                          capped, tally.judged, capped == 1 ? "its" : "their")
            : fmt::format("no GPU is power throttled ({} checked)", tally.judged));
    f.evidence = tally.ok_lines;
    return {f};
  }
  std::vector<std::string> parts;
  if (braked > 0) {
    parts.push_back(
        fmt::format("{} GPU{} slowed by the hardware power brake, which the system's "
                    "power delivery asserts (power supply, cabling, chassis power cap)",
                    braked, braked == 1 ? "" : "s"));
  }
  if (lowered > 0) {
    parts.push_back(
        fmt::format("{} GPU{} under a lowered power limit", lowered, lowered == 1 ? "" : "s"));
  }
  if (unknown > 0) {
    parts.push_back(fmt::format("the clock-event reasons of {} GPU{} could not be read", unknown,
                                unknown == 1 ? "" : "s"));
  }
  Finding f = tally_finding(kId, tally, std::move(parts));
  if (braked > 0) {
    f.remedy.push_back(fmt::format(
        "Confirm: nvidia-smi -q -d PERFORMANCE,POWER -i {}   # HW Power Brake Slowdown : Active",
        join(braked_gpus, ",")));
    f.remedy.push_back(
        "The brake comes from outside the GPU: check the power supplies (sudo ipmitool sdr type "
        "'Power Supply': a failed or missing PSU), the GPU's power cables, and any chassis or BMC "
        "power cap.");
  }
  if (lowered > 0) {
    f.remedy.push_back(
        "If the lowered limit is not intended, raise it (nvidia-smi -q -d POWER shows the default "
        "and maximum limits): " +
        per_gpu_command(lowered_gpus, "sudo nvidia-smi -i {} -pl <watts>"));
  }
  if (unknown + tally.unopened > 0) f.remedy.push_back(kUnreadableRemedy);
  return {f};
}

}  // namespace gd
