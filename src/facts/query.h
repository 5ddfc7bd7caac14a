// Pure queries over a snapshot that checks, topo, diag, job and fleet share:
// which GPUs, which runs, which modules, nodes and services, what was not
// observed. No findings here (checks/util.h makes those).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// NVIDIA GPUs on the PCI bus (kind == kGpu), in bus order.
std::vector<const PciDevice*> pci_gpus(const Snapshot& s);
bool has_nvswitch(const Snapshot& s);
// The NVML GPU / PCI bridge at a bus id; nullptr when none.
const NvmlGpu* find_nvml_gpu(const Snapshot& s, const std::string& bdf);
const PciBridge* find_pci_bridge(const Snapshot& s, const std::string& bdf);

// The CUDA probe's run with the user's environment / the clean one; nullptr
// when that run did not happen.
const CudaRun* user_cuda_run(const Snapshot& s);
const CudaRun* clean_cuda_run(const Snapshot& s);
// The run with the soft RLIMIT_AS/RLIMIT_DATA raised to the hard limits
// (probe/hardware.cc runs it after an out-of-memory under a raisable limit).
const CudaRun* raised_limit_cuda_run(const Snapshot& s);
// The gap a probe recorded for a snapshot field ("limits.mem_total_bytes"),
// or nullptr when the field was observed.
const FieldGap* field_gap(const Snapshot& s, std::string_view field);
// True when CUDA was tried and cuInit or cuDeviceGetCount failed (or hung)
// in the user's environment.
bool cuda_failed(const Snapshot& s);
// The error a framework saw (cudaGetDeviceCount) if cudart was found, else
// cuInit's: the code a user would quote.
int cuda_user_error(const Snapshot& s);

const ModuleInfo* find_module(const Snapshot& s, const std::string& name);
const DevNode* find_devnode(const Snapshot& s, const std::string& path);
const ServiceInfo* find_service(const Snapshot& s, const std::string& name);
// The service by that name runs; for a snapshot that lists no such service
// (an older one), a process of that comm (15 bytes, as the kernel keeps it).
bool program_running(const Snapshot& s, const std::string& name);
// The snapshot was read from pasted text (explain), not from a machine.
inline bool from_pasted_text(const Snapshot& s) { return s.root.empty(); }
// Environment value, or nullptr when unset.
const std::string* env_var(const Snapshot& s, const std::string& name);

}  // namespace gd
