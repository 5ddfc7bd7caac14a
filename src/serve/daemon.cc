// `gpudoctor serve`'s loops and routes (see daemon.h).
#include "serve/daemon.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>

#include "checks/runner.h"
#include "diag/reprobe.h"
#include "probe/kernel_log.h"
#include "probe/rootfs.h"
#include "probe/sampler.h"
#include "report/render.h"
#include "serve/metrics.h"
#include "serve/status_page.h"
#include "util/host.h"
#include "util/time.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// What a report says, for "has anything changed": the verdict and each
// finding's id, severity and GPUs.
std::string report_key(const Report& r) {
  std::string key = severity_name(r.verdict);
  for (const auto& f : r.findings) {
    key += '\n' + f.id + ' ' + severity_name(f.severity);
    for (const auto& g : f.gpus) key += ' ' + g;
  }
  return key;
}

// An unchanged report is written at most this often: enough to answer
// "what did the node look like yesterday" without a row every minute.
constexpr int64_t kUnchangedReportEveryMs = 3600 * 1000;

HttpResponse text_response(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

Daemon::Daemon(DaemonOptions opt) : opt_(std::move(opt)) {
  int64_t now = now_unix_ms();
  // A recorded machine is shown under its own name, not this host's.
  std::string host = opt_.from && !opt_.from->hostname.empty() ? opt_.from->hostname : host_name();
  state_ = std::make_unique<DaemonState>(host, now, opt_.interval_s, opt_.check_interval_s,
                                         opt_.diag_max_age_s, opt_.flap);
  if (!opt_.log) {
    opt_.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  }
}

Daemon::~Daemon() {
  stop(std::chrono::milliseconds(INT_MAX));
  if (check_thread_.joinable()) check_thread_.join();
}

Result<std::unique_ptr<Daemon>> Daemon::start(DaemonOptions opt) {
  std::unique_ptr<Daemon> d(new Daemon(std::move(opt)));
  auto checks = select_checks(d->opt_.config.only, d->opt_.config.skip);
  if (!checks.ok()) return Error{checks.error()};
  d->checks_ = *checks;
  // Bind first: a port already taken is an error before any child starts.
  auto http = start_http_server(d->opt_.http, d->routes());
  if (!http.ok()) return Error{http.error()};
  d->http_ = std::move(*http);
  d->sampler_thread_ = std::thread(&Daemon::sampler_loop, d.get());
  d->check_thread_ = std::thread(&Daemon::check_loop, d.get());
  if (!d->opt_.from) d->follower_thread_ = std::thread(&Daemon::follower_loop, d.get());
  std::unique_lock<std::mutex> lock(d->mu_);
  d->cv_.wait_for(lock, std::chrono::duration<double>(d->opt_.first_round_wait_s),
                  [&] { return d->first_sample_done_ && d->first_check_done_; });
  return d;
}

int Daemon::port() const { return http_ ? http_->port() : 0; }

bool Daemon::stop(std::chrono::milliseconds grace) {
  if (!stopped_) {
    stopped_ = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      if (sampler_ != nullptr) sampler_->cancel();
    }
    cv_.notify_all();
    if (http_) http_->stop();
    if (sampler_thread_.joinable()) sampler_thread_.join();
    if (follower_thread_.joinable()) follower_thread_.join();
  }
  if (!check_thread_.joinable()) return true;
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, grace, [&] { return check_thread_done_; })) return false;
  lock.unlock();
  check_thread_.join();
  return true;
}

bool Daemon::wait_until(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_until(lock, until, [&] { return stop_.load(); });
}

void Daemon::note(const std::string& line) { opt_.log(line); }

std::map<std::string, HttpHandler> Daemon::routes() {
  std::map<std::string, HttpHandler> r;
  r["/metrics"] = [this] {
    HttpResponse resp = text_response(200, render_metrics(state_->view(now_unix_ms())));
    resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return resp;
  };
  r["/report.json"] = [this] {
    HttpResponse resp;
    resp.content_type = "application/json";
    auto json = state_->served_report_json(now_unix_ms());
    if (!json) {
      resp.status = 503;
      resp.body = "{\"error\": \"no check has finished yet\"}\n";
    } else {
      resp.body = *json;
    }
    return resp;
  };
  r["/healthz"] = [this] {
    double deadline_s = opt_.from ? 0 : opt_.probe.deadline_s;
    auto ms = [](double s) { return static_cast<int64_t>(s * 1000); };
    std::string why =
        state_->unhealthy_reason(now_unix_ms(), ms(2 * opt_.interval_s + deadline_s + 5),
                                 ms(2 * opt_.check_interval_s + deadline_s + 60));
    return why.empty() ? text_response(200, "ok\n") : text_response(503, why + "\n");
  };
  r["/"] = [this] {
    HttpResponse resp = text_response(200, render_status_page(state_->view(now_unix_ms())));
    resp.content_type = "text/html; charset=utf-8";
    return resp;
  };
  return r;
}

// --- the loops ---------------------------------------------------------------------

void Daemon::sampler_loop() {
  // Built on this thread: the child dies with the thread that spawned it.
  std::unique_ptr<NvmlSampler> sampler;
  if (!opt_.from) {
    SamplerOptions so;
    so.exe = opt_.probe.self_exe;
    so.nvml_lib = opt_.probe.nvml_lib;
    so.env = opt_.env;
    so.deadline_s = opt_.probe.deadline_s;
    sampler = std::make_unique<NvmlSampler>(so);
    std::lock_guard<std::mutex> lock(mu_);
    sampler_ = sampler.get();
    if (stop_) sampler->cancel();
  }
  SamplerCounters fixed;  // --from: the snapshot's answer, every interval
  auto next = Clock::now();
  while (!stop_) {
    SampleResult r;
    SamplerCounters c;
    if (sampler) {
      r = sampler->sample();
      if (stop_) break;  // cancelled: not a failure worth recording
      c = {sampler->attempts(), sampler->failures(), sampler->restarts()};
    } else {
      r.nvml = opt_.from->nvml;
      r.error = nvml_sample_problem(r.nvml);
      r.ok = r.error.empty();
      r.duration_ms = r.nvml.duration_ms;
      ++fixed.attempts;
      if (!r.ok) ++fixed.failures;
      c = fixed;
    }
    int64_t now = now_unix_ms();
    state_->record_sample(r, now, c);
    state_->beat_sampler(now);
    {
      std::lock_guard<std::mutex> lock(mu_);
      first_sample_done_ = true;
    }
    cv_.notify_all();
    // On schedule, but never a burst to catch up after a hang.
    next = std::max(next + seconds(opt_.interval_s), Clock::now());
    if (!wait_until(next)) break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  sampler_ = nullptr;
  // `sampler` is destroyed here: its child gets end of input and exits.
}

void Daemon::check_loop() {
  uint64_t run = 0;
  auto next = Clock::now();
  while (!stop_) {
    run_check(++run);
    state_->beat_check(now_unix_ms());
    {
      std::lock_guard<std::mutex> lock(mu_);
      first_check_done_ = true;
    }
    cv_.notify_all();
    next = std::max(next + seconds(opt_.check_interval_s), Clock::now());
    if (!wait_until(next)) break;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    check_thread_done_ = true;
  }
  cv_.notify_all();
}

void Daemon::run_check(uint64_t run) {
  auto start = Clock::now();
  std::shared_ptr<const Snapshot> snap = opt_.from;
  if (!snap)
    snap = std::make_shared<const Snapshot>(collect_snapshot_in_child(opt_.probe, opt_.env));
  auto c = std::make_shared<CheckState>();
  c->snapshot = snap;
  c->report = run_checks(*snap, opt_.config, checks_, opt_.config.only, opt_.config.skip);
  c->report.snapshot = snap.get();
  c->finished_unix_ms = now_unix_ms();
  c->duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  c->runs = run;
  std::string json = render_json(c->report);
  write_history(*c, json);
  refresh_diag();
  state_->record_check(std::move(c), std::move(json));
  if (!opt_.from) reprobe_cleared();
}

void Daemon::reprobe_cleared() {
  std::vector<std::string> due = state_->reprobes_due();
  if (due.empty()) return;
  ReprobeOptions ro;
  ro.probe = opt_.probe;
  ro.env = opt_.env;
  ro.diag_helper = opt_.diag_helper;
  std::vector<ReprobeResult> results = reprobe_gpus(ro, due);
  // Read after the re-probe: every sampler child started from now on opened
  // NVML after the GPU proved itself.
  uint64_t generation = state_->sampler_restarts();
  bool restart = false;  // a GPU admitted, or held as flapping after a re-probe passed
  for (const ReprobeResult& r : results) {
    if (state_->record_reprobe(r, generation, now_unix_ms())) {
      restart = true;
      note("gpudoctor serve: GPU " + r.bus_id + " healthy again: " + reprobe_line(r));
    } else if (std::string why = state_->flapping_cause(r.bus_id); !why.empty() && r.ok) {
      restart = true;
      note("gpudoctor serve: GPU " + r.bus_id + " " + why);
    } else {
      // Passed but not admitted (a sample of the old child saw it lost
      // meanwhile): a new child, so the next check's re-probe can decide.
      restart = restart || r.ok;
      note("gpudoctor serve: GPU " + r.bus_id + " still unhealthy: " + reprobe_line(r));
    }
  }
  if (!restart) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (sampler_ != nullptr) sampler_->request_restart();
}

void Daemon::refresh_diag() {
  if (opt_.history_path.empty()) return;
  auto failed = [&](const std::string& why) {
    diag_reader_.reset();  // reopened at the next check
    if (!diag_noted_) {
      diag_noted_ = true;
      note("gpudoctor serve: history " + opt_.history_path + ": reading diag runs: " + why +
           " (serving on; the last diag run read stays)");
    }
  };
  if (!diag_reader_) {
    // write_history has created and migrated the file, or noted why not.
    auto r = HistoryReader::open(opt_.history_path);
    if (!r.ok()) return;
    diag_reader_.emplace(std::move(*r));
  }
  auto id = diag_reader_->latest_diag_id();
  if (!id.ok()) return failed(id.error());
  if (!*id) {
    if (state_->diag_id() != 0) state_->record_diag(nullptr);  // pruned
    return;
  }
  if (**id == state_->diag_id()) return;
  auto run = diag_reader_->latest_diag_run();
  if (!run.ok()) return failed(run.error());
  if (!*run) return state_->record_diag(nullptr);
  auto d = std::make_shared<DiagState>(diag_state_from_stored(**run));
  if (!d->parse_error.empty()) {
    note("gpudoctor serve: history " + opt_.history_path + ": diag run " + std::to_string(d->id) +
         ": " + d->parse_error + " (its verdict and findings are served without its figures)");
  }
  state_->record_diag(std::move(d));
}

void Daemon::write_history(const CheckState& c, const std::string& report_json) {
  if (opt_.history_path.empty()) return;
  auto failed = [&](const std::string& what) {
    ++history_failures_;
    state_->set_history_ok(false);
    // A write that failed on a damaged file would fail at every check, and
    // each try could damage it further: the connection is dropped, and that
    // is said whatever was noted before. The next check opens the file
    // again, and the open's verdict refuses it until it is moved aside.
    if (history_) {
      if (auto intact = history_->check_intact(); !intact.ok()) {
        history_.reset();
        history_noted_ = history_stopped_ = true;
        note("gpudoctor serve: history stopped: " + intact.error());
        return;
      }
    }
    if (!history_noted_) {
      history_noted_ = true;
      note("gpudoctor serve: history " + opt_.history_path + ": " + what +
           " (serving on; later history errors are only counted)");
    }
  };
  if (history_) {
    // Moved or deleted under us: SQLite would go on writing the old inode,
    // which nobody can read. Said once per time it happens, then the path
    // gets a new history with the current report.
    if (std::string what = history_->replaced(); !what.empty()) {
      diag_reader_.reset();
      history_->close_replaced();
      history_.reset();
      note("gpudoctor serve: history " + opt_.history_path + ": " + what +
           " under the daemon; starting a new history there");
    }
  }
  if (!history_) {
    auto h = open_history(opt_.history_path, true, boot_id_or_btime(RootFs(opt_.probe.root)));
    if (!h.ok()) return failed(h.error());
    history_ = std::move(*h);
    last_report_key_.clear();  // a new file gets the current report at once
    if (history_stopped_) {
      history_stopped_ = false;
      note("gpudoctor serve: history " + opt_.history_path + ": writing again");
    }
  }
  std::string key = report_key(c.report);
  if (key != last_report_key_ ||
      c.finished_unix_ms - last_report_written_ms_ >= kUnchangedReportEveryMs) {
    auto r = history_->add_report(c.finished_unix_ms, c.report, report_json);
    if (!r.ok()) return failed(r.error());
    last_report_key_ = key;
    last_report_written_ms_ = c.finished_unix_ms;
  }
  if (c.snapshot) {
    auto e = history_->add_events(c.finished_unix_ms, c.snapshot->kernel_log.events);
    if (!e.ok()) return failed(e.error());
  }
  auto p = history_->prune(c.finished_unix_ms - static_cast<int64_t>(opt_.retention_s * 1000));
  if (!p.ok()) return failed(p.error());
  state_->set_history_ok(true);
}

void Daemon::follower_loop() {
  {
    // The first check seeds the counters from the log so far; following
    // starts after it, from the log's end.
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stop_ || first_check_done_; });
  }
  KernelLogOptions ko;
  ko.root = opt_.probe.root;
  bool noted = false;
  while (!stop_) {
    auto r = follow_kernel_log(
        ko,
        [&](const KernelEvent& e) {
          state_->record_kernel_event(e);
          return !stop_;
        },
        stop_);
    if (stop_) break;
    if (!r.ok() && !noted) {
      noted = true;
      note("gpudoctor serve: kernel log: " + r.error() + " (Xid counters stay at their seed)");
    }
    if (!wait_until(Clock::now() + seconds(opt_.check_interval_s))) break;
  }
}

}  // namespace gd
