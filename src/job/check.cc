#include "job/check.h"

#include <cstdlib>

#include "checks/runner.h"
#include "config/config.h"
#include "probe/job_request.h"
#include "snapshot/snapshot_json.h"

namespace gd {

std::optional<JobCheckError> check_for_job(const ProbeOptions& probe, const std::string& from,
                                           const std::string& config,
                                           const std::vector<std::string>& only,
                                           const std::vector<std::string>& skip,
                                           const std::vector<std::string>& job, JobCheck* out) {
  // --config, else $GPUDOCTOR_CONFIG, as for check (docs/config.md).
  auto cfg = load_config(config_path(config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!cfg.ok()) return JobCheckError{true, cfg.error()};
  auto checks = select_for(only, skip, &*cfg);
  if (!checks.ok()) return JobCheckError{true, checks.error()};
  auto loaded = load_or_probe(from, probe);
  if (!loaded.ok()) return JobCheckError{false, loaded.error()};
  out->snapshot = std::move(*loaded);
  if (auto request = job_gpu_request(job)) {
    out->snapshot.env.job_gpus = request->gpus;
    out->snapshot.env.job_request = request->request;
  }
  out->report = run_checks(out->snapshot, *cfg, *checks, cfg->only, cfg->skip);
  out->fitness = assess_fitness(out->snapshot, out->report);
  return std::nullopt;
}

}  // namespace gd
