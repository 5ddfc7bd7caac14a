// fabric.imex-channels-missing, link 5 of the fabric chain
// (docs/fabric.md). Multi-node NVLink (GB200/GB300 NVL racks) shares
// memory across nodes through fabric handles (CU_MEM_HANDLE_TYPE_FABRIC),
// which need an IMEX channel: the driver registers the character device
// nvidia-caps-imex-channels (242 in /proc/devices on the recorded H200)
// but creates no channel itself, and "Failure to do so will result in
// dependent CUDA APIs failing with an insufficient permission error"
// (IMEX guide, https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/imexchannels.html).
// cuMemCreate then fails with "operation not permitted" (microsoft/mscclpp#467).
// Channels do not survive a reboot, unless the module creates channel0 at
// load (NVreg_CreateImexChannel0=1).
#include "checks/checks.h"
#include "checks/util.h"
#include "facts/fabric.h"

namespace gd {

std::vector<Finding> check_imex_channels(const Snapshot& s, const Config&) {
  constexpr const char* kId = "fabric.imex-channels-missing";
  constexpr const char* kDevice = "nvidia-caps-imex-channels";
  FabricFacts ff = fabric_facts(s);
  bool imex = program_running(s, "nvidia-imex");
  bool used = ff.kind == FabricKind::kMultiNode || s.fabric.imex_configured || imex;
  if (!used) {
    std::string why =
        "No multi-node NVLink here (no IMEX configuration, no nvidia-imex, no NVLink domain "
        "without local NVSwitches).";
    if (const FieldGap* g = field_gap(s, "driver.char_majors")) {
      why += " /proc/devices was not read (" + g->reason + ").";
    }
    return not_applicable(kId, why);
  }
  auto major = s.driver.char_majors.find(kDevice);
  auto param = s.driver.params.find("CreateImexChannel0");
  bool at_load = param != s.driver.params.end() && param->second == "1";
  if (!s.fabric.imex_channels.empty() || at_load) {
    return all_ok(kId,
                  !s.fabric.imex_channels.empty()
                      ? "IMEX channel " + s.fabric.imex_channels.front() + " exists."
                      : "The driver creates IMEX channel 0 at load (NVreg_CreateImexChannel0=1).");
  }
  Finding f = make_finding(kId, Severity::kFail,
                           "This multi-node NVLink node has no IMEX channel, so CUDA's fabric "
                           "memory (cuMemCreate with fabric handles, used by NCCL across the "
                           "NVLink domain) fails with \"operation not permitted\".");
  f.evidence.push_back(ff.kind == FabricKind::kMultiNode ? ff.why
                       : imex                            ? std::string("nvidia-imex: running")
                              : "/etc/nvidia-imex/nodes_config.cfg exists");
  f.evidence.push_back(
      major == s.driver.char_majors.end()
          ? std::string("/proc/devices: no ") + kDevice + " (the driver predates IMEX channels)"
          : std::string("/proc/devices: ") + std::to_string(major->second) + " " + kDevice);
  f.evidence.push_back(s.fabric.imex_dir ? "/dev/nvidia-caps-imex-channels: no channel in it"
                                         : "/dev/nvidia-caps-imex-channels: missing");
  f.evidence.push_back(param == s.driver.params.end()
                           ? "NVreg_CreateImexChannel0: not in /proc/driver/nvidia/params"
                           : "NVreg_CreateImexChannel0: " + param->second);
  std::string m = major == s.driver.char_majors.end() ? "<major>" : std::to_string(major->second);
  f.remedy = {
      "sudo mkdir -p /dev/nvidia-caps-imex-channels && sudo mknod "
      "/dev/nvidia-caps-imex-channels/channel0 c " +
          m + " 0   # now; gone after a reboot",
      "echo 'options nvidia NVreg_CreateImexChannel0=1' | sudo tee "
      "/etc/modprobe.d/nvidia-imex.conf   # channel 0 at every module load",
      "In a container: the runtime must pass the channel in (the host needs it first)."};
  return {f};
}

}  // namespace gd
