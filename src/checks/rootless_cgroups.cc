// container.rootless-cgroups: a rootless container runtime (podman or Docker
// in a user namespace) whose NVIDIA hook tried to set the container's device
// cgroup, which an unprivileged user may not: the v1 devices.allow file
// refuses the write, the v2 eBPF filter cannot be attached ("failed to add
// device rules"). The toolkit's no-cgroups = true leaves the device rules to
// the runtime (docs/nvidia-facts.md §7.6). Only the hook's own message shows
// it, so the check reads the lines `explain` recorded.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_rootless_cgroups(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.rootless-cgroups";
  std::vector<std::string> cgroup, rootless;
  for (const auto& r : s.reported) {
    if (r.kind == "cgroup-rules-failed") cgroup.push_back(line_ref(r));
    if (r.kind == "rootless-hint") rootless.push_back(line_ref(r));
  }
  if (s.reported.empty()) return {};
  if (cgroup.empty() || rootless.empty()) {
    return not_applicable(kId,
                          "The text shows no rootless runtime's hook failing to set the device "
                          "cgroup.");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "The NVIDIA hook of a rootless container runtime tried to set the "
                           "container's device cgroup, which an unprivileged user may not.");
  f.evidence = rootless;
  f.evidence.insert(f.evidence.end(), cgroup.begin(), cgroup.end());
  f.remedy = {
      "in /etc/nvidia-container-runtime/config.toml, [nvidia-container-cli]: no-cgroups = true "
      "(a rootful runtime on the same host needs false: give the rootless one its own config "
      "through XDG_CONFIG_HOME)",
      "or use CDI: nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml, then "
      "podman run --device nvidia.com/gpu=all ..."};
  return {f};
}

}  // namespace gd
