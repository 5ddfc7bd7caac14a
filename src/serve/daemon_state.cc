#include "serve/daemon_state.h"

#include <algorithm>
#include <cstdio>

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

DaemonState::DaemonState(std::string hostname, int64_t started_unix_ms, double interval_s,
                         double check_interval_s)
    : hostname_(std::move(hostname)),
      started_ms_(started_unix_ms),
      interval_s_(interval_s),
      check_interval_s_(check_interval_s),
      sample_(std::make_shared<SampleState>()) {}

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
  sample_ = std::move(next);
}

void DaemonState::record_check(std::shared_ptr<const CheckState> check, std::string report_json) {
  auto json = std::make_shared<const std::string>(std::move(report_json));
  std::map<std::pair<std::string, int>, uint64_t> seed;
  bool have_log = check && check->snapshot;
  if (have_log) seed = count_xids(check->snapshot->kernel_log);
  std::lock_guard<std::mutex> lock(mu_);
  if (!seeded_ && have_log) {
    for (const auto& [key, n] : seed) xid_counts_[key] += n;
    seeded_ = true;
  }
  if (have_log) kernel_log_source_ = check->snapshot->kernel_log.source;
  check_ = std::move(check);
  report_json_ = std::move(json);
}

void DaemonState::record_kernel_event(const KernelEvent& e) {
  if (e.kind != "xid") return;
  std::lock_guard<std::mutex> lock(mu_);
  xid_counts_[{e.gpu, e.code}] += static_cast<uint64_t>(std::max(1, e.count));
}

void DaemonState::set_kernel_log_source(std::string source) {
  std::lock_guard<std::mutex> lock(mu_);
  kernel_log_source_ = std::move(source);
}

void DaemonState::set_history_ok(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  history_ok_ = ok;
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
  }
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

std::string DaemonState::unhealthy_reason(int64_t now_ms, int64_t max_sampler_silence_ms,
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
  if (now_ms - sampler_beat > max_sampler_silence_ms) {
    return "the sampler loop has not finished a round for " + secs(now_ms - sampler_beat);
  }
  if (now_ms - check_beat > max_check_silence_ms) {
    return "the check loop has not finished a round for " + secs(now_ms - check_beat);
  }
  if (!sample->have_sample) {
    return "no NVML sample yet" + (sample->last_error.empty() ? "" : ": " + sample->last_error);
  }
  if (!sample->last_error.empty()) return "the last NVML sample is stale: " + sample->last_error;
  if (sample_is_stale(*sample, now_ms, interval_s_)) {
    return "the last NVML sample is stale: taken " + secs(now_ms - sample->taken_unix_ms) + " ago";
  }
  return "";
}

}  // namespace gd
