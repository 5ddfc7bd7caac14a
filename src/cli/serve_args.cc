// The flags of `gpudoctor serve`. They live in the core, not beside the
// daemon (cli/serve.cc, in gpudoctor-serve): the plain gpudoctor knows them
// too, for the command tree behind completion, man pages and the interface
// test (cli/cli_spec.h), without loading the HTTP and TLS libraries.
#include "cli/commands.h"
#include "history/store.h"

namespace gd {

void setup_serve(CLI::App* app, ServeArgs* args) {
  app->description(
      "Export GPU health to Prometheus (/metrics), serve the last report (/report.json), a "
      "liveness check (/healthz) and a status page (/), and keep a history of reports and "
      "kernel events. One long-lived child samples NVML every --interval; the full check runs "
      "every --check-interval. Read-only; loopback unless --listen says otherwise. Stops "
      "cleanly on SIGTERM or SIGINT (docs/serve.md).");
  app->add_option("--listen", args->listen,
                  "Address to serve on: HOST:PORT, [IPv6]:PORT, or :PORT for every interface "
                  "(default 127.0.0.1:9835; port 0 picks a free one)")
      ->option_text("HOST:PORT");
  app->add_option("--interval", args->interval, "NVML sampling period (default 15s)")
      ->option_text("DURATION");
  app->add_option("--check-interval", args->check_interval,
                  "Period of the full check (default 60s)")
      ->option_text("DURATION");
  app->add_option("--history", args->history,
                  "History database (SQLite; default " + default_history_path() + ")")
      ->option_text("FILE");
  app->add_flag("--no-history", args->no_history, "Keep no history");
  app->add_option("--retention", args->retention, "Drop history older than this (default 30d)")
      ->option_text("DURATION");
  app->add_option("--diag-max-age", args->diag_max_age,
                  "The newest `gpudoctor diag` run in the history counts among the findings "
                  "while at most this old (default 7d)")
      ->option_text("DURATION");
  app->add_option("--web-config", args->web_config,
                  "TLS and basic auth, in Prometheus' exporter web-config YAML form")
      ->option_text("FILE");
  add_config_option(app, &args->config);
  add_selection_options(app, &args->only, &args->skip);
  add_log_window_option(app, &args->log_window);
  app->add_option("--from", args->from,
                  "Serve a snapshot recorded by `gpudoctor snapshot` instead of this machine "
                  "(demo and test mode: no NVML child, no kernel-log follower)")
      ->option_text("SNAPSHOT");
  add_diag_helper_option(app, &args->diag_helper);
  app->add_option("--flap-returns", args->flap_returns,
                  "A GPU that comes back this many times within --flap-window is flapping: held "
                  "unhealthy instead of admitted (default 3; 0 never)")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--flap-window", args->flap_window,
                  "The window --flap-returns counts in (default 10m)")
      ->option_text("DURATION");
  app->add_option("--flap-hold", args->flap_hold,
                  "How long a flapping GPU must stay without a loss before a re-probe may admit "
                  "it; doubled at each further episode, up to 1h or this (default 5m)")
      ->option_text("DURATION");
  add_probe_options(app, &args->probe);
}

}  // namespace gd
