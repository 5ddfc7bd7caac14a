// container.capabilities: NVIDIA_DRIVER_CAPABILITIES decides which driver
// libraries the NVIDIA container toolkit mounts: `compute` brings libcuda,
// `utility` brings NVML/nvidia-smi (nvidia-facts.md §6.3). Unset means the
// toolkit default "utility,compute".
#include <algorithm>

#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
std::vector<Finding> check_container_caps(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.capabilities";
  if (!s.container.in_container) return not_applicable(kId, "Not running in a container.");
  const std::string* caps = env_var(s, "NVIDIA_DRIVER_CAPABILITIES");
  if (caps == nullptr) {
    return all_ok(kId,
                  "NVIDIA_DRIVER_CAPABILITIES is unset: the container toolkit's default "
                  "(utility,compute) applies.");
  }
  std::vector<std::string> list = driver_capability_list(*caps);
  auto has = [&](const char* c) {
    return std::find(list.begin(), list.end(), "all") != list.end() ||
           std::find(list.begin(), list.end(), c) != list.end();
  };
  bool compute = has("compute");
  bool utility = has("utility");
  if (compute && utility) {
    return all_ok(kId, "NVIDIA_DRIVER_CAPABILITIES=" + *caps + " includes compute and utility.");
  }
  std::vector<std::string> lacking;
  if (!compute) lacking.push_back("compute (libcuda: CUDA)");
  if (!utility) lacking.push_back("utility (NVML, nvidia-smi)");
  Finding f = make_finding(
      kId, compute ? Severity::kWarn : Severity::kFail,
      compute ? "NVIDIA_DRIVER_CAPABILITIES lacks utility, so nvidia-smi and NVML are missing in "
                "this container (CUDA itself can work)."
              : "NVIDIA_DRIVER_CAPABILITIES lacks compute, so the container has no libcuda and "
                "CUDA cannot start.");
  f.evidence.push_back("NVIDIA_DRIVER_CAPABILITIES=" + *caps);
  f.evidence.push_back("lacks: " + join(lacking, ", "));
  if (!compute) {
    if (const CudaRun* r = user_cuda_run(s); r != nullptr && !r->dlopen_error.empty()) {
      f.evidence.push_back("CUDA: " + r->dlopen_error);
    }
  }
  std::vector<std::string> fixed = list;
  if (!compute) fixed.push_back("compute");
  if (!utility) fixed.push_back("utility");
  std::string value = join(fixed, ",");
  f.remedy.push_back("docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=" + value + " IMAGE ...");
  f.remedy.push_back("or in the Dockerfile / pod spec: NVIDIA_DRIVER_CAPABILITIES=" + value +
                     " (compute,utility is the usual minimum)");
  return {f};
}

}  // namespace gd
