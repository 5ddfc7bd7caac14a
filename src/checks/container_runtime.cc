// container.runtime-not-configured / container.unknown-device: the container
// never started because the runtime could not pass GPUs in. Only the runtime's
// own message shows it (facts §6.3), so the check reads the lines `explain`
// recorded; a live snapshot has none and gets no finding.
//
//   docker: Error response from daemon: could not select device driver "" with capabilities:
//     [[gpu]].
//   nvidia-container-cli: device error: 3: unknown device: unknown.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_container_runtime(const Snapshot& s, const Config&) {
  std::vector<std::string> no_runtime, unknown;
  for (const auto& r : s.reported) {
    if (r.kind != "container-runtime") continue;
    std::string ref = line_ref(r);
    if (r.text.rfind("could not select device driver", 0) == 0) no_runtime.push_back(ref);
    if (r.text.rfind("unknown device", 0) == 0) unknown.push_back(ref);
  }
  std::vector<Finding> out;
  if (!no_runtime.empty()) {
    Finding f = make_finding(
        "container.runtime-not-configured", Severity::kFail,
        "Docker has no device driver for --gpus: the NVIDIA Container Toolkit is not installed "
        "or Docker was not configured to use it.");
    f.evidence = no_runtime;
    f.remedy = {"Install the NVIDIA Container Toolkit (package nvidia-container-toolkit)",
                "sudo nvidia-ctk runtime configure --runtime=docker",
                "sudo systemctl restart docker",
                "docker run --rm --gpus all ubuntu nvidia-smi   # must list the GPUs"};
    out.push_back(std::move(f));
  }
  if (!unknown.empty()) {
    Finding f = make_finding(
        "container.unknown-device", Severity::kFail,
        "The container asks for a GPU the host does not have (NVIDIA_VISIBLE_DEVICES or --gpus "
        "names an index or UUID that does not exist there).");
    f.evidence = unknown;
    f.remedy = {"nvidia-smi -L   # on the host: the indices and UUIDs that exist",
                "docker run --gpus '\"device=0,1\"' ...   # or NVIDIA_VISIBLE_DEVICES=<existing "
                "index or UUID>"};
    out.push_back(std::move(f));
  }
  if (out.empty() && !s.reported.empty()) {
    // Not shown is not absent: other lines may still point at the runtime.
    out.push_back(make_finding("container.runtime-not-configured", Severity::kNotApplicable,
                               "The text reports no container runtime error about GPUs."));
  }
  return out;
}

}  // namespace gd
