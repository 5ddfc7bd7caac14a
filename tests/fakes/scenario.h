// The scenario that drives the fake libnvidia-ml.so.1, libcuda.so.1 and
// libcudart.so.13: a JSON file named by $GPUDOCTOR_FAKE_SCENARIO.
//
// Shape (every key optional; see tests/fakes/scenarios/*.json):
//   {
//     "machine": "ws-4x4090",                    // id from /tmp/gd/MACHINES.md (informational)
//     "driver_version": "550.54.14",             // nvmlSystemGetDriverVersion
//     "nvml_version": "12.550.54.14",            // default "<cuda major>.<driver_version>"
//     "cuda_driver_version": 12040,              // NVML's and libcuda's cuDriverGetVersion
//     "libcuda_driver_version": 12080,           // libcuda only (forward-compat libcuda)
//     "cudart_runtime_version": 12040,           // cudaRuntimeGetVersion (default: driver's)
//     "va_reserve_bytes": 1,                     // cuInit needs this much RLIMIT_AS
//                                                //   (default: sum of GPU memory + 16 GiB)
//     "context_reserve_bytes": 314572800,        // GPU memory a primary context needs
//     "gpu_defaults": { <gpu fields> },          // merged under every GPU
//     "gpus": [ { "name", "uuid", "bus_id": "0000:01:00.0", "pci_device_id": "0x268410DE",
//                 "pci_subsystem_id", "minor", "memory_total_bytes", "memory_used_bytes",
//                 "cc_major", "cc_minor", "multiprocessors", "max_sm_clock_mhz",
//                 "max_mem_clock_mhz", "architecture", "persistence_mode", "compute_mode",
//                 "mig_mode": {"current": 1, "pending": 1},   // absent: not MIG capable
//                 "mig_instances": [{"uuid": "MIG-...", "gi": 1, "ci": 0,
//                                    "memory_total_bytes", "multiprocessors"}],
//                 "processes": [{"pid": 4242, "used_memory_bytes": 1}],  // null = N/A
//                 "fabric": {"state": 3, "status": 0},  // absent: NOT_SUPPORTED
//                 "lost": true,               // fallen off the bus: NVML 15, CUDA skips it
//                 "errors": {"nvmlDeviceGetMemoryInfo": 15} } ],  // per-GPU return codes
//     "errors": {"cuInit": 2, "nvmlInit_v2": 9},  // return code of any exported function
//     "hang": ["cuInit"],                          // sleeps forever
//     "crash": ["nvmlDeviceGetCount_v2"],          // raises SIGSEGV
//     "delay_ms": {"cuInit": 1500}                 // sleeps, then carries on
//   }
// A versioned and an unversioned symbol share entries: "nvmlInit_v2" also
// covers nvmlInit and nvmlInitWithFlags, "cuDeviceTotalMem_v2" covers
// cuDeviceTotalMem, and so on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fake {

struct MigInstance {
  std::string uuid;  // "MIG-5f2e81a4-..."
  uint32_t gi = 0;   // GPU instance id
  uint32_t ci = 0;   // compute instance id
  uint64_t memory_total_bytes = 0;
  int multiprocessors = 0;
};

struct Process {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_bytes;
};

struct Gpu {
  std::string name;
  std::string uuid;                                        // "GPU-1b9a0c7e-..."
  std::string bus_id;                                      // "0000:01:00.0"
  uint32_t domain = 0, bus = 0, device = 0, function = 0;  // parsed from bus_id
  uint32_t pci_device_id = 0;                              // (device << 16) | vendor
  uint32_t pci_subsystem_id = 0;  // (subsystem device << 16) | subsystem vendor
  uint32_t minor = 0;
  uint64_t memory_total_bytes = 0;
  uint64_t memory_used_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  uint32_t max_sm_clock_mhz = 0;
  uint32_t max_mem_clock_mhz = 0;
  int architecture = 0;  // nvmlDeviceArchitecture_t
  int persistence_mode = 1;
  int compute_mode = 0;
  bool mig_capable = false;
  int mig_current = 0, mig_pending = 0;
  std::vector<MigInstance> mig_instances;
  std::vector<Process> processes;
  bool fabric_supported = false;
  int fabric_state = 0, fabric_status = 0;
  bool lost = false;
  std::map<std::string, int> errors;
};

struct Scenario {
  bool valid = true;
  std::string error;  // why the file could not be used
  std::string driver_version = "550.54.14";
  std::string nvml_version;
  int cuda_driver_version = 12040;
  int libcuda_driver_version = 12040;
  int cudart_runtime_version = 12040;
  uint64_t va_reserve_bytes = 0;
  uint64_t context_reserve_bytes = 300ull << 20;
  std::vector<Gpu> gpus;  // sorted by PCI bus id (NVML's order)
  std::map<std::string, int> errors;
  std::set<std::string> hang;
  std::set<std::string> crash;
  std::map<std::string, int> delay_ms;
};

// Loaded once, on first use, from $GPUDOCTOR_FAKE_SCENARIO. No variable: an
// empty, valid scenario (no GPUs). A broken file: valid = false, and the
// reason is printed once on stderr.
const Scenario& scenario();

// Applies the scenario to a call of `fn` (on `gpu`, when per GPU): hangs,
// crashes or sleeps as told, and returns the injected return code, 0 if none.
int inject(const char* fn, const Gpu* gpu = nullptr);

// 16 raw bytes of a "GPU-xxxxxxxx-xxxx-..." / "MIG-..." UUID (zeros if garbled).
void uuid_bytes(const std::string& uuid, unsigned char out[16]);

// Copies `s` into a C buffer of `len` bytes; false (and nothing written) if
// it does not fit with its terminating NUL.
bool copy_string(const std::string& s, char* buf, unsigned int len);

}  // namespace fake
