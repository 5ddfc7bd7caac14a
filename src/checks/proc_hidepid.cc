// container.proc-hidepid: /proc mounted with hidepid on a host that starts
// GPU containers. The toolkit's prestart hook (nvidia-container-cli) looks
// the container's init up in /proc, which hidepid hides from it, and every
// GPU container fails to start (NVIDIA/nvidia-docker#645, where disabling
// hidepid fixed it):
//   nvidia-container-cli: container error: stat failed: /proc/4629: no such file or directory
// hidepid=0 (or "off") is the default and hides nothing.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_proc_hidepid(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.proc-hidepid";
  if (s.container.in_container || s.container.host_toolkit.empty()) {
    return not_applicable(kId, "Not a host that starts GPU containers.");
  }
  const std::string& h = s.container.proc_hidepid;
  if (h.empty() || h == "0" || h == "off") {
    return all_ok(kId, "/proc hides no process from the container toolkit's hook.");
  }
  Finding f = make_finding(kId, Severity::kWarn,
                           "/proc is mounted with hidepid=" + h +
                               ", which hides the container's process from the NVIDIA container "
                               "toolkit's hook: GPU containers fail to start (\"stat failed: "
                               "/proc/<pid>: no such file or directory\").");
  f.evidence.push_back("/proc mount option hidepid=" + h);
  f.evidence.push_back("NVIDIA Container Toolkit: " + s.container.host_toolkit);
  f.remedy = {"sudo mount -o remount,hidepid=0 /proc",
              "and drop hidepid from /proc's line in /etc/fstab (or its systemd mount unit)"};
  return {f};
}

}  // namespace gd
