// Each row: the words a report uses for one part of the stack, and the
// causes the facts give for that part failing, in the order of likelihood
// their section gives (the same order as explain/rules.cc's kRules row
// for the error code that part shows). A word that also names something
// harmless stays out: "ulimit" alone is also memlock and open files (NCCL's
// --ulimit memlock=-1), "resume" alone is also a training run's checkpoint.
#include "catalog/components.h"

namespace gd {

const std::vector<Component>& components() {
  // clang-format off
  static const std::vector<Component> kComponents = {
    // CUDA 802 without it on an NVSwitch baseboard; a package of another
    // version does not start. On a PCIe machine it exits with
    // NV_WARN_NOTHING_TO_DO, harmlessly (§2.2).
    {"fabric-manager", "the fabric manager",
     {"fabric manager", "fabricmanager", "fabric-manager", "fabric_manager"},
     {"fabric-manager.not-running", "fabric-manager.version-mismatch"},
     "docs/nvidia-facts.md §8, §2.2", {"nothing to do"}},
    // Without nvidia_uvm or /dev/nvidia-uvm CUDA fails with 999.
    {"uvm", "nvidia_uvm",
     {"nvidia_uvm", "nvidia-uvm", "uvm"},
     {"uvm.missing"},
     "docs/nvidia-facts.md §7.5, §10"},
    // nouveau owns the GPU and the NVIDIA probe is never called.
    {"nouveau", "nouveau",
     {"nouveau"},
     {"driver.nouveau"},
     "docs/nvidia-facts.md §2 (probe routine not called), §10 row 1"},
    // Secure Boot refusing an unsigned module (lockdown, "Key was rejected").
    // Off, it rules itself out.
    {"secure-boot", "Secure Boot or module signing",
     {"secure boot", "secureboot", "secure-boot", "mok", "mokutil", "module signing",
      "signing key", "sign the module", "unsigned module", "key was rejected"},
     {"driver.module-load-failed"},
     "docs/nvidia-facts.md §2 (the Lockdown row), §10 row 1",
     {"disabled", "secure boot off", "secureboot off", "secure boot is off", "turned off"}},
    // MIG on, no instance: CUDA finds no device (100). "MIG disabled" is not that.
    {"mig", "MIG",
     {"mig", "multi-instance gpu"},
     {"mig.no-instances"},
     "docs/nvidia-facts.md §4.3 (nvmlDeviceGetMigMode), §3 code 100", {"disabled"}},
    // An address-space limit: CUDA 2 at start-up. Only the limit on virtual
    // memory: ulimit's other limits (memlock, open files) are not it.
    {"address-space", "an address-space (ulimit -v) limit",
     {"ulimit -v", "ulimit -sv", "ulimit -hv", "virtual memory", "address space limit",
      "address-space limit", "rlimit_as", "vmem limit"},
     {"memory.address-space-limit"},
     "docs/nvidia-facts.md §3 code 2, §10 (CUDA 2 at start-up)",
     // A compiler's "virtual memory exhausted" is the build machine's.
     {"virtual memory exhausted"}},
    // The device cgroup refusing the nodes (NVML 17, or 999 after a
    // systemctl daemon-reload). A memory cgroup's limit is another matter.
    {"cgroup", "the device cgroup",
     {"cgroup", "devices.allow", "devices.deny"},
     {"cgroup.device-denied"},
     "docs/nvidia-facts.md §7.6 (the device cgroup), §4.1 code 17",
     {"memory cgroup", "memory.max", "memory.limit", "oom-kill", "oom kill", "out of memory"}},
    // A CDI spec written before a driver upgrade or a GPU change.
    {"cdi", "a CDI spec",
     {"cdi"},
     {"container.cdi-stale"},
     "docs/containers.md (CDI specs), docs/nvidia-facts.md §6.3"},
    // The device plugin finds no GPU under a runtime that does not inject
    // the driver (nvidia not the default runtime), cannot register with the
    // kubelet, or runs on a node without a driver: the k8s:no-gpus row of
    // explain/rules.cc.
    {"device-plugin", "the Kubernetes device plugin",
     {"device plugin", "device-plugin", "deviceplugin"},
     {"container.runtime-not-configured", "k8s.device-plugin", "driver.not-loaded"},
     "docs/nvidia-facts.md §6.3 (the Kubernetes device plugin)"},
    // ACS redirecting peer-to-peer traffic through the IOMMU: NCCL hangs or
    // crawls. Turned off, it is the fix, not the cause.
    {"iommu", "the IOMMU or ACS",
     {"iommu", "acs", "access control services", "vt-d", "amd-vi"},
     {"p2p.blocked"},
     "docs/nvidia-facts.md §12.2", {"disabled"}},
    // nvidia_uvm broken by a suspend and resume: CUDA 999 until it is reloaded.
    {"suspend", "a suspend or resume",
     {"suspend", "hibernat", "after resum", "resumed from", "resume from sleep",
      "resuming from sleep", "wake from sleep", "waking from sleep", "woke from sleep",
      "woke up from sleep", "after sleep"},
     {"driver.after-suspend"},
     "docs/nvidia-facts.md §3 code 999, §10 (CUDA 999)"},
    // DKMS did not build the module for the running kernel.
    {"dkms", "DKMS",
     {"dkms"},
     {"driver.module-missing-for-kernel"},
     "docs/nvidia-facts.md §2 (the modprobe and DKMS rows), §10 row 1"},
  };
  // clang-format on
  return kComponents;
}

const Component* find_component(std::string_view key) {
  for (const Component& c : components()) {
    if (key == c.key) return &c;
  }
  return nullptr;
}

}  // namespace gd
