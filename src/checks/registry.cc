// The one table of checks. Order here is the order checks run and are
// listed; the report ranks findings separately (catalog/findings.cc).
//
// needs: the snapshot sources (probe names, plus "reported" for the lines
// `explain` read) whose content decides a check's result. A source a check
// only quotes as extra evidence is not listed: the check still answers
// correctly without it. In a live snapshot every source is observed, so needs
// change nothing there; in `explain` a check with an unobserved need does not
// run, and the causes it would have decided become "possible causes".
//
// kLinuxDriver: the check reads the Linux kernel driver's traces; under WSL
// it answers n/a (CheckEntry::linux_driver).
#include "checks/checks.h"

namespace gd {
namespace {
constexpr bool kLinuxDriver = true;
}  // namespace

const std::vector<CheckEntry>& all_checks() {
  // clang-format off
  static const std::vector<CheckEntry> kChecks = {
    {"driver-loaded", "the NVIDIA kernel driver is loaded", {"driver.not-loaded"}, check_driver_loaded, {"driver", "pci"}, kLinuxDriver},
    {"nouveau", "nouveau does not hold the GPUs", {"driver.nouveau"}, check_nouveau, {"kernel-log"}, kLinuxDriver},  // the driver and bus, or in explain the log alone
    {"module-load", "the NVIDIA kernel module loaded and bound every GPU", {"driver.module-load-failed"}, check_module_load_failed, {"kernel-log"}, kLinuxDriver},  // the driver, or in explain the log alone
    {"library-mismatch", "user-space driver libraries match the kernel module", {"driver.library-mismatch"}, check_library_mismatch, {"driver", "nvml", "cuda"}, kLinuxDriver},
    {"module-built", "an NVIDIA kernel module is built for the running kernel", {"driver.module-missing-for-kernel"}, check_module_built, {"kernel-log"}, kLinuxDriver},  // the driver's files, or in explain the log alone
    {"gpu-supported", "the driver branch supports every GPU", {"driver.gpu-unsupported"}, check_gpu_unsupported, {"kernel-log"}, kLinuxDriver},  // the driver and bus, or in explain the log alone
    {"driver-new-enough", "the driver is new enough for the CUDA runtime in use", {"driver.too-old-for-cuda"}, check_too_old_for_cuda, {"driver", "pci", "nvml", "cuda"}},
    {"stub-library", "the real libcuda is loaded, not the toolkit stub", {"cuda.stub-library"}, check_stub_library, {"cuda", "env"}},
    {"forward-compat", "a cuda-compat package fits the GPUs and the driver", {"cuda.compat-unsupported", "cuda.compat-mismatch"}, check_compat, {"driver", "pci", "cuda", "env"}},
    {"uvm", "nvidia_uvm is loaded and /dev/nvidia-uvm exists", {"uvm.missing"}, check_uvm, {"driver", "devnodes"}, kLinuxDriver},
    {"uvm-hmm", "nvidia_uvm HMM does not break CUDA on this kernel", {"uvm.hmm"}, check_uvm_hmm, {"driver", "devnodes", "cuda"}, kLinuxDriver},
    {"after-suspend", "CUDA is not broken by a suspend/resume", {"driver.after-suspend"}, check_after_suspend, {"driver", "cuda"}, kLinuxDriver},
    {"wsl", "under WSL, Windows gives the GPU and its libraries to Linux", {"wsl.no-gpu-support", "wsl.libs-missing", "wsl.libs-shadowed"}, check_wsl, {"driver", "cuda"}},
    {"devnodes", "/dev/nvidia* nodes exist and this user can open them", {"devnodes.missing", "devnodes.permission"}, check_devnodes, {"driver", "devnodes", "limits", "container"}, kLinuxDriver},
    {"driver-regression", "the driver is no build with a known regression", {"driver.known-regression"}, check_driver_regression, {"nvml"}},  // in explain, a version from nvidia-smi or prose
    {"char-links", "a host that runs GPU containers has /dev/char links to the NVIDIA nodes", {"devnodes.char-links-missing"}, check_char_links, {"devnodes", "container"}, kLinuxDriver},
    {"proc-hidepid", "a host that runs GPU containers does not hide /proc from the toolkit's hook", {"container.proc-hidepid"}, check_proc_hidepid, {"container"}},
    {"driver-injected", "a container's runtime brought the NVIDIA driver's libraries in", {"container.driver-not-injected"}, check_driver_injected, {"container", "env", "cuda"}},
    {"container-toolkit", "the container toolkit's no-cgroups suits the engines that run here", {"container.no-cgroups"}, check_container_toolkit, {"container", "services"}},
    {"cdi-specs", "the NVIDIA CDI specs match this machine's driver and GPUs", {"container.cdi-stale"}, check_cdi_specs, {"container", "devnodes", "driver"}},
    {"gpu-interposer", "no GPU-sharing layer is preloaded, or it loads and its limits are known", {"container.gpu-interposer", "container.gpu-interposer-missing"}, check_gpu_interposer, {"container", "env"}},
    {"devnode-security", "no security module or user namespace refuses the GPU nodes", {"devnodes.selinux-denied", "devnodes.rootless-denied"}, check_devnode_security, {"devnodes", "limits", "container"}, kLinuxDriver},
    // The fabric-readiness chain, link by link (docs/fabric.md).
    {"fabric-switches", "the NVSwitches the NVLink fabric needs are on the bus and driven", {"fabric.switch-missing"}, check_fabric_switches, {"pci", "devnodes", "nvml"}},
    {"nvlink-network", "an NVLink5 system's management bridge has mlx5_ib, ib_umad and NVLSM", {"fabric.ib-modules-missing", "fabric.nvlsm-not-running"}, check_nvlink_network, {"fabric", "driver", "services", "nvml"}},
    {"fabric-manager", "NVSwitch systems run an installed, enabled fabric manager of the driver's version", {"fabric-manager.not-installed", "fabric-manager.version-mismatch", "fabric-manager.not-running", "fabric-manager.not-enabled"}, check_fabric_manager, {"pci", "driver", "services", "fabric", "devnodes", "nvml", "cuda"}},
    {"fabric-manager-restart", "the fabric manager was not restarted without a GPU reset", {"fabric-manager.restarted-without-reset"}, check_fabric_manager_restart, {"pci", "services", "fabric", "nvml", "kernel-log"}},
    {"imex-channels", "multi-node NVLink nodes have an IMEX channel", {"fabric.imex-channels-missing"}, check_imex_channels, {"driver", "fabric", "services", "nvml"}},
    {"fabric-state", "every GPU joined the NVLink fabric, healthy and in one domain", {"fabric.not-registered", "fabric.degraded"}, check_fabric_state, {"nvml"}},
    {"container-gpus", "a container was given GPUs", {"container.no-gpus"}, check_container_gpus, {"container", "devnodes", "pci", "driver", "env"}},
    {"container-capabilities", "NVIDIA_DRIVER_CAPABILITIES includes compute and utility", {"container.capabilities"}, check_container_caps, {"container", "env", "cuda"}},
    {"container-driver", "container driver libraries match the host module", {"container.driver-mismatch"}, check_container_driver, {"container", "driver"}},
    {"cgroup-devices", "the device cgroup allows the GPU nodes", {"cgroup.device-denied"}, check_cgroup_devices, {"container", "devnodes", "driver", "limits"}},
    {"visible-devices", "CUDA_VISIBLE_DEVICES is valid and leaves GPUs visible", {"visible-devices.invalid", "visible-devices.hides-all"}, check_visible_devices, {"env"}},
    {"device-ordinal", "the job asks for no more GPUs than it sees", {"visible-devices.ordinal-out-of-range"}, check_device_ordinal, {"env"}},
    {"address-space", "no address-space limit too small for CUDA", {"memory.address-space-limit"}, check_address_space, {"limits"}},
    {"mps", "an expected MPS control daemon is reachable", {"mps.unreachable"}, check_mps, {"env", "services", "container", "cuda"}},
    {"compute-mode", "no exclusive-process GPU is already taken", {"compute-mode.exclusive"}, check_compute_mode, {"nvml", "cuda"}},
    {"mig", "MIG-enabled GPUs have instances", {"mig.no-instances"}, check_mig, {"nvml", "cuda", "env"}},
    {"memory-held", "no other process holds most of a GPU's memory", {"memory.held-by-other-process"}, check_memory_held, {"nvml", "limits"}},
    {"orphans", "no process holds a GPU after its Slurm job or pod ended", {"process.orphan"}, check_orphans, {"nvml", "workload"}},
    {"nvml-init", "NVML starts", {"nvml.init-failed", "nvml.init-hang"}, check_nvml_init, {"nvml", "driver", "container"}},
    {"cuda-init", "CUDA starts and opens a context on every idle GPU", {"cuda.init-failed", "cuda.init-hang"}, check_cuda_init, {"cuda"}},
    {"gpu-count", "every GPU on the PCI bus is usable by NVML and CUDA, and they list no more", {"gpu.missing"}, check_gpu_missing, {"pci", "nvml", "cuda", "container", "env"}},
    {"device-order", "CUDA's default order matches nvidia-smi's", {"device-order.mismatch"}, check_device_order, {"env", "nvml", "cuda", "pci"}},
    {"persistence-mode", "persistence mode is on", {"persistence-mode.off"}, check_persistence, {"nvml", "services"}},
    {"shm-size", "/dev/shm is as large as NCCL asks (1 GiB)", {"container.shm-too-small"}, check_shm_size, {"container"}},
    {"kernel-log", "the kernel log can be read", {"kernel-log.unreadable"}, check_kernel_log, {"kernel-log"}},
    {"xid", "no Xid error in the kernel log's window", {"xid.NN"}, check_xid, {"kernel-log"}},
    {"fallen-off-bus", "no GPU has fallen off the bus", {"gpu.fallen-off-bus"}, check_fallen_off_bus, {"kernel-log"}},
    {"reset-required", "no GPU needs a reset", {"gpu.reset-required"}, check_reset_required, {"kernel-log"}},
    {"pcie-errors", "no PCIe AER errors on a GPU's link", {"pcie.errors"}, check_pcie_errors, {"kernel-log"}},
    {"rootless-cgroups", "no rootless runtime's NVIDIA hook failed on the device cgroup", {"container.rootless-cgroups"}, check_rootless_cgroups, {"reported"}},
    {"program-arch", "the program carries GPU code for this GPU's architecture", {"cuda.arch-not-in-build"}, check_program_arch, {"reported"}},
    {"fork-after-init", "no CUDA use after fork was reported", {"cuda.fork-after-init"}, check_fork_after_init, {"reported"}},
    {"container-runtime", "the container runtime could pass the GPUs in", {"container.runtime-not-configured", "container.unknown-device"}, check_container_runtime, {"reported"}},
    {"thermal", "GPU and memory temperatures are below their slowdown thresholds", {"thermal.high"}, check_thermal, {"nvml"}},
    {"power", "no GPU is slowed by the hardware power brake or a lowered power limit", {"power.throttled"}, check_power, {"nvml"}},
    {"clocks", "no GPU's clocks are slowed by hardware or thermal events", {"clocks.throttled"}, check_clocks, {"nvml"}},
    {"ecc", "no uncorrectable ECC errors or failed row remaps", {"ecc.uncorrectable"}, check_ecc, {"nvml"}},
    {"rows-pending", "no row remap or page retirement waits for a GPU reset", {"ecc.rows-pending"}, check_rows_pending, {"nvml"}},
    {"pcie-link", "every GPU's PCIe link runs at the width its slot allows (and the speed, under load)", {"pcie.link-degraded"}, check_pcie_link, {"pci"}},
    {"p2p", "no PCIe ACS redirect between GPUs that share a switch (with the IOMMU, it breaks peer-to-peer)", {"p2p.blocked"}, check_p2p, {"pci"}},
    {"folk-remedies", "what the usual environment fixes really do here", {"advice.device-order", "advice.nvml-based-check", "advice.visible-devices"}, check_folk_remedies, {"env", "cuda", "nvml"}},
  };
  // clang-format on
  return kChecks;
}

}  // namespace gd
