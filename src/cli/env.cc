// gpudoctor env: the environment this machine's jobs need (docs/env.md):
// CUDA_DEVICE_ORDER=PCI_BUS_ID, the fit GPUs by UUID in CUDA_VISIBLE_DEVICES,
// and the fixes that are environment settings, as sh, fish, docker or k8s.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "job/check.h"
#include "job/env_render.h"

namespace gd {

namespace {

// No fit GPU is selected: the settings still print (CUDA_VISIBLE_DEVICES
// empty, so a job that ignores the exit code finds no GPU rather than a bad
// one), and the exit code says so.
constexpr int kExitNoFitGpu = 2;

}  // namespace

void setup_env(CLI::App* app, EnvArgs* args) {
  app->add_option("--format", args->format, "sh (default), fish, docker, k8s or json")
      ->option_text("FORMAT");
  app->add_flag_callback(
      "--json", [args] { args->format = "json"; },
      "Print gpudoctor.env/v1 JSON (as --format json)");
  add_from_option(app, &args->from, "Use");
  add_config_option(app, &args->config);
  add_probe_options(app, &args->probe);
}

int run_env(const EnvArgs& args) {
  auto format = parse_env_format(args.format);
  if (!format) {
    print_error("env: --format " + args.format + " is not one of sh, fish, docker, k8s, json");
    return kExitUsage;
  }
  JobCheck c;
  if (int rc = job_check_or_exit("env", args.probe, args.from, args.config, {}, {}, {}, &c);
      rc != 0)
    return rc;
  const Fitness& f = c.fitness;
  JobEnv job = plan_job_env(c.snapshot, f, JobEnvOptions{});

  std::string header = fmt::format("gpudoctor env: {} of {} GPU{} fit", f.healthy_count(),
                                   f.gpus.size(), f.gpus.size() == 1 ? "" : "s");
  if (job.visible_known) {
    header += fmt::format("; jobs get {}", job.visible.size());
  }
  std::string out = render_env(job, *format, header);
  std::fwrite(out.data(), 1, out.size(), stdout);

  for (const auto& note : job.notes) print_error("env: " + note);
  size_t unfit = f.gpus.size() - f.healthy_count();
  if (unfit > 0) {
    print_error(fmt::format("env: left out {} unfit GPU{}: {} (gpudoctor check says why)", unfit,
                            unfit == 1 ? "" : "s", describe_unfit(f)));
  }
  if (job.visible_known && job.visible.empty()) {
    print_error(f.gpus.empty() ? "env: no GPU on this machine"
                : job.selected.empty()
                    ? "env: CUDA_VISIBLE_DEVICES in this environment selects no GPU"
                    : "env: no fit GPU: CUDA_VISIBLE_DEVICES is set empty");
    return kExitNoFitGpu;
  }
  return 0;
}

}  // namespace gd
