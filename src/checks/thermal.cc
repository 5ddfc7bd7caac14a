// thermal.high: a GPU (or its memory) runs at or near the temperature where
// its hardware starts to slow down. Levels are relative to each GPU's own
// thresholds (NVML SLOWDOWN and MEM_MAX, facts §4.3), so one default fits a
// GeForce card (slowdown ~90 °C) and an H100 (~87-89 °C) alike; the config
// file may replace them with absolute temperatures (docs/config.md).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/health_util.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {

namespace {

// A threshold NVML reported, if it is a plausible temperature.
std::optional<int> threshold_c(const NvmlValue<uint32_t>& v) {
  if (!v.ok() || v.value == 0 || v.value > 200) return std::nullopt;
  return static_cast<int>(v.value);
}

struct Levels {
  int warn_c;
  int fail_c;
};

// Fail at the reference (the GPU's threshold, or the fallback), warn margin
// below it; a configured absolute level replaces either.
Levels levels(int reference_c, int margin_c, int warn_c, int fail_c) {
  return {warn_c > 0 ? warn_c : reference_c - margin_c, fail_c > 0 ? fail_c : reference_c};
}

Severity judge(int t, const Levels& l) {
  if (t >= l.fail_c) return Severity::kFail;
  if (t >= l.warn_c) return Severity::kWarn;
  return Severity::kOk;
}

// The requirements judge() tested, stated: below the warning temperature
// and, for a GPU that is not, below the fail temperature too.
void state_levels(std::vector<Comparison>* out, const std::string& what, int t, const Levels& l) {
  out->push_back(compare_numbers(what + " (°C) vs the warning temperature", t, "<", l.warn_c));
  if (t >= l.warn_c) {
    out->push_back(compare_numbers(what + " (°C) vs the fail temperature", t, "<", l.fail_c));
  }
}

}  // namespace

std::vector<Finding> check_thermal(const Snapshot& s, const Config& c) {
  constexpr const char* kId = "thermal.high";
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so GPU temperatures are unknown");
  }
  HealthTally tally;
  int fail = 0, warn = 0, unknown = 0;
  int hottest = -1000;
  std::string hottest_gpu;
  std::vector<Comparison> ok_cmps, bad_cmps;
  std::vector<std::string> unread;  // GPUs whose temperature NVML did not give
  for (const NvmlGpu& g : s.nvml.gpus) {
    const NvmlHealth& h = g.health;
    const HealthThresholds& th = thresholds_for(c, gpu_name(g));
    std::string bdf = finding_bdf(g);
    if (note_unopened(g, &tally)) continue;
    Reading r = classify(g, h.temperature_c);
    if (r == Reading::kNotApplicable) continue;
    ++tally.judged;
    if (r == Reading::kError) {
      ++unknown;
      unread.push_back(gpu_bdf(g));
      tally.add(Severity::kWarn, bdf,
                unreadable_line(g, "nvmlDeviceGetTemperature", reading_rc(g, h.temperature_c),
                                "temperature"));
      continue;
    }
    int t = h.temperature_c.value;
    std::optional<int> slowdown = threshold_c(h.temp_slowdown_c);
    std::optional<int> shutdown = threshold_c(h.temp_shutdown_c);
    Levels l = levels(slowdown.value_or(kFallbackSlowdownC), th.gpu_margin_c, th.gpu_warn_c,
                      th.gpu_fail_c);
    Severity sev = judge(t, l);
    std::vector<Comparison> cmps;
    state_levels(&cmps, gpu_bdf(g) + " GPU temperature", t, l);
    std::string line = fmt::format("{}: {} °C; ", gpu_label(g), t);
    line += slowdown
                ? fmt::format("slowdown at {} °C", *slowdown)
                : fmt::format("no slowdown threshold reported ({} °C assumed)", kFallbackSlowdownC);
    if (shutdown) line += fmt::format(", shutdown at {} °C", *shutdown);
    line += fmt::format("; warn at {} °C, fail at {} °C", l.warn_c, l.fail_c);
    if (h.fan_speed_pct.ok()) line += fmt::format("; fan {} %", h.fan_speed_pct.value);
    if (t > hottest) {
      hottest = t;
      hottest_gpu = gpu_bdf(g);
    }

    // Memory (HBM) temperature: NOT_SUPPORTED on GeForce cards; an error
    // there says nothing the GPU temperature has not said already.
    Severity mem_sev = Severity::kOk;
    std::string mem_line;
    if (h.memory_temperature_c.ok()) {
      int mt = h.memory_temperature_c.value;
      std::optional<int> mem_max = threshold_c(h.temp_mem_max_c);
      Levels ml = levels(mem_max.value_or(kFallbackMemMaxC), th.memory_margin_c, th.memory_warn_c,
                         th.memory_fail_c);
      mem_sev = judge(mt, ml);
      state_levels(&cmps, gpu_bdf(g) + " memory temperature", mt, ml);
      mem_line = fmt::format("{}: memory {} °C; ", gpu_label(g), mt);
      mem_line += mem_max ? fmt::format("memory max {} °C", *mem_max)
                          : fmt::format("no memory max reported ({} °C assumed)", kFallbackMemMaxC);
      mem_line += fmt::format("; warn at {} °C, fail at {} °C", ml.warn_c, ml.fail_c);
    }
    Severity worst = worse(sev, mem_sev);
    auto& into = worst == Severity::kOk ? ok_cmps : bad_cmps;
    into.insert(into.end(), cmps.begin(), cmps.end());
    if (worst == Severity::kFail) ++fail;
    if (worst == Severity::kWarn) ++warn;
    tally.add(worst, bdf, line);
    if (!mem_line.empty()) {
      if (worst == Severity::kOk) {
        tally.ok_lines.push_back(mem_line);
      } else {
        tally.add(worst, bdf, mem_line);
      }
    }
  }
  if (tally.judged == 0) return not_applicable(kId, "NVML reported no GPU's temperature");

  if (tally.worst == Severity::kOk) {
    Finding f =
        make_finding(kId, Severity::kOk,
                     fmt::format("{} GPU{} below {} warning temperature (hottest {} °C, {})",
                                 tally.judged, tally.judged == 1 ? "" : "s",
                                 tally.judged == 1 ? "its" : "their", hottest, hottest_gpu));
    f.evidence = tally.ok_lines;
    for (auto& x : ok_cmps) add_comparison(&f, std::move(x));
    return {f};
  }
  std::vector<std::string> parts;
  if (fail + warn > 0) {
    std::string hot = fmt::format("{} GPU{} too hot: ", fail + warn, fail + warn == 1 ? "" : "s");
    if (fail > 0) hot += fmt::format("{} at or above the fail temperature", fail);
    if (fail > 0 && warn > 0) hot += ", ";
    if (warn > 0) hot += fmt::format("{} at or above the warning temperature", warn);
    parts.push_back(hot);
  }
  if (unknown > 0) {
    parts.push_back(fmt::format("the temperature of {} GPU{} could not be read", unknown,
                                unknown == 1 ? "" : "s"));
  }
  Finding f = tally_finding(kId, tally, std::move(parts));
  for (auto& x : bad_cmps) add_comparison(&f, std::move(x));
  for (const auto& bdf : unread) {
    add_not_compared(&f, bdf + " GPU temperature vs the warning temperature",
                     "the temperature (nvmlDeviceGetTemperature failed)");
  }
  std::string ids = join(tally.gpus, ",");
  if (fail + warn > 0) {
    f.remedy = {
        fmt::format("Watch temperatures, fans and clock-event reasons: nvidia-smi -q -d "
                    "TEMPERATURE,PERFORMANCE -i {}",
                    ids),
        "Check the cooling: fans spinning, intake unblocked, no hot exhaust drawn back in; "
        "cards in adjacent slots heat each other. In a server: the chassis fan profile and inlet "
        "temperature (sudo ipmitool sdr type Temperature).",
        "Until it is fixed, a lower power limit cuts the heat at some speed: " +
            per_gpu_command(tally.gpus, "sudo nvidia-smi -i {} -pl <watts>"),
        "Thresholds: --config FILE, [thermal] (docs/config.md).",
    };
  }
  if (unknown + tally.unopened > 0) f.remedy.push_back(kUnreadableRemedy);
  return {f};
}

}  // namespace gd
