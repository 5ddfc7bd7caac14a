// gpudoctor run: check first, refuse when too few GPUs are fit, set the
// environment, optionally pin to the GPU's NUMA-local CPUs, then replace
// itself with the command (docs/run.md). After execvp the process IS the
// command: its signals and exit code reach the caller unchanged.
#include <errno.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "checks/util.h"
#include "cli/commands.h"
#include "job/check.h"
#include "report/render.h"
#include "util/cpus.h"
#include "util/duration.h"
#include "util/text.h"

namespace gd {

namespace {

// Exit codes of `run` itself (docs/run.md). Everything else is the
// command's own. sysexits.h values, next to 64 (EX_USAGE) which the tool
// already uses, so they do not collide with check's 0-3 or a shell's
// 126/127/128+N.
constexpr int kExitRefused = 69;         // EX_UNAVAILABLE: fewer fit GPUs than --require
constexpr int kExitReportFile = 73;      // EX_CANTCREAT: --json-report could not be written
constexpr int kExitNotExecutable = 126;  // as a shell: found but cannot be run
constexpr int kExitNotFound = 127;       // as a shell: no such command

constexpr size_t kMaxCauseLines = 6;

void say(const std::string& line) { print_error("run: " + line); }

int write_report(const std::string& path, const Report& report) {
  if (auto w = write_text_file(path, render_json(report)); !w.ok()) {
    say(fmt::format("--json-report {}: {}", path, w.error()));
    return kExitReportFile;
  }
  return 0;
}

// The unfit GPUs and the ranked fail findings behind them, briefly.
void print_causes(const JobCheck& c, const JobEnv& job, bool exclude) {
  const Fitness& f = c.fitness;
  std::vector<std::string> ids;
  for (const auto& g : f.gpus) {
    for (const auto& id : g.unhealthy_ids) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  size_t unfit = f.gpus.size() - f.healthy_count();
  if (unfit == 0) return;
  say(fmt::format("{} of {} GPU{} unfit: {}", unfit, f.gpus.size(), f.gpus.size() == 1 ? "" : "s",
                  describe_unfit(f)));
  size_t shown = 0;
  size_t more = 0;
  std::vector<std::string> done;
  for (const auto& x : c.report.findings) {
    if (x.severity != Severity::kFail) continue;
    if (std::find(ids.begin(), ids.end(), x.id) == ids.end()) continue;
    if (std::find(done.begin(), done.end(), x.id) != done.end()) continue;
    done.push_back(x.id);
    if (shown == kMaxCauseLines) {
      ++more;
      continue;
    }
    ++shown;
    say(fmt::format("  FAIL {}{}: {}", x.id,
                    x.follows_from.empty() ? "" : " (follows from " + x.follows_from + ")",
                    x.summary));
  }
  if (more > 0) say(fmt::format("  and {} more (gpudoctor check)", more));
  if (!job.unhealthy_kept.empty()) {
    std::vector<std::string> kept;
    for (size_t p : job.unhealthy_kept) kept.push_back(f.gpus[p].bus_id);
    say(fmt::format("the command still sees {}{}", join(kept, ", "),
                    exclude ? "" : " (--exclude-unhealthy leaves unfit GPUs out)"));
  }
}

// --bind-cpus: pin to the local CPUs of the rank-th GPU the job sees. Any
// reason not to pin is a warning; the job still runs.
void bind_cpus(const JobCheck& c, const JobEnv& job) {
  const Fitness& f = c.fitness;
  LocalRank lr = local_rank(c.snapshot.env.vars);
  if (!lr.error.empty()) {
    say("--bind-cpus: " + lr.error + "; CPUs not pinned");
    return;
  }
  std::string rank_text = lr.found ? fmt::format("local rank {} ({})", lr.rank, lr.variable)
                                   : std::string(
                                         "local rank 0 (no LOCAL_RANK, SLURM_LOCALID or "
                                         "OMPI_COMM_WORLD_LOCAL_RANK)");
  if (!job.visible_known) {
    say("--bind-cpus: which GPUs CUDA_VISIBLE_DEVICES selects is unknown here; CPUs not pinned");
    return;
  }
  // A scheduler that gives each task its own GPU (srun --gpus-per-task)
  // leaves one visible whatever the rank: that one is the task's.
  size_t index = job.visible.size() == 1 ? 0 : static_cast<size_t>(lr.rank);
  if (index >= job.visible.size()) {
    say(fmt::format("--bind-cpus: {} but the command sees {} GPU{}; CPUs not pinned", rank_text,
                    job.visible.size(), job.visible.size() == 1 ? "" : "s"));
    return;
  }
  const GpuFitness& g = f.gpus[job.visible[index]];
  if (g.local_cpulist.empty()) {
    say(fmt::format("--bind-cpus: {}: GPU {} has no local CPU list in sysfs; CPUs not pinned",
                    rank_text, g.bus_id));
    return;
  }
  auto local = parse_cpu_list(g.local_cpulist);
  if (!local.ok()) {
    say(fmt::format("--bind-cpus: GPU {}: {}; CPUs not pinned", g.bus_id, local.error()));
    return;
  }
  auto allowed_or = allowed_cpus();
  if (!allowed_or.ok()) {
    say("--bind-cpus: sched_getaffinity: " + allowed_or.error() + "; CPUs not pinned");
    return;
  }
  const std::vector<int>& allowed = *allowed_or;
  std::vector<int> both;
  for (int cpu : *local) {
    if (std::find(allowed.begin(), allowed.end(), cpu) != allowed.end()) both.push_back(cpu);
  }
  if (both.empty()) {
    say(fmt::format(
        "--bind-cpus: none of GPU {}'s local CPUs ({}) is allowed to this process ({}); CPUs "
        "not pinned",
        g.bus_id, g.local_cpulist, format_cpu_list(allowed)));
    return;
  }
  if (auto pinned = set_cpus(both); !pinned.ok()) {
    say("--bind-cpus: sched_setaffinity: " + pinned.error() + "; CPUs not pinned");
    return;
  }
  std::string numa = g.numa_node >= 0 ? fmt::format(", NUMA node {}", g.numa_node) : "";
  say(fmt::format("{}: GPU {}{}: CPUs {}", rank_text, g.bus_id, numa, format_cpu_list(both)));
}

void apply_settings(const JobEnv& job) {
  for (const auto& s : job.settings) {
    if (s.container_only) continue;
    // An empty library path is the same as none to the loader; unset is
    // cleaner. An empty CUDA_VISIBLE_DEVICES means "no GPU" and stays.
    if (s.value.empty() && s.name.starts_with("LD_")) {
      unsetenv(s.name.c_str());
    } else {
      setenv(s.name.c_str(), s.value.c_str(), 1);
    }
  }
}

}  // namespace

[[noreturn]] void exec_command(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execvp(argv[0], argv.data());
  int e = errno;
  // As a shell says it: a bare name not on PATH is "command not found".
  if (e == ENOENT && command[0].find('/') == std::string::npos) {
    print_error(command[0] + ": command not found");
  } else {
    print_error(command[0] + ": " + std::strerror(e));
  }
  std::fflush(stderr);
  std::_Exit(e == ENOENT || e == ENOTDIR ? kExitNotFound : kExitNotExecutable);
}

void setup_run(CLI::App* app, RunArgs* args) {
  app->add_option("--require", args->require,
                  "Refuse (exit 69) unless at least N fit GPUs are selected")
      ->option_text("N")
      ->check(CLI::Range(0, 1 << 20));
  app->add_flag("--exclude-unhealthy", args->exclude_unhealthy,
                "Leave unfit GPUs out of CUDA_VISIBLE_DEVICES");
  app->add_flag("--bind-cpus", args->bind_cpus,
                "Pin to the NUMA-local CPUs of this rank's GPU (LOCAL_RANK, SLURM_LOCALID, "
                "OMPI_COMM_WORLD_LOCAL_RANK)");
  app->add_option("--json-report", args->json_report,
                  "Write the gpudoctor.report/v1 JSON here (with --watch: the job's "
                  "gpudoctor.watch/v1 summary)")
      ->option_text("FILE");
  app->add_flag("--watch", args->watch,
                "Stay while the command runs: sample NVML and follow the kernel log, write the "
                "diagnosis at a fatal event and a health summary when it ends");
  app->add_option("--watch-interval", args->watch_interval,
                  "With --watch: the NVML sampling period (default 5s)")
      ->option_text("DURATION");
  app->add_option("--summary-file", args->summary_file,
                  "With --watch: also write the job's summary here as text, for a Slurm epilog "
                  "to append to the job's output (deploy/slurm/gpudoctor-epilog.sh)")
      ->option_text("FILE");
  app->add_flag("--stop-on-fatal", args->stop_on_fatal,
                "With --watch: at a fatal event (Xid 79, 48, 95, a GPU lost, ...) send every "
                "process of the command SIGTERM, then SIGKILL 10 s later");
  add_config_option(app, &args->config);
  add_selection_options(app, &args->only, &args->skip);
  add_probe_options(app, &args->probe);
  // After `--` every word is the command's, its options included; without
  // `--` a command word that looks like an option is a usage error.
  app->add_option("command", args->command, "The command and its arguments, after --")
      ->option_text("-- CMD [ARGS...]");
  app->footer("Usage: gpudoctor run [OPTIONS] -- CMD [ARGS...]");
}

int run_run(const RunArgs& args) {
  if (args.command.empty() || args.command[0].empty()) {
    say("no command: gpudoctor run [OPTIONS] -- CMD [ARGS...]");
    return kExitUsage;
  }
  JobCheck c;
  if (int rc = job_check_or_exit("run", args.probe, "", args.config, args.only, args.skip,
                                 args.command, &c);
      rc != 0)
    return rc;
  double watch_interval_s = 0;
  if (args.watch) {
    auto d = parse_duration(args.watch_interval);
    if (!d.ok() || *d < 0.1) {
      say("--watch-interval: " + (d.ok() ? std::string("at least 0.1 s") : d.error()));
      return kExitUsage;
    }
    watch_interval_s = *d;
  } else if (args.stop_on_fatal || !args.summary_file.empty()) {
    say(std::string(args.stop_on_fatal ? "--stop-on-fatal" : "--summary-file") + " needs --watch");
    return kExitUsage;
  }
  if (!args.json_report.empty() && !args.watch) {
    if (int rc = write_report(args.json_report, c.report); rc != 0) return rc;
  }
  JobEnvOptions opt;
  opt.exclude_unhealthy = args.exclude_unhealthy;
  opt.always_set_visible = false;
  JobEnv job = plan_job_env(c.snapshot, c.fitness, opt);
  for (const auto& note : job.notes) say(note);
  print_causes(c, job, args.exclude_unhealthy);

  // A selection CUDA_VISIBLE_DEVICES makes but we cannot resolve: count what
  // the machine has, the most the command could get.
  size_t fit = job.visible_known ? job.visible_healthy(c.fitness) : c.fitness.healthy_count();
  if (args.require > 0 && fit < static_cast<size_t>(args.require)) {
    say(fmt::format("refusing to start {}: {} fit GPU{}{}, --require {}", args.command[0], fit,
                    fit == 1 ? "" : "s",
                    job.user_selection ? " selected by CUDA_VISIBLE_DEVICES" : "", args.require));
    return kExitRefused;
  }
  // A launcher that starts more processes than the command sees GPUs:
  // the ranks past them fail on CUDA error 101 (checks/device_ordinal.cc).
  // --skip device-ordinal (or an --only without it) leaves it to the job.
  const EnvInfo& want = c.snapshot.env;
  bool checked = std::any_of(c.report.findings.begin(), c.report.findings.end(),
                             [](const Finding& f) { return f.check == "device-ordinal"; });
  if (checked && want.job_gpus > 0 && job.visible_known &&
      job.visible.size() < static_cast<size_t>(want.job_gpus)) {
    say(fmt::format("refusing to start {}: {} asks for {} GPUs, the command sees {}{}",
                    args.command[0], want.job_request, want.job_gpus, job.visible.size(),
                    job.excluded.empty() ? "" : " (unfit ones left out)"));
    return kExitRefused;
  }
  if (args.bind_cpus) bind_cpus(c, job);
  apply_settings(job);
  if (args.watch) return run_watched(args, watch_interval_s);
  exec_command(args.command);
}

}  // namespace gd
