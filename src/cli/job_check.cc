#include "cli/job_check.h"

#include <cstdlib>

#include "cli/commands.h"
#include "config/config.h"
#include "probe/job_request.h"
#include "checks/runner.h"
#include "snapshot/snapshot_json.h"

namespace gd {

int check_for_job(const std::string& command, const ProbeOptions& probe, const std::string& from,
                  const std::string& config, const std::vector<std::string>& only,
                  const std::vector<std::string>& skip, const std::vector<std::string>& job,
                  JobCheck* out) {
  // --config, else $GPUDOCTOR_CONFIG, as for check (docs/config.md).
  auto cfg = load_config(config_path(config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!cfg.ok()) {
    print_error(command + ": " + cfg.error());
    return kExitUsage;
  }
  auto checks = select_for(only, skip, &*cfg);
  if (!checks.ok()) {
    print_error(command + ": " + checks.error());
    return kExitUsage;
  }
  auto loaded = load_or_probe(from, probe);
  if (!loaded.ok()) {
    print_error(command + ": " + loaded.error());
    return kExitInternal;
  }
  out->snapshot = std::move(*loaded);
  if (auto request = job_gpu_request(job)) {
    out->snapshot.env.job_gpus = request->gpus;
    out->snapshot.env.job_request = request->request;
  }
  out->report = run_checks(out->snapshot, *cfg, *checks, cfg->only, cfg->skip);
  out->fitness = assess_fitness(out->snapshot, out->report);
  return 0;
}

}  // namespace gd
