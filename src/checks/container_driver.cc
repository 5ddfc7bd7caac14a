// container.driver-mismatch: driver libraries inside the container (baked
// into the image instead of mounted from the host) whose version differs
// from the host's kernel module.
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_container_driver(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.driver-mismatch";
  if (!s.container.in_container) return not_applicable(kId, "Not running in a container.");
  if (s.driver.version.empty()) {
    return not_applicable(kId,
                          "The host's kernel module version is unknown (driver not "
                          "loaded).");
  }
  std::vector<std::string> bad;
  int compared = 0;
  for (const auto& [path, version] : s.container.driver_libraries) {
    // cuda-compat libraries differ on purpose; cuda.compat-* judges them.
    if (contains(path, "/compat/") || version.empty()) continue;
    ++compared;
    if (version != s.driver.version) bad.push_back(path + " is version " + version);
  }
  if (compared == 0) {
    return not_applicable(kId,
                          "No versioned NVIDIA driver library is visible in this "
                          "container.");
  }
  if (bad.empty()) {
    return all_ok(kId, "The " + std::to_string(compared) +
                           " driver libraries in this container match the host module " +
                           s.driver.version + ".");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "The container's NVIDIA driver libraries are a different version than "
                           "the host's kernel module " +
                               s.driver.version + ".");
  f.evidence.push_back("host kernel module: " + s.driver.version);
  for (auto& b : bad) f.evidence.push_back(b);
  f.remedy = {
      "Do not install the NVIDIA driver in the image (remove nvidia-driver-*/libnvidia-compute-* "
      "from the Dockerfile); the container toolkit mounts the host's libraries: docker run "
      "--gpus all IMAGE ...",
      "If the host driver was upgraded without a reboot, reboot the host so module and "
      "libraries agree."};
  return {f};
}

}  // namespace gd
