// The corrected container command (container_command.h).
#include "report/container_command.h"

#include <fmt/format.h>

#include <algorithm>

#include "facts/query.h"
#include "util/text.h"

namespace gd {
namespace {

// What the container needs, as the findings say it.
struct Needs {
  bool gpus = false;          // give it the GPUs (and the device-cgroup rule with them)
  bool capabilities = false;  // NVIDIA_DRIVER_CAPABILITIES=compute,utility
  bool shm = false;           // a /dev/shm NCCL can use
  bool keep_groups = false;   // rootless: keep the user's video group
  bool selinux = false;       // let container_t use the device nodes
};

// The finding ids answered by a flag, and what each asks for.
bool note_need(const std::string& id, Needs* n) {
  if (id == "container.no-gpus" || id == "cgroup.device-denied" ||
      id == "container.driver-not-injected")
    return n->gpus = true;
  if (id == "container.capabilities") return n->capabilities = true;
  if (id == "container.shm-too-small") return n->shm = true;
  if (id == "devnodes.rootless-denied") return n->keep_groups = true;
  if (id == "devnodes.selinux-denied") return n->selinux = true;
  return false;
}

std::vector<std::string> run_command(const std::string& engine, const Needs& n) {
  // Apptainer has one flag for the GPUs and their driver; /dev/shm and the
  // groups are the host's already.
  if (engine == "apptainer") {
    return n.gpus ? std::vector<std::string>{"apptainer exec --nv IMAGE [COMMAND]"}
                  : std::vector<std::string>{};
  }
  std::vector<std::string> flags;
  if (n.gpus) flags.push_back(engine == "podman" ? "--device nvidia.com/gpu=all" : "--gpus all");
  if (n.keep_groups && engine == "podman") flags.push_back("--group-add keep-groups");
  if (n.selinux) flags.push_back("--security-opt label=disable");
  if (n.capabilities) flags.push_back("-e NVIDIA_DRIVER_CAPABILITIES=compute,utility");
  if (n.shm) flags.push_back("--shm-size=1g");
  if (flags.empty()) return {};
  return {engine + " run " + join(flags, " ") + " IMAGE [COMMAND]"};
}

std::vector<std::string> pod_spec(const Needs& n, size_t gpus) {
  std::vector<std::string> y = {"spec:", "  containers:", "  - name: CONTAINER"};
  if (n.gpus) {
    y.insert(y.end(), {"    resources:", "      limits:",
                       fmt::format("        nvidia.com/gpu: {}", std::max<size_t>(gpus, 1))});
  }
  if (n.capabilities) {
    y.insert(y.end(), {"    env:", "    - name: NVIDIA_DRIVER_CAPABILITIES",
                       "      value: compute,utility"});
  }
  if (n.shm) {
    y.insert(y.end(), {"    volumeMounts:", "    - name: dshm", "      mountPath: /dev/shm",
                       "  volumes:", "  - name: dshm", "    emptyDir:", "      medium: Memory"});
  }
  return y.size() > 3 ? y : std::vector<std::string>{};
}

}  // namespace

std::optional<ContainerCommand> container_command(const Report& r) {
  if (r.snapshot == nullptr || !r.snapshot->container.in_container) return std::nullopt;
  Needs needs;
  ContainerCommand c;
  for (const Finding& f : r.findings) {
    if (f.severity != Severity::kFail && f.severity != Severity::kWarn) continue;
    if (note_need(f.id, &needs) &&
        std::find(c.fixes.begin(), c.fixes.end(), f.id) == c.fixes.end()) {
      c.fixes.push_back(f.id);
    }
  }
  const std::string& rt = r.snapshot->container.runtime;
  c.engine = rt == "podman" || rt == "kubernetes" || rt == "apptainer" ? rt : "docker";
  // What this engine's command cannot say is left to the findings' own
  // remedies: keep-groups is podman's (with crun), a pod's SELinux type
  // is the cluster's policy.
  auto unsaid = [&](const std::string& id) {
    if (id == "devnodes.rootless-denied") return c.engine != "podman";
    if (c.engine == "apptainer") {
      return id != "container.driver-not-injected" && id != "container.no-gpus";
    }
    if (id == "devnodes.selinux-denied") return c.engine == "kubernetes";
    return false;
  };
  std::erase_if(c.fixes, unsaid);
  c.lines = c.engine == "kubernetes" ? pod_spec(needs, pci_gpus(*r.snapshot).size())
                                     : run_command(c.engine, needs);
  if (c.lines.empty()) return std::nullopt;
  return c;
}

}  // namespace gd
