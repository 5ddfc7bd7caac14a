// container.no-gpus: inside a container that was given no GPU: no
// /dev/nvidiaN node, or NVIDIA_VISIBLE_DEVICES says none/void/empty
// (nvidia-facts.md §6.3).
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
std::vector<Finding> check_container_gpus(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.no-gpus";
  if (!s.container.in_container) return not_applicable(kId, "Not running in a container.");
  // A container sees the host's PCI bus (sysfs) and modules: with neither an
  // NVIDIA GPU nor the driver there, the host has no GPU to give.
  if (pci_gpus(s).empty() && !nvidia_driver_loaded(s)) {
    return not_applicable(kId,
                          "The host has no NVIDIA GPU or driver either (see "
                          "driver.not-loaded), so no container flag can add one.");
  }
  std::vector<std::string> nodes;
  for (const auto& n : s.devnodes) {
    if (n.exists && is_gpu_node(n.path)) nodes.push_back(n.path);
  }
  const std::string* nvd = env_var(s, "NVIDIA_VISIBLE_DEVICES");
  bool none_requested = nvd != nullptr && (*nvd == "none" || *nvd == "void" || nvd->empty());
  if (!nodes.empty() && !none_requested) {
    return all_ok(kId, "This container has " + std::to_string(nodes.size()) +
                           " GPU device node(s): " + join(nodes, ", ") + ".");
  }
  // Nodes present despite "none": a privileged container or --device gave
  // them, so CUDA may still work; say so without failing.
  Finding f = nodes.empty()
                  ? make_finding(kId, Severity::kFail,
                                 "This container was started without GPUs, so CUDA sees none.")
                  : make_finding(kId, Severity::kWarn,
                                 "NVIDIA_VISIBLE_DEVICES asks for no GPUs, yet GPU nodes are "
                                 "visible (privileged container or --device); driver libraries "
                                 "may be missing.");
  std::string runtime = s.container.runtime.empty() ? std::string("unknown") : s.container.runtime;
  f.evidence.push_back("container: " + runtime +
                       (s.container.evidence.empty() ? "" : " (" + s.container.evidence + ")"));
  f.evidence.push_back(nodes.empty() ? "/dev/nvidia[0-9]*: none"
                                     : "GPU nodes: " + join(nodes, ", "));
  f.evidence.push_back(nvd == nullptr ? "NVIDIA_VISIBLE_DEVICES: unset"
                                      : "NVIDIA_VISIBLE_DEVICES=" + *nvd);
  if (runtime == "kubernetes") {
    f.remedy.push_back(
        "Kubernetes: request GPUs in the pod spec: resources: limits: "
        "nvidia.com/gpu: 1 (needs the NVIDIA device plugin or GPU operator).");
  }
  f.remedy.push_back("docker run --gpus all IMAGE ...");
  f.remedy.push_back("or: docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all IMAGE ...");
  f.remedy.push_back(
      "or with CDI: docker run --device nvidia.com/gpu=all IMAGE ... (podman "
      "run --device nvidia.com/gpu=all ...)");
  if (runtime != "kubernetes") {
    f.remedy.push_back("Kubernetes: resources: limits: nvidia.com/gpu: 1");
  }
  return {f};
}

}  // namespace gd
