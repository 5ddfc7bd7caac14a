// What run --watch learns while the job runs (watch.h).
#include "job/watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "catalog/sxid.h"
#include "catalog/xid.h"
#include "facts/health.h"
#include "kernlog/decode.h"
#include "probe/child.h"
#include "util/text.h"
#include "util/time.h"

namespace gd {
namespace {

// An Xid after which the GPU is of no more use to the job: the catalog's
// action is a reset, a reboot or a hardware inspection (79 fallen off the
// bus, 48 and 95 uncorrectable ECC, 119 GSP timeout, ...).
bool fatal_xid(const KernelEvent& e, const XidInfo* x) {
  // Xid 154 states the recovery the driver now wants (facts §1.6): 0 none,
  // anything else a reset, a reboot or a drain.
  if (e.code == 154) return xid154_recovery_action(e.message) > 0;
  return x != nullptr && (x->action == XidAction::kResetGpu || x->action == XidAction::kReboot ||
                          x->action == XidAction::kDrainInspect);
}

std::string seconds_text(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

template <class T>
std::optional<long long> delta(const std::optional<T>& first, const std::optional<T>& last) {
  if (!first || !last) return std::nullopt;
  return static_cast<long long>(*last) - static_cast<long long>(*first);
}

std::string delta_text(const std::optional<long long>& d) {
  return d ? fmt::format("{:+d}", *d) : std::string("n/a");
}

// Lines of the summary that list things one by one; the JSON has them all.
constexpr size_t kMaxFailureLines = 5;
constexpr size_t kMaxProcessLines = 10;

std::string event_label(const KernelEvent& e) {
  if (e.kind == "xid") return fmt::format("Xid {}", e.code);
  if (e.kind == "sxid") return fmt::format("SXid {}", e.code);
  if (e.kind == "aer") return "AER " + e.type;
  return e.kind + (e.type.empty() ? "" : " " + e.type);
}

// What became of the job's other processes (JobEnd::others).
void append_other_processes(const JobEnd& end, std::vector<std::string>* out) {
  if (!end.others_error.empty()) {
    out->push_back("  the job's other processes could not be listed (" + end.others_error +
                   "): only its process group was signalled");
  }
  if (end.others.empty()) return;
  size_t n = end.others.size();
  const char* es = n == 1 ? "" : "es";
  out->push_back(
      end.stopped_by_us
          ? fmt::format("  --stop-on-fatal: SIGTERM to {} other process{} of the job, SIGKILL {} "
                        "s later to those still running:",
                        n, es, kJobKillGraceS)
          : fmt::format("  {} process{} of the job outlived {}: SIGTERM to each, SIGKILL {} s "
                        "later to those still running:",
                        n, es, end.command, kJobKillGraceS));
  size_t alive = 0;
  for (size_t i = 0; i < n; ++i) {
    const JobOtherProcess& p = end.others[i];
    if (p.alive) ++alive;
    if (i >= kMaxProcessLines) continue;
    std::string fate = p.alive     ? "still running after SIGKILL (stuck in the kernel?)"
                       : p.sigkill ? "killed by SIGKILL"
                                   : "ended after SIGTERM";
    out->push_back(fmt::format("    pid {} ({}){}: {}", p.pid, p.name,
                               p.outlived && end.stopped_by_us ? ", outlived " + end.command : "",
                               fate));
  }
  if (n > kMaxProcessLines) {
    out->push_back(fmt::format("    and {} more (--json-report lists them)", n - kMaxProcessLines));
  }
  out->push_back(alive == 0 ? std::string("  no process of the job is left")
                            : fmt::format("  {} process{} of the job still running", alive,
                                          alive == 1 ? "" : "es"));
}

}  // namespace

WatchGpu& JobWatch::gpu_for(const NvmlGpu& g) {
  std::string bus = g.pci_bus_id.ok() ? g.pci_bus_id.value : "";
  for (WatchGpu& w : gpus_) {
    if ((!bus.empty() && w.bus_id == bus) || (bus.empty() && w.index == static_cast<int>(g.index)))
      return w;
  }
  WatchGpu& w = gpus_.emplace_back();
  w.bus_id = bus;
  w.index = static_cast<int>(g.index);
  if (g.name.ok()) w.name = g.name.value;
  return w;
}

void JobWatch::on_sample(const NvmlInfo& sample, bool ok, int64_t now_ms,
                         const SampleFailure& failure) {
  ++samples_;
  if (!ok) {
    ++failed_samples_;
    on_failure(failure, now_ms);
    return;
  }
  double interval_s = last_good_ms_ == 0 ? 0 : static_cast<double>(now_ms - last_good_ms_) / 1000;
  last_good_ms_ = now_ms;
  for (const NvmlGpu& g : sample.gpus) {
    WatchGpu& w = gpu_for(g);
    if (nvml_gpu_down(g)) {
      if (!w.lost) {
        w.lost = true;
        w.lost_at_ms = now_ms;
        std::string bus = w.bus_id.empty() ? fmt::format("NVML GPU {}", w.index) : w.bus_id;
        set_fatal(now_ms, w.bus_id,
                  fmt::format("GPU {} lost: NVML no longer answers for it (GPU_IS_LOST)", bus),
                  {"Drain the node; the GPU needs a reset or, after Xid 79, a reboot (often a "
                   "power cycle).",
                   "gpudoctor check names the cause; gpudoctor logs shows the kernel's side."});
      }
      continue;
    }
    const NvmlHealth& h = g.health;
    if (h.temperature_c.ok())
      w.peak_temperature_c = std::max(w.peak_temperature_c, h.temperature_c.value);
    if (h.power_usage_mw.ok()) {
      double watts = h.power_usage_mw.value / 1000.0;
      w.peak_power_w = std::max(w.peak_power_w, watts);
      w.power_sum_w += watts;
      ++w.power_samples;
    }
    if (h.clock_event_reasons.ok()) {
      uint64_t slowing = h.clock_event_reasons.value & kSlowingReasons;
      if (slowing != 0) w.throttled_any_s += interval_s;
      for (const std::string& name : reason_names(slowing)) w.throttled_s[name] += interval_s;
    }
    auto track = [](const auto& v, auto* first, auto* last) {
      if (!v.ok()) return;
      if (!*first) *first = v.value;
      *last = v.value;
    };
    track(h.ecc_corrected_volatile, &w.ecc_corrected_first, &w.ecc_corrected_last);
    track(h.ecc_uncorrected_volatile, &w.ecc_uncorrected_first, &w.ecc_uncorrected_last);
    track(h.remapped_rows_correctable, &w.rows_correctable_first, &w.rows_correctable_last);
    track(h.remapped_rows_uncorrectable, &w.rows_uncorrectable_first, &w.rows_uncorrectable_last);
  }
}

void JobWatch::on_failure(const SampleFailure& f, int64_t now_ms) {
  WatchFailure k;
  // The sampler's call line: "nvmlDeviceGetTemperature (GPU 3)", or the
  // bare function for a call that is not per GPU (nvmlInit_v2).
  k.call = f.call;
  if (size_t at = f.call.find(" (GPU "); at != std::string::npos) {
    k.call = f.call.substr(0, at);
    const char* digits = f.call.data() + at + 6;
    int index = -1;
    if (std::from_chars(digits, f.call.data() + f.call.size(), index).ec == std::errc{}) {
      k.gpu_index = index;
    }
  }
  if (f.hung) {
    k.kind = "hung";
  } else if (f.error.starts_with("crashed: ")) {
    k.kind = "crashed";
    k.detail = f.error.substr(9, f.error.find(' ', 9) - 9);  // the signal
  } else {
    k.kind = "failed";
    k.detail = f.error.empty() ? "no reason given" : f.error;
  }
  for (WatchFailure& w : failures_) {
    if (w.kind == k.kind && w.call == k.call && w.gpu_index == k.gpu_index &&
        w.detail == k.detail) {
      ++w.samples;
      w.last_ms = now_ms;
      return;
    }
  }
  k.samples = 1;
  k.first_ms = k.last_ms = now_ms;
  failures_.push_back(std::move(k));
}

std::vector<WatchFailure> JobWatch::failures() const {
  std::vector<WatchFailure> out = failures_;
  std::stable_sort(out.begin(), out.end(), [](const WatchFailure& a, const WatchFailure& b) {
    return a.samples > b.samples;
  });
  return out;
}

std::string JobWatch::gpu_name_for_index(int index) const {
  for (const WatchGpu& g : gpus_) {
    if (g.index == index && !g.bus_id.empty()) return g.bus_id;
  }
  return fmt::format("NVML GPU {}", index);
}

std::string watch_failure_text(const JobWatch& w, const WatchFailure& f) {
  std::string where = f.call;
  if (f.gpu_index >= 0) where += " on " + w.gpu_name_for_index(f.gpu_index);
  if (f.kind == "hung") {
    return where.empty() ? std::string("the NVML sampler hung before its first NVML call")
                         : "NVML hung in " + where;
  }
  if (f.kind == "crashed") {
    return fmt::format("NVML crashed ({}){}", f.detail, where.empty() ? "" : " in " + where);
  }
  return "NVML sample failed: " + f.detail;
}

void JobWatch::on_event(const KernelEvent& e, int64_t now_ms) {
  WatchEvent w;
  w.event = e;
  w.at_ms = now_ms;
  if (e.kind == "xid") {
    const XidInfo* x = find_xid(e.code);
    if (x != nullptr) {
      w.meaning = x->meaning;
      w.action = x->advice;
    }
    w.fatal = fatal_xid(e, x);
  } else if (e.kind == "sxid") {
    const SxidInfo* x = find_sxid(e.code);
    if (x != nullptr) {
      w.meaning = x->meaning;
      w.action = x->advice;
      w.fatal = x->guide == SxidClass::kFatal || x->guide == SxidClass::kAlwaysFatal;
    }
  } else if (e.kind == "aer") {
    w.meaning = "PCIe " + e.type + " error";
    w.fatal = e.type == "uncorrected-fatal";
  } else if (e.kind == "nvrm" && e.type == "fallen-off-bus") {
    w.meaning = "GPU has fallen off the bus";
    w.fatal = true;
  } else {
    return;  // the rest (module loads, UVM notes) says nothing about the job
  }
  if (w.fatal) {
    std::string on = e.gpu.empty() ? "" : " on " + e.gpu;
    std::vector<std::string> remedy;
    if (!w.action.empty()) remedy.push_back(w.action);
    remedy.push_back("gpudoctor check names the cause; gpudoctor logs decodes the kernel log.");
    set_fatal(now_ms, e.gpu, event_label(e) + on + (w.meaning.empty() ? "" : ": " + w.meaning),
              std::move(remedy));
  }
  events_.push_back(std::move(w));
}

void JobWatch::set_fatal(int64_t at_ms, const std::string& gpu, const std::string& what,
                         std::vector<std::string> remedy) {
  if (fatal_) return;  // the first one is the diagnosis; later ones follow from it
  fatal_ = WatchFatal{at_ms, gpu, what, std::move(remedy)};
}

std::optional<WatchFatal> JobWatch::take_new_fatal() {
  if (!fatal_ || fatal_taken_) return std::nullopt;
  fatal_taken_ = true;
  return fatal_;
}

std::vector<std::string> watch_fatal_lines(const WatchFatal& f, const std::string& command,
                                           bool stopping) {
  std::vector<std::string> out;
  out.push_back(fmt::format("FATAL at {}: {}", utc_datetime_text(f.at_ms / 1000), f.what));
  for (const std::string& r : f.remedy) out.push_back("  " + r);
  out.push_back(stopping
                    ? fmt::format("stopping {} (--stop-on-fatal): SIGTERM to its process "
                                  "group and every process it started, SIGKILL {} s later",
                                  command, kJobKillGraceS)
                    : fmt::format("{} keeps running (--stop-on-fatal would stop it)", command));
  return out;
}

std::vector<std::string> watch_summary_lines(const JobWatch& w, const JobEnd& end) {
  std::vector<std::string> out;
  double took_s = static_cast<double>(end.ended_ms - w.started_ms()) / 1000;
  std::string how = end.exited ? fmt::format("exited with {}", end.exit_code)
                               : fmt::format("was killed by {}{}", signal_name(end.signal),
                                             end.stopped_by_us ? " (--stop-on-fatal)" : "");
  out.push_back(fmt::format(
      "job summary: {} {} after {}; {} GPU{} watched, {} NVML sample{}{}", end.command, how,
      seconds_text(took_s), w.gpus().size(), w.gpus().size() == 1 ? "" : "s", w.samples(),
      w.samples() == 1 ? "" : "s",
      w.failed_samples() > 0 ? fmt::format(" ({} failed)", w.failed_samples()) : std::string()));
  for (const WatchGpu& g : w.gpus()) {
    std::string line = "  GPU " + (g.bus_id.empty() ? fmt::format("#{}", g.index) : g.bus_id);
    if (g.lost) {
      line += fmt::format(": LOST at {}", utc_datetime_text(g.lost_at_ms / 1000));
    }
    line += g.peak_temperature_c >= 0 ? fmt::format(": peak {} °C", g.peak_temperature_c)
                                      : std::string(": temperature n/a");
    if (g.power_samples > 0) {
      line += fmt::format(", power peak {:.0f} W mean {:.0f} W", g.peak_power_w,
                          g.power_sum_w / static_cast<double>(g.power_samples));
    }
    if (g.throttled_any_s > 0) {
      std::vector<std::string> why;
      for (const auto& [name, s] : g.throttled_s) why.push_back(name + " " + seconds_text(s));
      line += fmt::format(", throttled {} ({})", seconds_text(g.throttled_any_s), join(why, ", "));
    } else {
      line += ", never throttled";
    }
    auto ecc_c = delta(g.ecc_corrected_first, g.ecc_corrected_last);
    auto ecc_u = delta(g.ecc_uncorrected_first, g.ecc_uncorrected_last);
    line += ecc_c && ecc_u ? fmt::format(", ECC {} corrected {} uncorrected", delta_text(ecc_c),
                                         delta_text(ecc_u))
                           : std::string(", ECC n/a");
    auto rows_c = delta(g.rows_correctable_first, g.rows_correctable_last);
    auto rows_u = delta(g.rows_uncorrectable_first, g.rows_uncorrectable_last);
    if (rows_c && rows_u) {
      line += fmt::format(", remapped rows {} correctable {} uncorrectable", delta_text(rows_c),
                          delta_text(rows_u));
    }
    out.push_back(line);
  }
  std::vector<WatchFailure> failures = w.failures();
  for (size_t i = 0; i < failures.size() && i < kMaxFailureLines; ++i) {
    const WatchFailure& f = failures[i];
    out.push_back(fmt::format("  {} ({} sample{})", watch_failure_text(w, f), f.samples,
                              f.samples == 1 ? "" : "s"));
  }
  if (failures.size() > kMaxFailureLines) {
    out.push_back(fmt::format("  and {} more kinds of failed sample (--json-report lists them)",
                              failures.size() - kMaxFailureLines));
  }
  if (w.events().empty()) {
    out.push_back("  kernel log: no Xid, SXid or AER event during the job");
  }
  for (const WatchEvent& e : w.events()) {
    out.push_back(fmt::format("  {}{} {}{}{}", e.fatal ? "FATAL " : "", event_label(e.event),
                              e.event.gpu.empty() ? "" : "on " + e.event.gpu,
                              e.meaning.empty() ? "" : ": " + e.meaning,
                              e.event.count > 1 ? fmt::format(" (x{})", e.event.count) : ""));
  }
  bool lost =
      std::any_of(w.gpus().begin(), w.gpus().end(), [](const WatchGpu& g) { return g.lost; });
  out.push_back(lost ? "  a GPU was lost during the job" : "  no GPU was lost");
  if (w.fatal()) out.push_back("  diagnosis: " + w.fatal()->what);
  append_other_processes(end, &out);
  return out;
}

std::string watch_json(const JobWatch& w, const JobEnd* end, const std::string& command) {
  using nlohmann::json;
  auto opt = [](const auto& d) { return d ? json(*d) : json(nullptr); };
  json gpus = json::array();
  for (const WatchGpu& g : w.gpus()) {
    json throttled = json::object();
    for (const auto& [name, s] : g.throttled_s) throttled[name] = s;
    gpus.push_back(
        {{"bus_id", g.bus_id},
         {"index", g.index},
         {"name", g.name},
         {"peak_temperature_c",
          g.peak_temperature_c < 0 ? json(nullptr) : json(g.peak_temperature_c)},
         {"peak_power_w", g.power_samples ? json(g.peak_power_w) : json(nullptr)},
         {"mean_power_w", g.power_samples
                              ? json(g.power_sum_w / static_cast<double>(g.power_samples))
                              : json(nullptr)},
         {"throttled_s", g.throttled_any_s},
         {"throttled_by_reason_s", throttled},
         {"ecc_corrected_delta", opt(delta(g.ecc_corrected_first, g.ecc_corrected_last))},
         {"ecc_uncorrected_delta", opt(delta(g.ecc_uncorrected_first, g.ecc_uncorrected_last))},
         {"remapped_rows_correctable_delta",
          opt(delta(g.rows_correctable_first, g.rows_correctable_last))},
         {"remapped_rows_uncorrectable_delta",
          opt(delta(g.rows_uncorrectable_first, g.rows_uncorrectable_last))},
         {"lost", g.lost},
         {"lost_at", g.lost ? json(utc_datetime_text(g.lost_at_ms / 1000)) : json(nullptr)}});
  }
  json events = json::array();
  for (const WatchEvent& e : w.events()) {
    events.push_back({{"kind", e.event.kind},
                      {"code", e.event.code},
                      {"type", e.event.type},
                      {"gpu", e.event.gpu},
                      {"count", e.event.count},
                      {"meaning", e.meaning},
                      {"action", e.action},
                      {"fatal", e.fatal},
                      {"seen_at", utc_datetime_text(e.at_ms / 1000)},
                      {"line", e.event.line}});
  }
  json fatal = nullptr;
  if (w.fatal()) {
    fatal = {{"at", utc_datetime_text(w.fatal()->at_ms / 1000)},
             {"gpu", w.fatal()->gpu},
             {"what", w.fatal()->what},
             {"remedy", w.fatal()->remedy}};
  }
  json failures = json::array();
  for (const WatchFailure& f : w.failures()) {
    failures.push_back(
        {{"what", watch_failure_text(w, f)},
         {"kind", f.kind},
         {"call", f.call},
         {"gpu", f.gpu_index >= 0 ? json(w.gpu_name_for_index(f.gpu_index)) : json(nullptr)},
         {"samples", f.samples},
         {"first_at", utc_datetime_text(f.first_ms / 1000)},
         {"last_at", utc_datetime_text(f.last_ms / 1000)}});
  }
  json ended = nullptr;
  if (end != nullptr) {
    json others = json::array();
    for (const JobOtherProcess& p : end->others) {
      others.push_back({{"pid", p.pid},
                        {"name", p.name},
                        {"outlived_main", p.outlived},
                        {"sigkill", p.sigkill},
                        {"still_running", p.alive}});
    }
    ended = {{"at", utc_datetime_text(end->ended_ms / 1000)},
             {"duration_s", static_cast<double>(end->ended_ms - w.started_ms()) / 1000},
             {"exit_code", end->exited ? json(end->exit_code) : json(nullptr)},
             {"signal", end->exited ? json(nullptr) : json(signal_name(end->signal))},
             {"stopped_on_fatal", end->stopped_by_us},
             {"other_processes", others},
             {"other_processes_error",
              end->others_error.empty() ? json(nullptr) : json(end->others_error)}};
  }
  json doc = {{"schema", "gpudoctor.watch/v1"},
              {"command", command},
              {"started", utc_datetime_text(w.started_ms() / 1000)},
              {"ended", ended},
              {"samples", w.samples()},
              {"failed_samples", w.failed_samples()},
              {"sample_failures", failures},
              {"gpus", gpus},
              {"gpu_lost", std::any_of(w.gpus().begin(), w.gpus().end(),
                                       [](const WatchGpu& g) { return g.lost; })},
              {"events", events},
              {"fatal", fatal}};
  return doc.dump(2) + "\n";
}

}  // namespace gd
