// `gpudoctor serve`: the exporter daemon (docs/serve.md). Threads:
//  - the sampler loop: one NVML sample every interval from the long-lived
//    sampler child (sampler.h);
//  - the check loop: every check interval, the probe in a `gpudoctor
//    snapshot` child (collect_snapshot_in_child: the probes' code and
//    buffers never stay resident here), then the checks, the report
//    written to the history;
//  - the kernel-log follower: Xid counters (after the first check seeded
//    them from this boot's log);
//  - the HTTP server's threads (http.h), whose handlers only copy the last
//    state out of DaemonState and render it.
// With a recorded snapshot (--from) there is no child and no follower: the
// snapshot's NVML values are every sample and its checks every report.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checks/check.h"
#include "history/reader.h"
#include "history/store.h"
#include "probe/probe.h"
#include "serve/daemon_state.h"
#include "serve/http.h"
#include "util/result.h"

namespace gd {

struct DaemonOptions {
  HttpOptions http;
  double interval_s = 15;        // NVML sampling period
  double check_interval_s = 60;  // full check period
  Config config;                 // health thresholds and the kernel-log window
  ProbeOptions probe;            // probe.self_exe: the binary the children run
  std::vector<std::string> env;  // the sampler child's environment
  std::string history_path;      // "" = no history
  double retention_s = 30 * 86400.0;
  // A `gpudoctor diag` run's findings join the exporter's (gpudoctor_finding,
  // /report.json, the status page) while it is at most this old
  // (--diag-max-age); its figures are exported whatever its age.
  double diag_max_age_s = 7 * 86400.0;
  // The recovery gate's re-probe runs a level-1 diag with this helper
  // (gpudoctor-diag, --diag-helper); "" = NVML and CUDA only.
  std::string diag_helper;
  // The recovery gate's hysteresis against a flapping GPU (--flap-*).
  FlapOptions flap;
  std::shared_ptr<const Snapshot> from;  // --from: a recorded machine; null = this one
  // How long start() waits for the first sample and check before serving
  // (a hung GPU must not keep the port closed for a whole deadline).
  double first_round_wait_s = 2;
  // Where one-line notes go (history failures, ...); default stderr.
  std::function<void(const std::string&)> log;
};

class Daemon {
 public:
  // Starts the loops, waits for the first round (at most
  // first_round_wait_s), then binds and serves. Error: the server could not
  // start (bad address, port taken, bad web config).
  static Result<std::unique_ptr<Daemon>> start(DaemonOptions opt);
  ~Daemon();

  int port() const;
  // Stops serving and the loops. The check loop may be inside a probe that
  // waits for its deadline: returns false when it did not finish within
  // `grace`; the caller then exits without destroying the daemon (its probe
  // children die with the process, PR_SET_PDEATHSIG).
  bool stop(std::chrono::milliseconds grace);

  const DaemonState& state() const { return *state_; }

  // The routes, exposed for tests: "/metrics", "/report.json", "/healthz", "/".
  std::map<std::string, HttpHandler> routes();

 private:
  explicit Daemon(DaemonOptions opt);
  void sampler_loop();
  void check_loop();
  void follower_loop();
  void run_check(uint64_t run);
  // Re-probes the GPUs the recovery gate found cleared (serve/recovery.h);
  // one that passes is healthy again, and the sampler child is restarted.
  void reprobe_cleared();
  void write_history(const CheckState& c, const std::string& report_json);
  // Reads the newest diag run's id from the history; the run itself (and
  // its JSON parsed) only when the id changed.
  void refresh_diag();
  void note(const std::string& line);
  // Sleeps until `until` or stop; false on stop.
  bool wait_until(std::chrono::steady_clock::time_point until);

  DaemonOptions opt_;
  std::unique_ptr<DaemonState> state_;
  std::vector<const CheckEntry*> checks_;
  std::unique_ptr<HttpServer> http_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  bool first_sample_done_ = false;  // guarded by mu_
  bool first_check_done_ = false;   // guarded by mu_
  bool check_thread_done_ = false;  // guarded by mu_
  NvmlSampler* sampler_ = nullptr;  // guarded by mu_; for cancel() on stop

  std::unique_ptr<HistoryStore> history_;     // check thread only
  uint64_t history_failures_ = 0;             // check thread only
  bool history_noted_ = false;                // check thread only
  bool history_stopped_ = false;              // check thread only: found damaged
  std::string last_report_key_;               // check thread only
  int64_t last_report_written_ms_ = 0;        // check thread only
  std::optional<HistoryReader> diag_reader_;  // check thread only
  bool diag_noted_ = false;                   // check thread only

  std::thread sampler_thread_;
  std::thread check_thread_;
  std::thread follower_thread_;
  bool stopped_ = false;
};

}  // namespace gd
