// gpudoctor check: probe (or load a snapshot), run the checks, print the
// report, exit with the verdict's code.
#include "checks/check.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "checks/runner.h"
#include "cli/commands.h"
#include "config/config.h"
#include "report/npd.h"
#include "report/render.h"
#include "report/slurm.h"
#include "snapshot/snapshot_json.h"
#include "util/ascii.h"
#include "util/duration.h"

namespace gd {
namespace {

int list_checks(bool json) {
  std::vector<ListedTest> rows;
  for (const auto& c : all_checks()) rows.push_back({c.name, c.description, c.ids});
  return print_listing(rows, json, "checks");
}

}  // namespace

void setup_check(CLI::App* app, CheckArgs* args) {
  add_from_option(app, &args->from, "Analyse");
  app->add_flag("--json", args->json, "Print the gpudoctor.report/v1 JSON report");
  app->add_flag("--list-checks", args->list_checks, "List the checks and the ids they emit");
  app->add_flag("-v,--verbose", args->verbose,
                "Also print notes in full, what the usual remedies do here, and the checks that "
                "passed");
  app->add_flag("-q,--quiet", args->quiet, "Print the verdict line only");
  add_selection_options(app, &args->only, &args->skip);
  add_log_window_option(app, &args->log_window);
  add_config_option(app, &args->config);
  app->add_option("--format", args->format,
                  "Output: text, json (as --json) or npd (node-problem-detector's plugin "
                  "protocol: one line, exit 0 ok, 1 problem, 2 unknown)")
      ->option_text("FORMAT")
      ->check(CLI::IsMember({"text", "json", "npd"}));
  app->add_flag("--slurm", args->slurm,
                "Act as Slurm's HealthCheckProgram: drain this node on a failing verdict, resume "
                "a node gpudoctor drained once it is healthy (docs/slurm.md)");
  app->add_option("--slurm-drain-on", args->slurm_drain_on,
                  "With --slurm: the least severity that drains the node, fail (default) or warn")
      ->option_text("SEVERITY")
      ->check(CLI::IsMember({"fail", "warn"}));
  app->add_option("--slurm-node", args->slurm_node,
                  "With --slurm: the Slurm node name (default $SLURMD_NODENAME, else the short "
                  "host name)")
      ->option_text("NAME");
  app->add_option("--scontrol", args->slurm_scontrol,
                  "With --slurm: the scontrol to run (default: found on $PATH)")
      ->option_text("PATH");
  app->add_flag("--slurm-dry-run", args->slurm_dry_run,
                "With --slurm: read the node's state and say what would be done, change nothing");
  app->add_option("--slurm-recheck", args->slurm_recheck,
                  "With --slurm: when only missing GPUs or a failed NVML/CUDA start would "
                  "drain, probe again after this long first (default 20s; 0 never)")
      ->type_name("DURATION");
  add_diag_helper_option(app, &args->diag_helper);
  add_probe_options(app, &args->probe);
}

int run_check(const CheckArgs& args) {
  if (args.list_checks) return list_checks(args.json);
  // Only the file the user names is read (docs/config.md).
  auto loaded_config = load_config(config_path(args.config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!loaded_config.ok()) {
    print_error(loaded_config.error());
    return kExitUsage;
  }
  Config config = std::move(*loaded_config);
  auto checks = select_for(args.only, args.skip, &config);
  if (!checks.ok()) {
    print_error(checks.error());
    return kExitUsage;
  }
  auto window = parse_duration(args.log_window);
  if (!window.ok()) {
    print_error(window.error());
    return kExitUsage;
  }
  config.kernel_log_window_s = *window;
  // Slurm's HealthCheckProgram and node-problem-detector check a node while
  // its jobs run: there a job on its GPUs is normal.
  config.fleet = args.slurm || args.format == "npd";
  auto loaded = load_or_probe(args.from, args.probe);
  if (!loaded.ok()) {
    print_error(loaded.error());
    return kExitInternal;
  }
  const Snapshot& snapshot = *loaded;
  Report report = run_checks(snapshot, config, *checks, config.only, config.skip);
  if (args.slurm) {
    auto recheck = parse_duration(args.slurm_recheck);
    if (!recheck.ok()) {
      print_error("--slurm-recheck: " + recheck.error());
      return kExitUsage;
    }
    // A GPU count that dropped for one probe (a timed-out child, a driver
    // busy resetting) drains nothing until a second look agrees.
    std::string note;
    if (args.from.empty() && *recheck > 0 && only_count_symptoms(report)) {
      std::this_thread::sleep_for(std::chrono::duration<double>(*recheck));
      auto again = load_or_probe(args.from, args.probe);
      if (!again.ok()) {
        print_error(again.error());
        return kExitInternal;
      }
      Report second = run_checks(*again, config, *checks, config.only, config.skip);
      note = recheck_note(report, second, args.slurm_recheck);
      report = std::move(second);
    }
    return slurm_health(report, args, note);
  }
  if (args.format == "npd") {
    NpdResult npd = render_npd(report);
    std::fwrite(npd.message.data(), 1, npd.message.size(), stdout);
    return npd.exit_code;
  }
  bool json = args.json || args.format == "json";
  // A snapshot's strings (log lines, paths) reach the terminal escaped.
  std::string out =
      json ? render_json(report)
           : escape_controls(render_text(report, {.verbose = args.verbose, .quiet = args.quiet}));
  if (!json && color_wanted(STDOUT_FILENO)) out = colorize_report(out);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_code_for(report.verdict);
}

}  // namespace gd
