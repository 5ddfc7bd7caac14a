#include "serve/daemon_state.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "diag/json.h"
#include "report/render.h"
#include "util/time.h"

namespace gd {

bool sample_is_stale(const SampleState& s, int64_t now_ms, double interval_s) {
  if (!s.have_sample || !s.last_error.empty()) return true;
  return static_cast<double>(now_ms - s.taken_unix_ms) > 2 * interval_s * 1000;
}

std::map<std::pair<std::string, int>, uint64_t> count_xids(const KernelLogInfo& log) {
  std::map<std::pair<std::string, int>, uint64_t> out;
  for (const auto& e : log.events) {
    if (e.kind == "xid") out[{e.gpu, e.code}] += static_cast<uint64_t>(std::max(1, e.count));
  }
  return out;
}

DiagState diag_state_from_stored(const StoredDiagRun& r) {
  DiagState d;
  d.id = r.id;
  d.time_unix_ms = r.time_ms;
  d.level = r.level;
  d.verdict = severity_from_name(r.verdict);
  for (const StoredDiagFinding& s : r.findings) {
    Finding f;
    f.id = s.id;
    f.severity = severity_from_name(s.severity);
    f.gpus = s.gpus;
    f.summary = s.summary;
    f.evidence = s.evidence;
    f.remedy = s.remedy;
    f.check = "diag";
    d.findings.push_back(std::move(f));
  }
  auto j = nlohmann::json::parse(r.diag_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    d.parse_error = "the stored diag JSON is not an object";
    return d;
  }
  try {
    auto run = diag_run_from_json(j.at("run"));
    if (!run.ok()) {
      d.parse_error = run.error();
      return d;
    }
    d.run = std::move(*run);
    if (auto f = j.find("figures"); f != j.end()) {
      auto figures = diag_figures_from_json(*f);
      if (!figures.ok()) {
        d.parse_error = figures.error();
      } else {
        d.figures = std::move(*figures);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    d.parse_error = std::string("the stored diag JSON: ") + e.what();
  }
  return d;
}

std::string report_json_with_diag(const std::string& report_json, const DiagState& d) {
  using Json = nlohmann::ordered_json;
  Json j = Json::parse(report_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return report_json;
  Json diag;
  diag["time"] = iso_time_ms(d.time_unix_ms);
  diag["level"] = d.level;
  diag["verdict"] = severity_name(d.verdict);
  diag["findings"] = Json::array();
  // Findings as the report writes them: d.findings carry check "diag".
  for (const Finding& f : d.findings) diag["findings"].push_back(finding_to_json(f));
  j["last_diag"] = std::move(diag);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

DaemonState::DaemonState(std::string hostname, int64_t started_unix_ms, double interval_s,
                         double check_interval_s, double diag_max_age_s, FlapOptions flap)
    : hostname_(std::move(hostname)),
      started_ms_(started_unix_ms),
      interval_s_(interval_s),
      check_interval_s_(check_interval_s),
      diag_max_age_s_(diag_max_age_s),
      sample_(std::make_shared<SampleState>()),
      gate_(flap) {}

void DaemonState::record_sample(const SampleResult& r, int64_t now_unix_ms,
                                const SamplerCounters& c) {
  // Built outside the lock: copying an 8-GPU NvmlInfo is the costly part.
  std::shared_ptr<const SampleState> prev;
  {
    std::lock_guard<std::mutex> lock(mu_);
    prev = sample_;
  }
  auto next = std::make_shared<SampleState>();
  if (r.ok) {
    next->have_sample = true;
    next->nvml = r.nvml;
    next->taken_unix_ms = now_unix_ms;
    next->duration_ms = r.duration_ms;
    next->stale = false;
  } else {
    *next = *prev;  // the last good sample, if any, is served on
    next->stale = true;
    next->last_error = r.error.empty() ? "sample failed" : r.error;
  }
  next->attempts = c.attempts;
  next->failures = c.failures;
  next->restarts = c.restarts;
  std::lock_guard<std::mutex> lock(mu_);
  if (r.ok) gate_.on_sample(r.nvml, c.restarts, now_unix_ms);
  sample_ = std::move(next);
}

void DaemonState::record_check(std::shared_ptr<const CheckState> check, std::string report_json) {
  std::shared_ptr<const DiagState> diag;
  {
    std::lock_guard<std::mutex> lock(mu_);
    diag = diag_;
  }
  // Only the check thread records checks and diag runs: diag_ cannot
  // change between here and the swap below.
  std::shared_ptr<const std::string> with_diag;
  if (diag)
    with_diag = std::make_shared<const std::string>(report_json_with_diag(report_json, *diag));
  auto json = std::make_shared<const std::string>(std::move(report_json));
  std::map<std::pair<std::string, int>, uint64_t> seed;
  bool have_log = check && check->snapshot;
  if (have_log) seed = count_xids(check->snapshot->kernel_log);
  std::lock_guard<std::mutex> lock(mu_);
  report_json_diag_ = std::move(with_diag);
  if (!seeded_ && have_log) {
    for (const auto& [key, n] : seed) xid_counts_[key] += n;
    seeded_ = true;
  }
  if (have_log) kernel_log_source_ = check->snapshot->kernel_log.source;
  if (check && check->snapshot) {
    reprobes_due_ = gate_.on_check(check->report, *check->snapshot, check->finished_unix_ms);
  }
  check_ = std::move(check);
  report_json_ = std::move(json);
}

void DaemonState::record_kernel_event(const KernelEvent& e) {
  if (e.kind != "xid") return;
  // A log of forged PCI addresses must not grow the counters (and /metrics)
  // without end: a series beyond this many is not started.
  constexpr size_t kMaxXidSeries = 4096;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = xid_counts_.find({e.gpu, e.code});
  if (it == xid_counts_.end()) {
    if (xid_counts_.size() >= kMaxXidSeries) return;
    it = xid_counts_.emplace(std::pair{e.gpu, e.code}, 0).first;
  }
  it->second += static_cast<uint64_t>(std::max(1, e.count));
}

void DaemonState::set_kernel_log_source(std::string source) {
  std::lock_guard<std::mutex> lock(mu_);
  kernel_log_source_ = std::move(source);
}

void DaemonState::record_diag(std::shared_ptr<const DiagState> diag) {
  std::shared_ptr<const std::string> json;
  {
    std::lock_guard<std::mutex> lock(mu_);
    json = report_json_;
  }
  std::shared_ptr<const std::string> with_diag;
  if (diag && json) {
    with_diag = std::make_shared<const std::string>(report_json_with_diag(*json, *diag));
  }
  std::lock_guard<std::mutex> lock(mu_);
  diag_ = std::move(diag);
  report_json_diag_ = std::move(with_diag);
}

int64_t DaemonState::diag_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return diag_ ? diag_->id : 0;
}

void DaemonState::set_history_ok(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  history_ok_ = ok;
}

uint64_t DaemonState::sampler_restarts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sample_ ? sample_->restarts : 0;
}

std::vector<std::string> DaemonState::reprobes_due() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reprobes_due_;
}

bool DaemonState::record_reprobe(const ReprobeResult& r, uint64_t sampler_generation,
                                 int64_t now_unix_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  return gate_.on_reprobe(r, sampler_generation, now_unix_ms);
}

std::string DaemonState::flapping_cause(const std::string& bus_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const GpuHealth& g : gate_.gpus()) {
    if (g.bus_id == bus_id && g.flapping) return g.cause;
  }
  return "";
}

ExporterView DaemonState::view(int64_t now_unix_ms) const {
  ExporterView v;
  std::shared_ptr<const SampleState> sample;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sample = sample_;
    v.check = check_;
    v.xid_counts = xid_counts_;
    v.kernel_log_source = kernel_log_source_;
    v.history_ok = history_ok_;
    v.diag = diag_;
    v.gpu_health = gate_.gpus();
  }
  v.diag_max_age_s = diag_max_age_s_;
  v.hostname = hostname_;
  v.version = GD_VERSION;
  v.now_unix_ms = now_unix_ms;
  v.started_unix_ms = started_ms_;
  v.interval_s = interval_s_;
  v.check_interval_s = check_interval_s_;
  v.sample = *sample;
  v.sample.stale = sample_is_stale(v.sample, now_unix_ms, interval_s_);
  return v;
}

std::shared_ptr<const std::string> DaemonState::report_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_json_;
}

std::shared_ptr<const std::string> DaemonState::served_report_json(int64_t now_unix_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (diag_ && report_json_diag_ && diag_is_current(*diag_, now_unix_ms, diag_max_age_s_)) {
    return report_json_diag_;
  }
  return report_json_;
}

bool DaemonState::xids_seeded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seeded_;
}

void DaemonState::beat_sampler(int64_t now_unix_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  sampler_beat_ms_ = now_unix_ms;
}

void DaemonState::beat_check(int64_t now_unix_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  check_beat_ms_ = now_unix_ms;
}

std::string DaemonState::unhealthy_reason(int64_t now_unix_ms, int64_t max_sampler_silence_ms,
                                          int64_t max_check_silence_ms) const {
  std::shared_ptr<const SampleState> sample;
  int64_t sampler_beat = 0, check_beat = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sample = sample_;
    sampler_beat = sampler_beat_ms_ != 0 ? sampler_beat_ms_ : started_ms_;
    check_beat = check_beat_ms_ != 0 ? check_beat_ms_ : started_ms_;
  }
  auto secs = [](int64_t ms) { return std::to_string(ms / 1000) + " s"; };
  if (now_unix_ms - sampler_beat > max_sampler_silence_ms) {
    return "the sampler loop has not finished a round for " + secs(now_unix_ms - sampler_beat);
  }
  if (now_unix_ms - check_beat > max_check_silence_ms) {
    return "the check loop has not finished a round for " + secs(now_unix_ms - check_beat);
  }
  if (!sample->have_sample) {
    return "no NVML sample yet" + (sample->last_error.empty() ? "" : ": " + sample->last_error);
  }
  if (!sample->last_error.empty()) return "the last NVML sample is stale: " + sample->last_error;
  if (sample_is_stale(*sample, now_unix_ms, interval_s_)) {
    return "the last NVML sample is stale: taken " + secs(now_unix_ms - sample->taken_unix_ms) +
           " ago";
  }
  return "";
}

}  // namespace gd
