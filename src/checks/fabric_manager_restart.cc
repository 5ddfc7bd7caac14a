// fabric-manager.restarted-without-reset, link 4 of the fabric chain
// (docs/fabric.md). On HGX/DGX H100 and later the fabric manager may be
// restarted only with the GPUs reset in between: stop the CUDA programs,
// stop the fabric manager, `nvidia-smi -r`, start it again (Fabric Manager
// User Guide, "Initializing NVSwitch and NVLink"). Skipping the reset
// leaves stale fabric state behind: NCCL's NVLS then fails with "Cuda
// failure 1 'invalid argument'" (NVIDIA/nccl#1488).
//
// A restart shows in this boot's log as the start script's stop line
// followed by a fabric manager that runs again, or as two successful
// starts (NVIDIA/nvtrust#128):
//   nvidia-fabricmanager-start.sh[20411]: Stopped "Nvidia Fabric Manager"
//   nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to route ...
// A GPU reset leaves no line gpudoctor can rely on, so the finding says
// what it cannot see.
#include <algorithm>

#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/fabric.h"
#include "util/text.h"

namespace gd {
namespace {

int occurrences(const std::vector<const KernelEvent*>& events) {
  int n = 0;
  for (const KernelEvent* e : events) n = std::max(n, e->count);  // journal and log tell the same
  return n;
}

}  // namespace

std::vector<Finding> check_fabric_manager_restart(const Snapshot& s, const Config&) {
  constexpr const char* kId = "fabric-manager.restarted-without-reset";
  FabricFacts ff = fabric_facts(s);
  if (ff.kind != FabricKind::kNvSwitch && ff.kind != FabricKind::kNvLink5) {
    return not_applicable(kId, "No NVSwitch fabric managed from this host.");
  }
  bool running = program_running(s, "nv-fabricmanager");
  auto stopped = fabric_manager_events(s, "stopped");
  auto configured = fabric_manager_events(s, "configured");
  bool restarted = (running && !stopped.empty()) || occurrences(configured) >= 2;
  if (!restarted) {
    return all_ok(kId, "No restart of the fabric manager in this boot's log.");
  }
  std::vector<std::string> outside;
  for (const NvmlGpu* g : gpus_outside_fabric(ff)) outside.push_back(fabric_gpu_name(*g));
  // With every GPU back in the fabric the reset may have been done; a
  // restart is worth a warning still, as NVLS fails only when used.
  Finding f = make_finding(kId, outside.empty() ? Severity::kWarn : Severity::kFail,
                           "The fabric manager was restarted in this boot; unless the GPUs were "
                           "reset in between, the NVLink fabric keeps stale state and NVLink "
                           "multicast (NCCL NVLS) fails.");
  f.gpus = outside;
  for (const KernelEvent* e : stopped) f.evidence.push_back(event_evidence(s, *e));
  for (const KernelEvent* e : configured) f.evidence.push_back(event_evidence(s, *e));
  if (!outside.empty()) f.evidence.push_back("not in the fabric: " + join(outside, ", "));
  f.evidence.push_back("gpudoctor cannot see whether the GPUs were reset in between");
  f.remedy = {"Stop every CUDA program and GPU service (DCGM, the exporter's probes)",
              "sudo systemctl stop nvidia-fabricmanager",
              "sudo nvidia-smi -r   # reset the GPUs and NVSwitches",
              "sudo systemctl start nvidia-fabricmanager"};
  return {f};
}

}  // namespace gd
