// container.no-cgroups: the NVIDIA Container Toolkit's config.toml says
// no-cgroups = true on a host where a rootful engine (dockerd, containerd,
// CRI-O) starts GPU containers. The hook then sets up no device-cgroup rule
// for the GPUs, and NVML in such a container fails with "Failed to
// initialize NVML: Unknown Error". The setting is meant for rootless
// containers, which cannot write a device cgroup (the toolkit's maintainers
// in NVIDIA/nvidia-container-toolkit#381, where setting it back to false
// fixed it; NVIDIA/nvidia-docker#1608).
#include "checks/checks.h"
#include "checks/util.h"
#include "facts/query.h"
#include "util/text.h"

namespace gd {

std::vector<Finding> check_container_toolkit(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.no-cgroups";
  constexpr const char* kConfig = "/etc/nvidia-container-runtime/config.toml";
  const std::string& v = s.container.toolkit_no_cgroups;
  if (s.container.in_container || v.empty()) {
    return not_applicable(kId, "No NVIDIA Container Toolkit config sets no-cgroups here.");
  }
  if (v != "true") return all_ok(kId, std::string("no-cgroups = ") + v + " in " + kConfig + ".");
  std::vector<std::string> rootful;
  for (const char* engine : {"dockerd", "containerd", "crio"}) {
    if (program_running(s, engine)) rootful.emplace_back(engine);
  }
  if (rootful.empty() || program_running(s, "rootlesskit")) {
    return all_ok(kId, std::string("no-cgroups = true in ") + kConfig +
                           ", as rootless containers need; no rootful engine runs here.");
  }
  Finding f = make_finding(
      kId, Severity::kWarn,
      std::string("no-cgroups = true in ") + kConfig + " while " + join(rootful, ", ") +
          (rootful.size() == 1 ? " starts" : " start") +
          " containers as root: their GPU devices get no device-cgroup rule, and NVML in "
          "them fails with \"Failed to initialize NVML: Unknown Error\". The setting is only for "
          "rootless containers.");
  f.evidence.push_back(std::string(kConfig) + ": [nvidia-container-cli] no-cgroups = true");
  for (const std::string& e : rootful) f.evidence.push_back(e + " is running (rootful)");
  f.remedy = {
      std::string("sudo sed -i 's/^no-cgroups = true/no-cgroups = false/' ") + kConfig,
      "recreate the GPU containers (docker run --gpus all ... again): the rule is set when a "
      "container starts"};
  return {f};
}

}  // namespace gd
