// clocks.throttled: a GPU's clocks held down by a hardware or thermal event
// (clock-event reasons, facts §4.5). HW thermal slowdown (0x40) means the
// GPU reached its hardware temperature limit; HW slowdown (0x8) alone is a
// fast power excursion or an unnamed hardware cause; both cut clocks by half
// or more. SW thermal slowdown (0x20) is the driver holding the GPU or its
// memory under their max operating temperature: cooling falls short. Idle,
// application clocks, sync boost and display clocks are normal; the power
// reasons (0x4 SW power cap, 0x80 power brake) belong to power.throttled.
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/health_util.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {

namespace {

// "SM 1005 of max 2520 MHz; 91 °C"
std::string clock_text(const NvmlGpu& g) {
  const NvmlHealth& h = g.health;
  std::string out;
  if (h.sm_clock_mhz.ok()) {
    out = g.max_sm_clock_mhz.ok()
              ? fmt::format("SM {} of max {} MHz", h.sm_clock_mhz.value, g.max_sm_clock_mhz.value)
              : fmt::format("SM {} MHz", h.sm_clock_mhz.value);
  }
  if (h.temperature_c.ok()) {
    out += fmt::format("{}{} °C", out.empty() ? "" : "; ", h.temperature_c.value);
  }
  return out;
}

}  // namespace

std::vector<Finding> check_clocks(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "clocks.throttled";
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so clock-event reasons are unknown");
  }
  HealthTally tally;
  int hw_thermal = 0, hw_slowdown = 0, sw_thermal = 0, braked = 0, unknown = 0;
  int slowed = 0;  // GPUs with any slowdown reason
  std::vector<std::string> slowdown_gpus, slowed_gpus;
  for (const NvmlGpu& g : s.nvml.gpus) {
    const NvmlHealth& h = g.health;
    const HealthThresholds& th = thresholds_for(c, gpu_name(g));
    std::string bdf = finding_bdf(g);
    if (note_unopened(g, &tally)) continue;
    Reading r = classify(g, h.clock_event_reasons);
    if (r == Reading::kNotApplicable) continue;
    ++tally.judged;
    if (r == Reading::kError) {
      ++unknown;
      tally.add(Severity::kWarn, bdf,
                unreadable_line(g, "nvmlDeviceGetCurrentClocksEventReasons",
                                reading_rc(g, h.clock_event_reasons), "clock-event reasons"));
      continue;
    }
    uint64_t bits = h.clock_event_reasons.value;
    std::string line = fmt::format("{}: clock-event reasons {}", gpu_label(g), reasons_text(bits));
    std::string clocks = clock_text(g);
    if (!clocks.empty()) line += "; " + clocks;
    Severity sev = Severity::kOk;
    if ((bits & kReasonHwThermal) != 0) {
      ++hw_thermal;
      sev = worse(sev, to_severity(th.hw_thermal));
    } else if ((bits & kReasonHwSlowdown) != 0) {
      if ((bits & kReasonHwPowerBrake) != 0) {
        // The brake is what slows it; power.throttled judges that.
        ++braked;
        sev = worse(sev, Severity::kInfo);
        line += " (slowed by the power brake: see power.throttled)";
      } else {
        ++hw_slowdown;
        if (!bdf.empty()) slowdown_gpus.push_back(bdf);
        sev = worse(sev, to_severity(th.hw_slowdown));
      }
    }
    if ((bits & kReasonSwThermal) != 0) {
      ++sw_thermal;
      sev = worse(sev, to_severity(th.sw_thermal));
    }
    if (sev != Severity::kOk) {
      ++slowed;
      if (!bdf.empty()) slowed_gpus.push_back(bdf);
    }
    tally.add(sev, bdf, line);
  }
  if (tally.judged == 0) return not_applicable(kId, "NVML reported no GPU's clock-event reasons");
  if (tally.worst == Severity::kOk) {
    Finding f = make_finding(kId, Severity::kOk,
                             fmt::format("no hardware or thermal clock slowdown on {} GPU{}",
                                         tally.judged, tally.judged == 1 ? "" : "s"));
    f.evidence = tally.ok_lines;
    return {f};
  }
  std::vector<std::string> parts;
  if (hw_thermal > 0) {
    parts.push_back(
        fmt::format("{} in HW thermal slowdown (at its hardware temperature limit)", hw_thermal));
  }
  if (hw_slowdown > 0) {
    parts.push_back(
        fmt::format("{} in HW slowdown without a thermal or power-brake reason", hw_slowdown));
  }
  if (sw_thermal > 0) {
    parts.push_back(fmt::format("{} in SW thermal slowdown (cooling falls short)", sw_thermal));
  }
  if (braked > 0) parts.push_back(fmt::format("{} slowed by the power brake", braked));
  std::vector<std::string> summary;
  if (slowed > 0) {
    summary.push_back(fmt::format("{} GPU{} with slowed clocks: {}", slowed, slowed == 1 ? "" : "s",
                                  join(parts, ", ")));
  }
  if (unknown > 0) {
    summary.push_back(fmt::format("the clock-event reasons of {} GPU{} could not be read", unknown,
                                  unknown == 1 ? "" : "s"));
  }
  Finding f = tally_finding(kId, tally, std::move(summary));
  if (slowed > 0) {
    f.remedy.push_back(
        fmt::format("See which reasons are active: nvidia-smi -q -d PERFORMANCE,TEMPERATURE -i {}",
                    join(slowed_gpus, ",")));
  }
  if (hw_thermal + sw_thermal > 0) {
    f.remedy.push_back(
        "Thermal slowdown: improve the cooling (fans, airflow, inlet temperature: sudo ipmitool "
        "sdr type Temperature); see thermal.high.");
  }
  if (hw_slowdown > 0) {
    f.remedy.push_back(
        "HW slowdown with no thermal or brake reason is a power excursion or a hardware fault: "
        "check the GPU's power cables and the power supply; if it stays on an idle, cool GPU, "
        "reset it with nothing running (" +
        per_gpu_command(slowdown_gpus, "sudo nvidia-smi -r -i {}") +
        ") or reboot, and contact the vendor if it returns.");
  }
  if (unknown + tally.unopened > 0) f.remedy.push_back(kUnreadableRemedy);
  return {f};
}

}  // namespace gd
