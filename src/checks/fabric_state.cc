// Link 6 of the fabric chain (docs/fabric.md): what NVML says of each
// GPU's place in the NVLink fabric. Hopper and later GPUs let CUDA start
// only once registered (Fabric Manager User Guide, "NVSwitch and NVLink
// Initialization"), so a state short of COMPLETED, or COMPLETED with a
// failure status, is fabric.not-registered. A registered GPU can still be
// unwell: the health mask and summary (nvidia-smi -q "Fabric" > "Health")
// and one clique and cluster for all of a node's GPUs are fabric.degraded.
// A real GB200 in that state (kubernetes-sigs/dra-driver-nvidia-gpu#626):
//   Fabric
//       State                             : Completed
//       Status                            : Success
//       CliqueId                          : 2
//       ClusterUUID                       : dc6e40c4-d722-4357-9ba6-5291dd461278
//       Health
//           Summary                       : Unhealthy
#include <set>

#include "catalog/cuda_errors.h"
#include "catalog/fabric_health.h"
#include "checks/checks.h"
#include "checks/util.h"
#include "facts/fabric.h"
#include "util/text.h"

namespace gd {

namespace {

constexpr const char* kNotRegistered = "fabric.not-registered";
constexpr const char* kDegraded = "fabric.degraded";

Finding not_registered(const FabricFacts& ff) {
  std::vector<std::string> evidence;
  std::vector<std::string> gpus;
  for (const NvmlGpu* g : gpus_outside_fabric(ff)) {
    std::string name = fabric_gpu_name(*g);
    if (g->fabric_state.value != kFabricCompleted) {
      evidence.push_back(name + ": fabric state " + fabric_state_name(g->fabric_state.value));
    } else {
      evidence.push_back(name + ": fabric state COMPLETED, status " +
                         nvml_error(g->fabric_status.value));
    }
    gpus.push_back(name);
  }
  if (gpus.empty()) {
    return all_ok(kNotRegistered, std::to_string(ff.fabric_gpus.size()) +
                                      " GPU(s) completed NVLink fabric registration.")[0];
  }
  Finding f =
      make_finding(kNotRegistered, Severity::kFail,
                   std::to_string(gpus.size()) + " of " + std::to_string(ff.fabric_gpus.size()) +
                       " GPU(s) have not joined the NVLink fabric, and CUDA does not start "
                       "on a GPU outside it (error 802).");
  f.gpus = gpus;
  f.evidence = evidence;
  f.remedy = {"nvidia-smi -q | grep -A12 '^    Fabric'   # state, status and health per GPU",
              "A state stuck at IN_PROGRESS or NOT_STARTED: the fabric manager (and on NVLink5, "
              "NVLSM) must run: journalctl -u nvidia-fabricmanager -b",
              "A failure status: sudo nvidia-smi -r with the fabric manager stopped, then start "
              "it; if it comes back, the node needs service."};
  return f;
}

Finding degraded(const FabricFacts& ff) {
  std::vector<std::string> evidence;
  std::set<std::string> gpus;
  bool fatal = false;
  std::set<std::string> domains;
  for (const NvmlGpu* g : ff.fabric_gpus) {
    if (g->fabric_state.value != kFabricCompleted || g->fabric_status.value != 0) continue;
    std::string name = fabric_gpu_name(*g);
    if (g->fabric_health_summary.ok() &&
        (g->fabric_health_summary.value == kFabricSummaryUnhealthy ||
         g->fabric_health_summary.value == kFabricSummaryLimited)) {
      evidence.push_back(name + ": health summary " +
                         fabric_health_summary_name(g->fabric_health_summary.value));
      fatal = fatal || g->fabric_health_summary.value == kFabricSummaryUnhealthy;
      gpus.insert(name);
    }
    if (g->fabric_health_mask.ok()) {
      for (const auto& issue : fabric_health_issues(g->fabric_health_mask.value)) {
        evidence.push_back(name + ": " + issue.text);
        fatal = fatal || issue.fatal;
        gpus.insert(name);
      }
    }
    if (g->fabric_clique_id.ok()) {
      domains.insert("clique " + std::to_string(g->fabric_clique_id.value) + ", cluster " +
                     (g->fabric_cluster_uuid.value.empty() ? std::string("(none)")
                                                           : g->fabric_cluster_uuid.value));
    }
  }
  if (domains.size() > 1) {
    fatal = true;
    evidence.push_back("the GPUs are in " + std::to_string(domains.size()) +
                       " different NVLink domains: " +
                       join(std::vector<std::string>(domains.begin(), domains.end()), "; "));
  }
  if (evidence.empty()) {
    return all_ok(kDegraded,
                  "The registered GPUs report a healthy fabric, in one NVLink domain.")[0];
  }
  Finding f =
      make_finding(kDegraded, fatal ? Severity::kFail : Severity::kWarn,
                   fatal ? "The NVLink fabric is registered but unhealthy: GPUs cannot reach "
                           "each other over it as configured."
                         : "The NVLink fabric runs with reduced capacity: NVLink traffic "
                           "between the GPUs is slower than it should be.");
  f.gpus.assign(gpus.begin(), gpus.end());
  f.evidence = evidence;
  f.remedy = {"nvidia-smi -q | grep -A12 '^    Fabric'   # the health rows per GPU",
              "journalctl -u nvidia-fabricmanager -b and /var/log/fabricmanager.log: which link "
              "or switch the fabric manager gave up on",
              "gpudoctor logs   # SXid and NVLink Xid events name the failing port"};
  return f;
}

}  // namespace

std::vector<Finding> check_fabric_state(const Snapshot& s, const Config&) {
  FabricFacts ff = fabric_facts(s);
  if (ff.fabric_gpus.empty()) {
    std::string why =
        "No GPU takes part in an NVLink fabric (NVML fabric state NOT_SUPPORTED "
        "or not read).";
    return {not_applicable(kNotRegistered, why)[0], not_applicable(kDegraded, why)[0]};
  }
  return {not_registered(ff), degraded(ff)};
}

}  // namespace gd
