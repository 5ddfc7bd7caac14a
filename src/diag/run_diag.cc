// run_diag_helper(): the helper as a probe child with a deadline, and NVML
// sampled beside it. The sampler runs on its own thread because ChildRunner
// blocks in wait(); its child dies with that thread (PR_SET_PDEATHSIG), so
// the thread owns the NvmlSampler and the main thread only cancels it.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>
#include <thread>

#include "diag/protocol.h"
#include "diag/run_helper.h"
#include "probe/child.h"
#include "probe/sampler.h"
#include "util/bytes.h"
#include "util/text.h"
#include "util/time.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// The helper answers in well under 1 MiB; 16 MiB is room for a future
// helper's verbosity, and the ceiling a broken one cannot pass.
constexpr size_t kMaxHelperStdoutBytes = 16u << 20;
constexpr size_t kMaxHelperStderrBytes = 16u << 10;
constexpr size_t kStderrTailLines = 8;
constexpr size_t kMaxSamples = 100000;

// The sampler thread: a sample every interval until stop(), kept for the
// GPUs under test. NVML that hangs is the sampler's deadline's business;
// stop() cancels a sample in progress so the run never waits for it.
class SampleLoop {
 public:
  SampleLoop(const DiagOptions& opt, Clock::time_point t0) : opt_(opt), t0_(t0) {
    thread_ = std::thread([this] { loop(); });
  }
  ~SampleLoop() { stop(); }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      if (sampler_ != nullptr) sampler_->cancel();
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  std::vector<DiagSample> take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(samples_);
  }

 private:
  void loop() {
    SamplerOptions so;
    so.exe = opt_.sampler_exe;
    so.nvml_lib = opt_.nvml_lib;
    so.env = opt_.env;
    NvmlSampler sampler(so);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      sampler_ = &sampler;
    }
    auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::max(opt_.sample_interval_s, 0.01)));
    Clock::time_point next = Clock::now();
    for (;;) {
      SampleResult r = sampler.sample();
      double t_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0_).count();
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) break;  // a cancelled or late sample is not of this run
      if (r.ok) add(r.nvml, t_ms);
      next += interval;
      if (next < Clock::now()) next = Clock::now();
      if (cv_.wait_until(lock, next, [this] { return stopping_; })) break;
    }
    std::lock_guard<std::mutex> lock(mu_);
    sampler_ = nullptr;
  }

  // Under mu_.
  void add(const NvmlInfo& n, double t_ms) {
    for (const NvmlGpu& g : n.gpus) {
      if (!g.pci_bus_id.ok()) continue;
      const std::string& bus = g.pci_bus_id.value;
      if (!opt_.bus_ids.empty() &&
          std::find(opt_.bus_ids.begin(), opt_.bus_ids.end(), bus) == opt_.bus_ids.end()) {
        continue;
      }
      if (samples_.size() >= kMaxSamples) return;
      const NvmlHealth& h = g.health;
      DiagSample s;
      s.t_ms = t_ms;
      s.bus_id = bus;
      if (h.temperature_c.ok()) s.temperature_c = h.temperature_c.value;
      if (h.power_usage_mw.ok()) s.power_mw = h.power_usage_mw.value;
      if (h.sm_clock_mhz.ok()) s.sm_clock_mhz = h.sm_clock_mhz.value;
      if (h.clock_event_reasons.ok()) s.clock_event_reasons = h.clock_event_reasons.value;
      if (h.utilization_gpu_pct.ok()) s.utilization_pct = h.utilization_gpu_pct.value;
      samples_.push_back(std::move(s));
    }
  }

  const DiagOptions& opt_;
  Clock::time_point t0_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  NvmlSampler* sampler_ = nullptr;  // the thread's, while it lives
  std::vector<DiagSample> samples_;
  std::thread thread_;
};

// The last few non-empty lines of the helper's stderr, made printable: the
// dynamic loader's "error while loading shared libraries: libcublas.so.13"
// is the likeliest way a helper fails in the field.
std::string stderr_tail(std::string_view err) {
  std::vector<std::string_view> lines;
  for (std::string_view l : split_lines(err)) {
    if (!trim(l).empty()) lines.push_back(trim(l));
  }
  size_t from = lines.size() > kStderrTailLines ? lines.size() - kStderrTailLines : 0;
  std::string out;
  for (size_t i = from; i < lines.size(); ++i) {
    if (!out.empty()) out += '\n';
    out += printable(lines[i], 512);
  }
  return out;
}

// " in memtest on 0000:17:00.0" from last_started "memtest 0000:17:00.0";
// "" when nothing was running.
std::string in_test(const std::string& last_started) {
  if (last_started.empty()) return "";
  size_t sp = last_started.rfind(' ');
  if (sp != std::string::npos && last_started.find(':', sp) != std::string::npos) {
    return " in " + last_started.substr(0, sp) + " on " + last_started.substr(sp + 1);
  }
  return " in " + last_started;
}

std::string incomplete_text(const ChildResult& r, bool done, const std::string& last_started,
                            double deadline_s) {
  if (!r.started) return "could not start: " + printable(r.start_error, 512);
  std::string where = in_test(last_started);
  if (r.timed_out) {
    std::string s = "timeout after " + seconds_1dp(deadline_s) + " s" + where;
    if (!r.reaped) s += " (it did not die after SIGKILL: stuck in the driver)";
    return s;
  }
  if (r.signal != 0) return "crashed: " + signal_name(r.signal) + where;
  if (r.exited && done && (r.exit_code == 0 || r.exit_code == 2)) return "";
  if (r.exited && r.exit_code == 0) return "exit 0 without a done line" + where;
  if (r.exited) return "exit " + std::to_string(r.exit_code) + where;
  return "ended without an exit status" + where;
}

}  // namespace

DiagRun run_diag_helper(const DiagOptions& opt) {
  DiagRun run;
  run.level = opt.level;
  run.duration_s = opt.duration_s;
  run.seed = opt.seed;
  run.helper = opt.helper;
  run.started_at = iso_utc_now();
  if (opt.helper.empty()) {
    run.incomplete = "could not start: no gpudoctor-diag helper beside this binary";
    return run;
  }
  const double deadline_s = diag_deadline_s(opt);
  Clock::time_point t0 = Clock::now();
  ChildRunner runner(
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadline_s)));
  ChildSpec spec;
  spec.exe = opt.helper;
  spec.args = diag_helper_args(opt);
  spec.env = opt.env;
  spec.max_stdout_bytes = kMaxHelperStdoutBytes;
  spec.max_stderr_bytes = kMaxHelperStderrBytes;
  spec.on_stdout_line = opt.on_helper_line;
  size_t id = runner.start(spec);

  std::optional<SampleLoop> sampling;
  if (!opt.sampler_exe.empty() && runner.result(id).started) sampling.emplace(opt, t0);
  const ChildResult& r = runner.wait(id);
  if (sampling) {
    sampling->stop();
    run.samples = sampling->take();
  }

  bool done = parse_helper_output(r.out, &run);
  if (r.out_truncated) {
    run.errors.push_back(
        {"", "", "helper output cut at " + format_bytes_exact(kMaxHelperStdoutBytes)});
  }
  run.wall_ms = r.duration_ms;
  run.incomplete = incomplete_text(r, done, run.last_started, deadline_s);
  run.stderr_tail = stderr_tail(r.err_tail);
  return run;
}

}  // namespace gd
