// devnodes.char-links-missing: on a host that starts GPU containers, every
// NVIDIA device node needs its /dev/char/<major>:<minor> link. When systemd
// manages a container's cgroup, runc hands it the device rules as
// /dev/char paths and skips those that do not exist (opencontainers/runc#3708),
// so a `systemctl daemon-reload` (a package upgrade is enough) rewrites
// the cgroup without the GPUs, and NVML in the running containers answers
// "Failed to initialize NVML: Unknown Error" until they are recreated
// (NVIDIA's notice, NVIDIA/nvidia-docker#1730; the workarounds in #1671;
// reports in NVIDIA/nvidia-container-toolkit#48 and #1227). nvidia-modprobe
// creates the nodes without registering them, so udev makes no link.
#include "checks/checks.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {

std::vector<Finding> check_char_links(const Snapshot& s, const Config&) {
  constexpr const char* kId = "devnodes.char-links-missing";
  if (s.container.in_container) {
    return not_applicable(kId, "Inside a container: the links matter on the host that runs it.");
  }
  if (s.container.host_toolkit.empty()) {
    return not_applicable(kId, "No NVIDIA Container Toolkit here: no GPU containers to lose.");
  }
  std::vector<std::string> missing;
  bool looked = false;
  for (const DevNode& n : s.devnodes) {
    if (n.char_link == -1) continue;
    looked = true;
    if (n.char_link == 0) {
      missing.push_back(n.path + " (" + std::to_string(n.major) + ":" + std::to_string(n.minor) +
                        ")");
    }
  }
  if (!looked) return not_applicable(kId, "No /dev/char, or no NVIDIA device node, to compare.");
  if (missing.empty()) {
    return all_ok(kId, "Every NVIDIA device node has its /dev/char link.");
  }
  Finding f =
      make_finding(kId, Severity::kWarn,
                   "NVIDIA device nodes have no /dev/char link, so a systemctl daemon-reload "
                   "takes the GPUs from running containers (\"Failed to initialize NVML: "
                   "Unknown Error\") until they are recreated.");
  f.evidence.push_back("NVIDIA Container Toolkit: " + s.container.host_toolkit);
  f.evidence.push_back("no /dev/char link for " + join(missing, ", "));
  f.remedy = {"sudo nvidia-ctk system create-dev-char-symlinks --create-all",
              "At every driver load (NVIDIA/nvidia-docker#1671), in "
              "/lib/udev/rules.d/71-nvidia-dev-char.rules: ACTION==\"add\", "
              "DEVPATH==\"/bus/pci/drivers/nvidia\", RUN+=\"/usr/bin/nvidia-ctk system "
              "create-dev-char-symlinks --create-all\"",
              "Or let Docker manage cgroups itself: \"exec-opts\": "
              "[\"native.cgroupdriver=cgroupfs\"] in /etc/docker/daemon.json"};
  return {f};
}

}  // namespace gd
