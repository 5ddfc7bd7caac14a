// gpudoctor serve: the exporter daemon (src/serve/daemon.h, docs/serve.md).
// Parses and checks the flags, starts the daemon, prints the one
// "listening on" line, and waits for SIGTERM or SIGINT to stop it cleanly.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "cli/commands.h"
#include "config/config.h"
#include "history/store.h"
#include "probe/child.h"
#include "serve/daemon.h"
#include "serve/http_listen.h"
#include "serve/web_config.h"
#include "snapshot/snapshot_json.h"
#include "util/duration.h"

namespace gd {
namespace {

// A duration flag: positive, at least `min_s`.
Result<double> duration_flag(const std::string& flag, const std::string& text, double min_s) {
  auto d = parse_duration(text);
  if (!d.ok()) return Error{flag + ": " + d.error()};
  if (*d < min_s) {
    char least[32];
    std::snprintf(least, sizeof least, "%g", min_s);
    return Error{flag + ": " + text + " is too short (at least " + least + " s)"};
  }
  return *d;
}

// Notes from the daemon's threads wait until the "listening on" line is
// out, so that line is always the first one a script reads.
class Notes {
 public:
  void log(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    if (open_) {
      std::fprintf(stderr, "%s\n", line.c_str());
    } else {
      pending_.push_back(line);
    }
  }
  void open(const std::string& first_line) {
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(stderr, "%s\n", first_line.c_str());
    for (const auto& l : pending_) std::fprintf(stderr, "%s\n", l.c_str());
    pending_.clear();
    open_ = true;
  }

 private:
  std::mutex mu_;
  bool open_ = false;
  std::vector<std::string> pending_;
};

// The probe children (the NVML sampler, the check's NVML and CUDA probes)
// are the plain gpudoctor beside this binary when there is one: it answers
// the same hidden modes without loading the HTTP and TLS libraries, about
// 3 ms and 6 MB less per child.
std::string probe_child_exe() {
  std::string plain = sibling_exe("gpudoctor");
  return plain.empty() ? self_exe_path() : plain;
}

}  // namespace

int run_serve(const ServeArgs& args) {
  // glibc gives each thread that allocates its own malloc arena; the HTTP
  // workers, the sampler and the check loop would each keep one, a few
  // hundred KiB of resident memory apiece (bench/serve_scrape.py).
  mallopt(M_ARENA_MAX, 1);
  DaemonOptions opt;
  auto addr = parse_listen_address(args.listen);
  if (!addr.ok()) {
    print_error(addr.error());  // it names --listen
    return kExitUsage;
  }
  bool tls = false;
  if (!args.web_config.empty()) {
    auto wc = load_web_config(args.web_config);
    if (!wc.ok()) {
      print_error(wc.error());
      return kExitUsage;
    }
    tls = wc->tls;
  }
  auto interval = duration_flag("--interval", args.interval, 0.1);
  auto check_interval = duration_flag("--check-interval", args.check_interval, 0.1);
  auto retention = duration_flag("--retention", args.retention, 60);
  auto diag_max_age = duration_flag("--diag-max-age", args.diag_max_age, 1);
  auto window = duration_flag("--log-window", args.log_window, 0.001);
  auto flap_window = duration_flag("--flap-window", args.flap_window, 0.001);
  auto flap_hold = duration_flag("--flap-hold", args.flap_hold, 0.001);
  for (const auto* d :
       {&interval, &check_interval, &retention, &diag_max_age, &window, &flap_window, &flap_hold}) {
    if (!d->ok()) {
      print_error(d->error());
      return kExitUsage;
    }
  }
  auto config = load_config(config_path(args.config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!config.ok()) {
    print_error(config.error());
    return kExitUsage;
  }
  opt.config = std::move(*config);
  opt.config.kernel_log_window_s = *window;
  opt.config.fleet = true;  // a job node's exporter: a running job is normal
  if (auto checks = select_for(args.only, args.skip, &opt.config); !checks.ok()) {
    print_error(checks.error());
    return kExitUsage;
  }
  if (args.no_history && !args.history.empty()) {
    print_error("--history and --no-history exclude each other");
    return kExitUsage;
  }
  if (!args.from.empty()) {
    auto snap = snapshot_from_file(args.from);
    if (!snap.ok()) {
      print_error(snap.error());
      return kExitInternal;
    }
    opt.from = std::make_shared<const Snapshot>(std::move(*snap));
  }
  // A recorded machine goes into a history only when one is named: the
  // default database is this machine's.
  if (!args.no_history) {
    opt.history_path = !args.history.empty() ? args.history
                       : opt.from            ? ""
                                             : default_history_path();
  }
  opt.http.listen = args.listen;
  opt.http.web_config = args.web_config;
  opt.interval_s = *interval;
  opt.check_interval_s = *check_interval;
  opt.retention_s = *retention;
  opt.diag_max_age_s = *diag_max_age;
  opt.flap.returns = args.flap_returns;
  opt.flap.window_ms = std::llround(*flap_window * 1000);
  opt.flap.hold_ms = std::llround(*flap_hold * 1000);
  opt.flap.max_hold_ms = std::max<int64_t>(opt.flap.max_hold_ms, opt.flap.hold_ms);
  opt.probe = args.probe;
  opt.probe.self_exe = probe_child_exe();
  opt.env = current_environment();
  opt.diag_helper = reprobe_diag_helper(args.diag_helper);
  Notes notes;
  opt.log = [&notes](const std::string& line) { notes.log(line); };

  // Signals: SIGTERM/SIGINT are taken by sigwait() below, so every thread
  // (started after this) blocks them; a client that goes away mid-answer
  // must not kill us with SIGPIPE.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto daemon = Daemon::start(std::move(opt));
  if (!daemon.ok()) {
    print_error(daemon.error());
    return kExitInternal;
  }
  notes.open(std::string("gpudoctor serve: listening on ") + (tls ? "https://" : "http://") +
             url_host_port(addr->host, (*daemon)->port()));
  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  if (!(*daemon)->stop(std::chrono::milliseconds(3000))) {
    // The check is inside a probe waiting for its deadline; its children die
    // with us (PR_SET_PDEATHSIG). Nothing else is left to finish.
    std::fflush(stderr);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace gd
