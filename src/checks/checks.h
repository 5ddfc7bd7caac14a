// Declarations of every check function; the table is in registry.cc.
#pragma once

#include <vector>

#include "checks/check.h"

namespace gd {

#define GD_CHECK(fn) std::vector<Finding> fn(const Snapshot& s, const Config& c)

// driver, CUDA libraries, kernel modules, device nodes, services, containers
GD_CHECK(check_driver_loaded);       // driver.not-loaded
GD_CHECK(check_nouveau);             // driver.nouveau
GD_CHECK(check_module_load_failed);  // driver.module-load-failed
GD_CHECK(check_library_mismatch);    // driver.library-mismatch
GD_CHECK(check_gpu_unsupported);     // driver.gpu-unsupported
GD_CHECK(check_too_old_for_cuda);    // driver.too-old-for-cuda
GD_CHECK(check_stub_library);        // cuda.stub-library
GD_CHECK(check_compat);              // cuda.compat-unsupported, cuda.compat-mismatch
GD_CHECK(check_uvm);                 // uvm.missing
GD_CHECK(check_uvm_hmm);             // uvm.hmm
GD_CHECK(check_after_suspend);       // driver.after-suspend
GD_CHECK(check_wsl);                 // wsl.no-gpu-support, wsl.libs-missing, wsl.libs-shadowed
GD_CHECK(check_devnodes);            // devnodes.missing, devnodes.permission
GD_CHECK(check_char_links);          // devnodes.char-links-missing
GD_CHECK(check_proc_hidepid);        // container.proc-hidepid
GD_CHECK(check_container_toolkit);   // container.no-cgroups
GD_CHECK(check_driver_injected);     // container.driver-not-injected
GD_CHECK(check_cdi_specs);           // container.cdi-stale
GD_CHECK(check_gpu_interposer);      // container.gpu-interposer, container.gpu-interposer-missing
GD_CHECK(check_devnode_security);    // devnodes.selinux-denied, devnodes.rootless-denied
GD_CHECK(check_driver_regression);   // driver.known-regression
// the fabric-readiness chain (docs/fabric.md), in link order
GD_CHECK(check_fabric_switches);         // fabric.switch-missing
GD_CHECK(check_nvlink_network);          // fabric.ib-modules-missing, fabric.nvlsm-not-running
GD_CHECK(check_fabric_manager);          // fabric-manager.not-installed, .version-mismatch,
                                         // .not-running, .not-enabled
GD_CHECK(check_fabric_manager_restart);  // fabric-manager.restarted-without-reset
GD_CHECK(check_imex_channels);           // fabric.imex-channels-missing
GD_CHECK(check_fabric_state);            // fabric.not-registered, fabric.degraded

GD_CHECK(check_container_gpus);    // container.no-gpus
GD_CHECK(check_container_caps);    // container.capabilities
GD_CHECK(check_container_driver);  // container.driver-mismatch
GD_CHECK(check_cgroup_devices);    // cgroup.device-denied
GD_CHECK(check_rootless_cgroups);  // container.rootless-cgroups
GD_CHECK(check_program_arch);      // cuda.arch-not-in-build
GD_CHECK(check_nvml_init);         // nvml.init-failed, nvml.init-hang
GD_CHECK(check_cuda_init);         // cuda.init-failed, cuda.init-hang

// what the user's settings and other processes do to CUDA
GD_CHECK(check_visible_devices);  // visible-devices.invalid, visible-devices.hides-all
GD_CHECK(check_device_order);     // device-order.mismatch
GD_CHECK(check_device_ordinal);   // visible-devices.ordinal-out-of-range
GD_CHECK(check_memory_held);      // memory.held-by-other-process
GD_CHECK(check_orphans);          // process.orphan
GD_CHECK(check_address_space);    // memory.address-space-limit
GD_CHECK(check_compute_mode);     // compute-mode.exclusive
GD_CHECK(check_mps);              // mps.unreachable
GD_CHECK(check_mig);              // mig.no-instances
GD_CHECK(check_gpu_missing);      // gpu.missing
GD_CHECK(check_persistence);      // persistence-mode.off
GD_CHECK(check_module_built);     // driver.module-missing-for-kernel
GD_CHECK(check_shm_size);         // container.shm-too-small
GD_CHECK(
    check_folk_remedies);  // advice.device-order, advice.nvml-based-check, advice.visible-devices

// what a program reported (explain: pasted text); no findings without it
GD_CHECK(check_fork_after_init);    // cuda.fork-after-init
GD_CHECK(check_container_runtime);  // container.runtime-not-configured, container.unknown-device

// the kernel log
GD_CHECK(check_kernel_log);      // kernel-log.unreadable
GD_CHECK(check_xid);             // xid.NN
GD_CHECK(check_fallen_off_bus);  // gpu.fallen-off-bus
GD_CHECK(check_reset_required);  // gpu.reset-required
GD_CHECK(check_pcie_errors);     // pcie.errors

// GPU health (NVML) and the PCIe topology (sysfs)
GD_CHECK(check_thermal);       // thermal.high
GD_CHECK(check_power);         // power.throttled
GD_CHECK(check_clocks);        // clocks.throttled
GD_CHECK(check_ecc);           // ecc.uncorrectable
GD_CHECK(check_rows_pending);  // ecc.rows-pending
GD_CHECK(check_pcie_link);     // pcie.link-degraded
GD_CHECK(check_p2p);           // p2p.blocked

#undef GD_CHECK

}  // namespace gd
