// The one table of checks. Order here is the order checks run and are
// listed; the report ranks findings separately (catalog/findings.cc).
#include "checks/checks.h"

namespace gd {

const std::vector<CheckEntry>& all_checks() {
  // clang-format off
  static const std::vector<CheckEntry> kChecks = {
    {"driver-loaded", "the NVIDIA kernel driver is loaded", {"driver.not-loaded"}, check_driver_loaded},
    {"nouveau", "nouveau does not hold the GPUs", {"driver.nouveau"}, check_nouveau},
    {"module-load", "the NVIDIA kernel module loaded and bound every GPU", {"driver.module-load-failed"}, check_module_load_failed},
    {"library-mismatch", "user-space driver libraries match the kernel module", {"driver.library-mismatch"}, check_library_mismatch},
    {"gpu-supported", "the driver branch supports every GPU", {"driver.gpu-unsupported"}, check_gpu_unsupported},
    {"driver-new-enough", "the driver is new enough for the CUDA runtime in use", {"driver.too-old-for-cuda"}, check_too_old_for_cuda},
    {"stub-library", "the real libcuda is loaded, not the toolkit stub", {"cuda.stub-library"}, check_stub_library},
    {"forward-compat", "a cuda-compat package fits the GPUs and the driver", {"cuda.compat-unsupported", "cuda.compat-mismatch"}, check_compat},
    {"uvm", "nvidia_uvm is loaded and /dev/nvidia-uvm exists", {"uvm.missing"}, check_uvm},
    {"uvm-hmm", "nvidia_uvm HMM does not break CUDA on this kernel", {"uvm.hmm"}, check_uvm_hmm},
    {"after-suspend", "CUDA is not broken by a suspend/resume", {"driver.after-suspend"}, check_after_suspend},
    {"devnodes", "/dev/nvidia* nodes exist and this user can open them", {"devnodes.missing", "devnodes.permission"}, check_devnodes},
    {"fabric-manager", "NVSwitch systems run a matching fabric manager", {"fabric-manager.not-running"}, check_fabric_manager},
    {"container-gpus", "a container was given GPUs", {"container.no-gpus"}, check_container_gpus},
    {"container-capabilities", "NVIDIA_DRIVER_CAPABILITIES includes compute and utility", {"container.capabilities"}, check_container_caps},
    {"container-driver", "container driver libraries match the host module", {"container.driver-mismatch"}, check_container_driver},
    {"cgroup-devices", "the device cgroup allows the GPU nodes", {"cgroup.device-denied"}, check_cgroup_devices},
    {"visible-devices", "CUDA_VISIBLE_DEVICES is valid and leaves GPUs visible", {"visible-devices.invalid", "visible-devices.hides-all"}, check_visible_devices},
    {"address-space", "no address-space limit too small for CUDA", {"memory.address-space-limit"}, check_address_space},
    {"mps", "an expected MPS control daemon is reachable", {"mps.unreachable"}, check_mps},
    {"compute-mode", "no exclusive-process GPU is already taken", {"compute-mode.exclusive"}, check_compute_mode},
    {"mig", "MIG-enabled GPUs have instances", {"mig.no-instances"}, check_mig},
    {"memory-held", "no other process holds most of a GPU's memory", {"memory.held-by-other-process"}, check_memory_held},
    {"nvml-init", "NVML starts", {"nvml.init-failed", "nvml.init-hang"}, check_nvml_init},
    {"cuda-init", "CUDA starts and creates a context on every GPU", {"cuda.init-failed", "cuda.init-hang"}, check_cuda_init},
    {"gpu-count", "every GPU on the PCI bus is usable by NVML and CUDA", {"gpu.missing"}, check_gpu_missing},
    {"device-order", "CUDA's default order matches nvidia-smi's", {"device-order.mismatch"}, check_device_order},
    {"persistence-mode", "persistence mode is on", {"persistence-mode.off"}, check_persistence},
    {"kernel-log", "the kernel log can be read", {"kernel-log.unreadable"}, check_kernel_log},
    {"xid", "no Xid error in the kernel log's window", {"xid.NN"}, check_xid},
    {"fallen-off-bus", "no GPU has fallen off the bus", {"gpu.fallen-off-bus"}, check_fallen_off_bus},
    {"reset-required", "no GPU needs a reset", {"gpu.reset-required"}, check_reset_required},
    {"pcie-errors", "no PCIe AER errors on a GPU's link", {"pcie.errors"}, check_pcie_errors},
    {"folk-remedies", "what the usual environment fixes really do here", {"advice.device-order", "advice.nvml-based-check", "advice.visible-devices"}, check_folk_remedies},
  };
  // clang-format on
  return kChecks;
}

}  // namespace gd
