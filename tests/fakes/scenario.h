// The scenario that drives the fake libnvidia-ml.so.1, libcuda.so.1 and
// libcudart.so.13: a JSON file named by $GPUDOCTOR_FAKE_SCENARIO.
//
// $GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG (optional): a file to which the fake
// libcuda appends one line per cuDevicePrimaryCtxRetain, "<pid> <bus_id>
// <rc>" ("4711 0000:01:00.0 0"; bus id "-" for an invalid device), whether
// the call succeeds or not, in one O_APPEND write; the stand-in diag helper
// (fake_diag_helper.py) appends "<pid> <bus_id> diag" per GPU it tests. Tests
// count there the contexts gpudoctor opened on each GPU (DESIGN.md "A
// running job is sacred").
//
// Shape (every key optional; see tests/fakes/scenarios/*.json):
//   {
//     "machine": "ws-4x4090",  // the machine (tests/roots/README.md; informational)
//     "driver_version": "550.54.14",             // nvmlSystemGetDriverVersion
//     "nvml_version": "12.550.54.14",            // default "<cuda major>.<driver_version>"
//     "cuda_driver_version": 12040,              // NVML's and libcuda's cuDriverGetVersion
//     "libcuda_driver_version": 12080,           // libcuda only (forward-compat libcuda)
//     "cudart_runtime_version": 12040,           // cudaRuntimeGetVersion (default: driver's)
//     "va_reserve_bytes": 1,                     // address space cuInit reserves
//                                                //   (default: sum of GPU memory + 16 GiB)
//     "context_va_bytes": 0,                     // and each device's first context
//     "context_reserve_bytes": 314572800,        // GPU memory a primary context needs
//     "gpu_defaults": { <gpu fields> },          // merged under every GPU
//     "gpus": [ { "name", "uuid", "vbios_version", "bus_id": "0000:01:00.0", "pci_device_id":
//     "0x268410DE",
//                 "pci_subsystem_id", "minor", "memory_total_bytes", "memory_used_bytes",
//                 "cc_major", "cc_minor", "multiprocessors", "max_sm_clock_mhz",
//                 "max_mem_clock_mhz", "architecture", "persistence_mode", "compute_mode",
//                 "mig_mode": {"current": 1, "pending": 1},   // absent: not MIG capable
//                 "mig_instances": [{"uuid": "MIG-...", "gi": 1, "ci": 0,
//                                    "memory_total_bytes", "multiprocessors"}],
//                 "processes": [{"pid": 4242, "used_memory_bytes": 1}],  // null = N/A
//                 "graphics_processes": [{"pid": 1312, "used_memory_bytes": 1}],
//                          // nvmlDeviceGetGraphicsRunningProcesses_v3 (an X
//                          // server, a GL program); same shape; default none
//                 "fabric": {"state": 3, "status": 0,   // absent: NOT_SUPPORTED
//                            "clique_id": 1, "cluster_uuid": "<32 hex digits>",
//                            "health_mask": 0, "health_summary": 1},
//                 "lost": true,               // fallen off the bus: NVML 15, CUDA skips it
//                 "errors": {"nvmlDeviceGetMemoryInfo": 15},  // per-GPU return codes
//                 "numa": 0,                  // NUMA node, for the topology rule below
//                 "health": { <health> },
//                 "when_file": [{"path": "/tmp/x/hot", "health": { <health> }},
//                               {"path": "/tmp/x/lost", "lost": true}] } ],
//                          // stages a test turns on by creating the file, in a
//                          // process that lives on (run --watch's sampler): the
//                          // last stage whose file exists replaces "health" (its
//                          // own, merged over the GPU's) or makes the GPU lost
//     "topology": [{"a": 0, "b": 1, "level": 10}],  // see "Topology" below
//     "errors": {"cuInit": 2, "nvmlInit_v2": 9},  // return code of any exported function
//     "hang": ["cuInit"],                          // sleeps forever
//     "crash": ["nvmlDeviceGetCount_v2"],          // raises SIGSEGV
//     "delay_ms": {"cuInit": 1500},                // sleeps, then carries on
//     "hang_when_file": {"nvmlDeviceGetTemperature": "/tmp/x/hang"},
//     "crash_when_file": {"nvmlDeviceGetPowerUsage": "/tmp/x/crash"},
//     "fail_once_file": {"nvmlInit_v2": "/tmp/x/blip"}
//                          // returns the function's "errors" code only while the file
//                          // exists, and removes it when it does: a transient fault
//                          // that the next process (a re-check) no longer sees
//                          // as "hang" / "crash", but only while the named file
//                          // exists when the call is made: a test turns a fault on
//                          // and off in a process that lives on (serve's sampler)
//   }
//
// <health> (fake_nvml_health.cc; every key optional). "gpu_defaults" and a
// GPU are merged as a JSON merge patch (RFC 7386): a GPU's "health" is
// merged key by key over the defaults' one, nested objects too, and a null
// removes a default's key. "absent" below means the call returns
// NVML_ERROR_NOT_SUPPORTED (3), as real NVML does for a missing feature.
//   "temperature_c": 41,            // nvmlDeviceGetTemperature(GPU); default 40
//   "memory_temperature_c": 48,     // field 82 MEMORY_TEMP (HBM); absent: entry rc 3
//   "temp_thresholds": {"shutdown": 95, "slowdown": 92, "mem_max": 95, "gpu_max": 90},
//                                   // by nvmlTemperatureThresholds_t 0/1/2/3; default
//                                   // {shutdown 95, slowdown 92, gpu_max 90}; a key
//                                   // missing from a given object: NOT_SUPPORTED
//   "power_usage_mw": 30000,        // default 30000
//   "power_limit_mw": 450000,       // enforced and management limit; default 450000
//   "power_min_limit_mw": 100000,   // constraints min; default 100000
//   "power_max_limit_mw": 600000,   // constraints max; default power_limit_mw
//   "sm_clock_mhz": 210,            // nvmlDeviceGetClockInfo(SM, also GRAPHICS); default 210
//   "mem_clock_mhz": 405,           // nvmlDeviceGetClockInfo(MEM); default 405
//   "clock_event_reasons": 1,       // §4.5 bits, both symbol names; default 1 (GpuIdle)
//   "pstate": 8,                    // default 8
//   "utilization_gpu_pct": 0,       // default 0
//   "utilization_memory_pct": 0,    // default 0
//   "fan_speed_pct": 30,            // absent: NOT_SUPPORTED (passive SXM boards)
//   "ecc": {"current": 1, "pending": 1, "corrected_volatile": 0,
//           "uncorrected_volatile": 0, "corrected_aggregate": 0,
//           "uncorrected_aggregate": 0},  // absent: NOT_SUPPORTED (GeForce); keys default
//                                         // 1 for the modes, 0 for the counts
//   "retired_pages": {"sbe": 0, "dbe": 0, "pending": 0},  // absent: NOT_SUPPORTED
//                                   // (Ampere and newer remap rows instead)
//   "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0},
//                                   // absent: NOT_SUPPORTED (before Ampere, GeForce)
//   "pcie": {"gen": 4, "gen_max": 4, "width": 16, "width_max": 16, "replay": 0},
//                                   // each key defaults to this
//   "nvlinks": [{"active": true, "remote_bus_id": "0000:05:00.0"}, ...]
//                                   // link i = entry i; link >= count: INVALID_ARGUMENT;
//                                   // absent: NOT_SUPPORTED on every link. Remote PCI
//                                   // info: NOT_SUPPORTED without a remote_bus_id.
// Retired pages answer like NVML: asked for the addresses with a count below
// the number of pages, INSUFFICIENT_SIZE and the count; else SUCCESS.
// Errors keyed by any of these functions' names work as for the others.
//
// Topology (nvmlDeviceGetTopologyCommonAncestor, NVML indices): a pair
// listed in "topology" (either order) gets its "level". Any other pair:
// 50 SYSTEM when both GPUs have a "numa" key and they differ (across
// sockets), else 40 NODE (same NUMA node, different host bridges). A
// scenario whose GPUs share a PCIe switch lists those pairs (hgx-8xh100:
// level 10 SINGLE for each switch's pair, as its recorded root has them).
//
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

// The "health" object of a GPU (fake_nvml_health.cc answers from it). An
// unset optional is a feature the GPU lacks: its calls return NOT_SUPPORTED.
struct Ecc {
  int current = 1, pending = 1;  // nvmlEnableState_t
  uint64_t corrected_volatile = 0, uncorrected_volatile = 0;
  uint64_t corrected_aggregate = 0, uncorrected_aggregate = 0;
};

struct RetiredPages {
  uint32_t sbe = 0, dbe = 0;  // pages retired for multiple single-bit / double-bit errors
  int pending = 0;
};

struct RemappedRows {
  uint32_t correctable = 0, uncorrectable = 0;
  int pending = 0, failure = 0;
};

struct Pcie {
  uint32_t gen = 4, gen_max = 4, width = 16, width_max = 16, replay = 0;
};

struct NvLink {
  bool active = false;
  std::string remote_bus_id;  // "0000:05:00.0"; "" = NOT_SUPPORTED for the remote PCI info
};

struct Health {
  int temperature_c = 40;
  std::optional<int> memory_temperature_c;
  // By nvmlTemperatureThresholds_t: 0 shutdown, 1 slowdown, 2 mem_max, 3 gpu_max.
  std::map<int, uint32_t> temp_thresholds = {{0, 95}, {1, 92}, {3, 90}};
  uint32_t power_usage_mw = 30000;
  uint32_t power_limit_mw = 450000;
  uint32_t power_min_limit_mw = 100000;
  uint32_t power_max_limit_mw = 450000;
  uint32_t sm_clock_mhz = 210;
  uint32_t mem_clock_mhz = 405;
  uint64_t clock_event_reasons = 1;  // GpuIdle
  int pstate = 8;
  uint32_t utilization_gpu_pct = 0;
  uint32_t utilization_memory_pct = 0;
  std::optional<uint32_t> fan_speed_pct;
  std::optional<Ecc> ecc;
  std::optional<RetiredPages> retired_pages;
  std::optional<RemappedRows> remapped_rows;
  Pcie pcie;
  std::optional<std::vector<NvLink>> nvlinks;
};

struct Gpu {
  std::string name;
  std::string uuid;                                        // "GPU-1b9a0c7e-..."
  std::string vbios_version = "96.00.89.00.01";            // nvmlDeviceGetVbiosVersion
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
  std::vector<Process> processes;           // compute
  std::vector<Process> graphics_processes;  // graphics
  bool fabric_supported = false;
  int fabric_state = 0, fabric_status = 0;
  unsigned fabric_clique_id = 0, fabric_health_mask = 0;
  int fabric_health_summary = 0;
  std::string fabric_cluster_uuid;  // 32 hex digits; "" all zeros
  bool lost = false;
  std::map<std::string, int> errors;
  int numa = -1;  // NUMA node, for the topology rule; -1 = not given
  Health health;
  struct Stage {
    std::string path;
    bool lost = false;
    Health health;
  };
  std::vector<Stage> when_file;
  // The last stage whose file exists now; nullptr when none.
  const Stage* stage() const;
  // "health", or the current stage's; lost, or the current stage's.
  const Health& current_health() const;
  bool is_lost() const;
};

// nvmlDeviceGetTopologyCommonAncestor of one pair, by NVML index.
struct TopoPair {
  uint32_t a = 0, b = 0;
  int level = 0;
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
  uint64_t context_va_bytes = 0;  // a device's first primary context reserves this
  uint64_t context_reserve_bytes = 300ull << 20;
  std::vector<Gpu> gpus;  // sorted by PCI bus id (NVML's order)
  std::map<std::string, int> errors;
  std::set<std::string> hang;
  std::set<std::string> crash;
  std::map<std::string, int> delay_ms;
  std::map<std::string, std::string> hang_when_file;   // function -> path
  std::map<std::string, std::string> crash_when_file;  // function -> path
  std::map<std::string, std::string> fail_once_file;   // function -> path
  std::vector<TopoPair> topology;  // as listed; other pairs by the rule in the header comment
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
