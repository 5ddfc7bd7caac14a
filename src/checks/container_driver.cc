// container.driver-mismatch: driver libraries inside the container (baked
// into the image instead of mounted from the host) whose version differs
// from the host's kernel module.
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_container_driver(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.driver-mismatch";
  if (!s.container.in_container) return not_applicable(kId, "Not running in a container.");
  std::string from;
  std::string module = module_version(s, &from);
  if (module.empty()) {
    const FieldGap* g = field_gap(s, "driver.version");
    return not_applicable(kId, "The host's kernel module version is unknown (" +
                                   (g != nullptr ? "driver.version: " + g->reason
                                                 : std::string("driver not loaded")) +
                                   ").");
  }
  std::string via = from.starts_with("NVML") ? " (from " + from + ")" : "";
  // Each library's version against the host module's, numerically
  // (560.35.03 is 560.35.3), stated in the finding either way.
  std::vector<Comparison> compared;
  for (const auto& [path, version] : s.container.driver_libraries) {
    // cuda-compat libraries differ on purpose; cuda.compat-* judges them.
    if (contains(path, "/compat/") || version.empty()) continue;
    compared.push_back(compare_versions(path + " version vs the host kernel module's" + via,
                                        version, "==", module));
  }
  if (compared.empty()) {
    return not_applicable(kId,
                          "No versioned NVIDIA driver library is visible in this "
                          "container.");
  }
  if (all_met(compared)) {
    Finding ok = make_finding(kId, Severity::kOk,
                              "The " + std::to_string(compared.size()) +
                                  " driver libraries in this container match the host module " +
                                  module + ".");
    for (auto& c : compared) add_comparison(&ok, std::move(c));
    return {ok};
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "The container's NVIDIA driver libraries are a different version than "
                           "the host's kernel module " +
                               module + ".");
  f.evidence.push_back("host kernel module: " + module + via);
  for (auto& c : compared) add_comparison(&f, std::move(c));
  f.remedy = {
      "Do not install the NVIDIA driver in the image (remove nvidia-driver-*/libnvidia-compute-* "
      "from the Dockerfile); the container toolkit mounts the host's libraries: docker run "
      "--gpus all IMAGE ...",
      "If the host driver was upgraded without a reboot, reboot the host so module and "
      "libraries agree."};
  return {f};
}

}  // namespace gd
