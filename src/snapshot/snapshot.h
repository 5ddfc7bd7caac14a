// The snapshot: everything the probes saw on one machine, as plain data.
//
// It has a versioned JSON form (gpudoctor.snapshot/v1, see snapshot_json.h)
// and is the only input of the checks. Probes fill it; `explain` fills parts
// of it from pasted text; tests load it from tests/snapshots/.
//
// Conventions:
//  - Units are in the field name (_bytes, _mb, _gts, _ms, _c) or a comment.
//  - A value read through NVML carries its NVML return code next to it
//    (NvmlValue): NOT_SUPPORTED (3) and GPU_IS_LOST (15) mean different things.
//  - std::optional means "not known"; an empty string means "known empty".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gd {

inline constexpr const char* kSnapshotSchema = "gpudoctor.snapshot/v1";

// How one probe went. A probe failure is data, never an abort.
enum class ProbeStatus { kOk, kUnavailable, kFailed, kTimedOut };

// One input of a probe that was not observed: the field it would have set
// and why. The probe keeps every other field it read, and checks decide on
// those, naming the gap where it matters (DESIGN.md, "Truth on real machines").
struct FieldGap {
  std::string field;   // the snapshot field left unset, "limits.mem_total_bytes"
  std::string reason;  // "/proc/meminfo: No such file or directory"
};

struct ProbeRecord {
  std::string name;  // "env", "limits", "driver", "pci", "devnodes", ...
  ProbeStatus status = ProbeStatus::kOk;
  std::string detail;          // reason when not ok, e.g. "no /proc/driver/nvidia"
  double duration_ms = 0;      // wall time the probe took
  std::vector<FieldGap> gaps;  // fields not observed; every other field was
  // Lines of its sources that no parser recognised: counted, never read as
  // "absent" (a module line with a format we do not know is not a missing module).
  int unrecognised_lines = 0;
};

// --- environment --------------------------------------------------------

// Allow-listed variables only (CUDA_*, NVIDIA_*, NCCL_*, PYTORCH_*, TORCH_*,
// LD_LIBRARY_PATH, LD_PRELOAD, SLURM_*, ...). Nothing else is ever recorded.
struct EnvInfo {
  std::map<std::string, std::string> vars;
  // The GPUs the job's launcher starts a process for (probe/job_request.h):
  // `run`'s command, or a command line in pasted text. 0: no such request.
  // Only the asking words are kept, never the rest of the command line.
  int job_gpus = 0;
  std::string job_request;  // "torchrun --nproc_per_node=8"
};

// --- process limits and memory policy -----------------------------------

struct LimitsInfo {
  std::optional<uint64_t> rlimit_as_bytes;    // soft RLIMIT_AS; nullopt = unlimited
  std::optional<uint64_t> rlimit_data_bytes;  // soft RLIMIT_DATA; nullopt = unlimited
  // Hard limits: without privilege a soft limit can be raised up to them,
  // no further. nullopt = unlimited (or not recorded).
  std::optional<uint64_t> rlimit_as_hard_bytes;
  std::optional<uint64_t> rlimit_data_hard_bytes;
  int overcommit_memory = -1;                  // /proc/sys/vm/overcommit_memory (0,1,2), -1 unknown
  std::optional<uint64_t> overcommit_ratio;    // percent
  std::optional<uint64_t> commit_limit_bytes;  // /proc/meminfo CommitLimit
  std::optional<uint64_t> committed_as_bytes;  // /proc/meminfo Committed_AS
  std::optional<uint64_t> mem_total_bytes;     // /proc/meminfo MemTotal
  std::optional<uint64_t> cgroup_memory_limit_bytes;  // nullopt = no limit found
  std::string cgroup_path;                            // from /proc/self/cgroup
  uint32_t uid = 0;
  uint32_t euid = 0;
  std::vector<uint32_t> groups;  // supplementary groups (for devnode access)
};

// --- kernel driver --------------------------------------------------------

struct ModuleInfo {
  static constexpr int kRefcountUnknown = -1;
  static constexpr const char* kFromProcModules = "proc-modules";
  static constexpr const char* kFromSysModule = "sys-module";
  std::string name;   // "nvidia", "nvidia_uvm", "nouveau", ...
  std::string state;  // "Live", "Loading", "Unloading"; "" unknown (built in, unparsed line)
  // -1 unknown: "-" on a kernel without CONFIG_MODULE_UNLOAD, a built-in
  // module, or a /proc/modules line in a form the parser does not know.
  int refcount = 0;
  std::string taint;     // "(POE)" letters without parentheses, e.g. "POE"
  std::string source;    // where it was seen: "proc-modules", "sys-module"; "" older snapshots
  bool builtin = false;  // built into the kernel: /sys/module/<name> without initstate
};

// Windows Subsystem for Linux (docs/nvidia-facts.md §13): no NVIDIA kernel
// module runs in the guest; the Windows driver serves the GPU through
// /dev/dxg and maps its user-space libraries into /usr/lib/wsl/lib. Read
// only when /proc/driver/nvidia is absent.
struct WslInfo {
  bool detected = false;          // the kernel release names Microsoft, or /dev/dxg exists
  bool wsl1 = false;              // WSL 1's kernel ("4.4.0-19041-Microsoft"): no GPU at all
  bool dxg = false;               // /dev/dxg, the GPU paravirtualization device of WSL 2
  std::vector<std::string> libs;  // the entries of /usr/lib/wsl/lib
  // /usr/lib/wsl/lib in /etc/ld.so.conf.d/*.conf: 1 yes, 0 no, -1 unknown
  int lib_dir_configured = -1;
};

struct DriverInfo {
  bool proc_driver_nvidia = false;            // /proc/driver/nvidia exists
  std::string version;                        // kernel module version, e.g. "550.54.14"
  std::string version_line;                   // the full NVRM version line
  bool open_kernel_module = false;            // "Open Kernel Module" in the version line
  std::map<std::string, std::string> params;  // /proc/driver/nvidia/params
  std::vector<ModuleInfo> modules;            // NVIDIA-related and nouveau only
  // /sys/module/nvidia_uvm/parameters/uvm_disable_hmm: "Y"/"N"/"" unknown
  std::string uvm_disable_hmm;
  // /proc/devices: dynamic majors ("nvidia-uvm" -> 510, ...)
  std::map<std::string, int> char_majors;
  // /proc/driver/nvidia/suspend_depth or similar evidence of a resume;
  // seconds since the last system resume where known
  std::optional<double> seconds_since_resume;
  // Read only when the driver is not loaded (/proc/driver/nvidia absent):
  // the running kernel (/proc/sys/kernel/osrelease), whether its
  // /lib/modules/<release>/modules.dep lists an nvidia.ko (1 yes, 0 no, -1
  // unknown: no modules.dep, as in most containers), and the other kernels
  // whose modules.dep does (the module was built for them, not this one).
  std::string kernel_release;
  int nvidia_module_built = -1;
  std::vector<std::string> kernels_with_nvidia;
  WslInfo wsl;
};

// --- PCI bus (sysfs) -------------------------------------------------------

enum class PciKind { kGpu, kNvSwitch, kAudio, kBridge, kOther };

struct PciDevice {
  std::string bdf;  // "0000:17:00.0", lower-case, as in sysfs
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t subsystem_vendor_id = 0;
  uint16_t subsystem_device_id = 0;
  uint32_t class_code = 0;  // 24-bit, e.g. 0x030200
  PciKind kind = PciKind::kOther;
  std::string driver;  // bound driver name ("nvidia", "nouveau", "vfio-pci"), "" unbound
  int numa_node = -1;
  std::string local_cpulist;          // "0-31,64-95"
  double current_link_speed_gts = 0;  // GT/s; 0 unknown
  double max_link_speed_gts = 0;
  int current_link_width = 0;  // lanes; 0 unknown
  int max_link_width = 0;
  // From /proc/driver/nvidia/gpus/<bdf>/information when the driver has it.
  std::string proc_model;
  std::string proc_uuid;
  std::optional<int> proc_minor;  // "Device Minor:" = N in /dev/nvidiaN
  bool proc_excluded = false;     // "GPU Excluded: Yes"
  // Where the function sits in the PCI tree (the resolved sysfs path
  // /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0): its root bus and the
  // bridge directly above it ("" when it sits on the root bus).
  std::string root_bus;  // "pci0000:00"
  std::string parent;    // bdf of the upstream bridge (a switch or root port)
};

// A PCI bridge on the path from a root bus to an NVIDIA function: root ports
// and PCIe switch ports, of any vendor. Recorded for the topology (which GPUs
// share a switch) and for peer-to-peer (ACS on the way between two GPUs).
struct PciBridge {
  std::string bdf;  // "0000:00:01.1"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  std::string root_bus;  // "pci0000:00"
  std::string parent;    // bdf of the bridge above; "" on the root bus
  int numa_node = -1;
  double current_link_speed_gts = 0;  // GT/s; 0 unknown
  double max_link_speed_gts = 0;
  int current_link_width = 0;  // lanes; 0 unknown
  int max_link_width = 0;
  // Access Control Services, from the PCIe extended capability (ID 0x000d)
  // in /sys/bus/pci/devices/<bdf>/config. Reading past the first 64 bytes of
  // config space needs root: then acs_known is false and acs_error says why.
  bool acs_known = false;
  bool acs_capable = false;  // the capability is present
  uint16_t acs_ctrl = 0;     // ACS Control register (bit 2 RR, 3 CR, 4 UF, ...)
  std::string acs_error;     // "" when known
};

// The IOMMU, which together with ACS decides whether GPUs may talk to each
// other directly over PCIe.
struct IommuInfo {
  bool known = false;         // /sys/class/iommu or /sys/kernel/iommu_groups was readable
  bool enabled = false;       // an IOMMU unit is registered / groups exist
  int groups = 0;             // entries in /sys/kernel/iommu_groups
  bool passthrough = false;   // iommu=pt (or iommu.passthrough=1) on the kernel command line
  std::string cmdline_flags;  // the IOMMU-related kernel parameters, as written
};

// --- device nodes ------------------------------------------------------------

struct DevNode {
  std::string path;  // "/dev/nvidiactl" (as seen by the user, not under --root)
  bool exists = false;
  bool is_char_device = false;
  int major = -1;
  int minor = -1;
  uint32_t mode = 0;  // permission bits, e.g. 0666
  uint32_t owner_uid = 0;
  uint32_t owner_gid = 0;
  bool can_open = false;  // read+write access for this process's credentials
  std::string error;      // strerror of a failed stat/access, "" when fine
  // The errno name ("EACCES", "EPERM") with which the kernel refused
  // access(2) although the mode bits allow it: a security module (SELinux)
  // says EACCES, the device cgroup EPERM. Live only; a recorded node line
  // carries it as "refused=EACCES". "" when not refused or not tried.
  std::string kernel_refused;
  // /dev/char/<major>:<minor>, the link runc needs to keep the node in a
  // container's device cgroup when systemd rewrites it (NVIDIA/nvidia-docker#1730):
  // 1 present, 0 missing, -1 not looked (no /dev/char, or not a char node).
  int char_link = -1;
};

// Who the kernel lets open the device nodes beyond their mode bits: the
// security module's mode and this process's label, and whether it runs in a
// user namespace (rootless containers), where root's override of the mode
// bits holds only for nodes whose owner is mapped into the namespace.
struct SecurityInfo {
  // The id an unmapped owner shows as in a user namespace (the kernel's
  // overflowuid and overflowgid, 65534 unless changed).
  static constexpr uint32_t kOverflowId = 65534;
  std::string selinux;          // /sys/fs/selinux/enforce: "enforcing", "permissive"; "" none
  std::string label;            // /proc/self/attr/current, e.g. "system_u:system_r:container_t:s0"
  bool user_namespace = false;  // /proc/self/uid_map is not the identity of all ids
  std::string uid_map;          // its first line, spaces collapsed: "0 1000 1"
};

// --- container ---------------------------------------------------------------

// One CDI spec file as the container probe read it (probe/cdi.h).
struct CdiSpec {
  std::string path;                       // "/etc/cdi/nvidia.yaml"
  std::string kind;                       // "nvidia.com/gpu"
  std::vector<std::string> devices;       // device names: "0", "GPU-...", "all"
  std::vector<std::string> device_nodes;  // deviceNodes paths, the devices' and the common ones
  std::vector<std::string> host_paths;    // mounts' hostPath (driver libraries, binaries)
  std::vector<std::string> missing;       // of those two, the paths absent on this machine
  std::string error;                      // why it could not be read or parsed; "" read
};

// A library preloaded into every process this one starts.
struct Preload {
  std::string path;      // as written
  std::string from;      // "LD_PRELOAD" or "/etc/ld.so.preload"
  bool loadable = true;  // the file exists, is readable and not empty
};

struct ContainerInfo {
  bool in_container = false;
  std::string runtime;   // "docker", "podman", "kubernetes", "lxc", "containerd", ""
  std::string evidence;  // what told us ("/.dockerenv exists", "cgroup path ...")
  // Device cgroup (v1 devices.list lines, e.g. "c 195:* rwm"); empty when
  // unknown or cgroup v2 (eBPF device filter, not readable from inside).
  std::vector<std::string> devices_allow;
  bool devices_cgroup_known = false;
  // Driver libraries visible in the container: path -> version parsed from the
  // file name (libcuda.so.550.54.14 -> "550.54.14").
  std::map<std::string, std::string> driver_libraries;
  // /dev/shm as mounted (/proc/self/mounts): its tmpfs size= in bytes, -1 when
  // unknown or unlimited by an option (a host's tmpfs defaults to half of RAM).
  // NCCL's shared-memory transport and PyTorch's DataLoader workers live in it.
  int64_t shm_bytes = -1;
  std::string shm_mount;  // the mounts line, for evidence
  // On a host: the NVIDIA Container Toolkit is installed (its runtime
  // config /etc/nvidia-container-runtime/config.toml or nvidia-ctk): GPU
  // containers are started here. The path found, "" none.
  std::string host_toolkit;
  // /proc's hidepid= mount option as written ("2", "invisible"); "" none.
  std::string proc_hidepid;
  // The toolkit's config.toml, [nvidia-container-cli] no-cgroups as written
  // ("true", "false"); "" when not set or no config.
  std::string toolkit_no_cgroups;
  // CDI specs in /etc/cdi and /var/run/cdi (YAML or JSON).
  std::vector<CdiSpec> cdi_specs;
  // $LD_PRELOAD's entries, then /etc/ld.so.preload's.
  std::vector<Preload> preloads;
};

// --- services -------------------------------------------------------------------

struct ServiceInfo {
  std::string name;  // "nv-fabricmanager", "nvidia-persistenced", "nvidia-cuda-mps-control"
  bool running = false;
  std::vector<int> pids;
  std::string version;  // where known (fabric manager package version)
};

struct ProcessInfo {
  int pid = 0;
  std::string comm;  // /proc/PID/comm
};

// --- who uses each GPU -----------------------------------------------------------

// One GPU a process uses, as NVML listed it.
struct GpuProcessUse {
  std::string bus_id;                         // normalized "0000:17:00.0"
  std::string kind;                           // "compute" or "graphics"
  std::optional<uint64_t> used_memory_bytes;  // nullopt: NVML did not say
};

// A process NVML lists on a GPU, and what /proc (through --root) says of it:
// whose it is, how old, and the job it belongs to. Read-only: nothing here
// touches the GPU or the process.
struct GpuProcess {
  uint32_t pid = 0;
  std::vector<GpuProcessUse> gpus;
  // /proc/PID exists in this PID namespace. false: a process of another
  // container's namespace, or one that ended since NVML listed it.
  bool visible = false;
  std::string comm;             // /proc/PID/comm
  std::optional<uint32_t> uid;  // real uid (/proc/PID/status)
  std::string user;             // its name in <root>/etc/passwd; "" not there
  std::string cgroup;           // "/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0"
  std::string state;            // /proc/PID/stat state: "R", "S", "D" (uninterruptible), "Z"
  std::optional<double> age_s;  // s since it started (stat starttime against /proc/uptime)
  // The job it belongs to.
  std::string job_kind;      // "slurm", "kubernetes", "container"; "" none found
  std::string job_id;        // Slurm job id, pod uid, container id
  std::string job_source;    // where job_id came from: "cgroup" or "environ"
  std::string job_state;     // "running", "ended", "unknown" (nothing tells); "" no job
  std::string job_evidence;  // what decided job_state ("slurmstepd [4711.batch] pid 812 runs")
  std::vector<std::string> errors;  // what could not be read, and why
};

// What runs on this node's GPUs (docs/check.md "Who uses each GPU").
struct WorkloadInfo {
  bool attempted = false;
  // Workload managers running here, from /proc's comm: "slurmd", "kubelet".
  std::vector<std::string> managers;
  // Slurm jobs with a slurmstepd on this node ("slurmstepd: [4711.batch]"):
  // the jobs running here. A job's processes outlive it only as orphans.
  std::vector<std::string> slurm_jobs;
  // <root>/var/lib/kubelet/pods could be listed: a pod's directory there is
  // the kubelet's record that the pod still exists.
  bool kubelet_pods_known = false;
  std::vector<GpuProcess> processes;  // every pid NVML lists, once, by pid
  std::string error;                  // why /proc could not be read at all
};

// --- NVML ---------------------------------------------------------------------

// A value read through NVML with the return code of the call that read it.
// rc = -1: never asked (symbol missing or an earlier call failed).
template <class T>
struct NvmlValue {
  T value{};
  int rc = -1;
  bool ok() const { return rc == 0; }
};

struct NvmlProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_bytes;  // nullopt = NVML_VALUE_NOT_AVAILABLE
};

// One NVLink of a GPU (nvmlDeviceGetNvLinkState / RemotePciInfo_v2).
struct NvmlNvLink {
  uint32_t link = 0;
  NvmlValue<int> active;                 // 1 active, 0 inactive
  NvmlValue<std::string> remote_bus_id;  // normalized; a GPU or an NVSwitch
};

// The health readings of one GPU, each with its NVML status
// (docs/nvidia-facts.md §4.3, §4.5).
struct NvmlHealth {
  NvmlValue<int> temperature_c;             // nvmlDeviceGetTemperature(GPU)
  NvmlValue<int> memory_temperature_c;      // field 82 MEMORY_TEMP (HBM GPUs)
  NvmlValue<uint32_t> temp_shutdown_c;      // threshold 0 SHUTDOWN
  NvmlValue<uint32_t> temp_slowdown_c;      // threshold 1 SLOWDOWN
  NvmlValue<uint32_t> temp_mem_max_c;       // threshold 2 MEM_MAX
  NvmlValue<uint32_t> temp_gpu_max_c;       // threshold 3 GPU_MAX
  NvmlValue<uint32_t> power_usage_mw;       // nvmlDeviceGetPowerUsage
  NvmlValue<uint32_t> power_limit_mw;       // nvmlDeviceGetEnforcedPowerLimit
  NvmlValue<uint32_t> power_max_limit_mw;   // PowerManagementLimitConstraints max
  NvmlValue<uint32_t> sm_clock_mhz;         // nvmlDeviceGetClockInfo(SM)
  NvmlValue<uint32_t> mem_clock_mhz;        // nvmlDeviceGetClockInfo(MEM)
  NvmlValue<uint32_t> max_mem_clock_mhz;    // nvmlDeviceGetMaxClockInfo(MEM)
  NvmlValue<uint64_t> clock_event_reasons;  // §4.5 bits (EventReasons, else ThrottleReasons)
  NvmlValue<int> pstate;                    // 0 (max) .. 15; 32 unknown
  NvmlValue<uint32_t> utilization_gpu_pct;  // nvmlDeviceGetUtilizationRates
  NvmlValue<uint32_t> utilization_memory_pct;
  NvmlValue<uint32_t> fan_speed_pct;  // nvmlDeviceGetFanSpeed; NOT_SUPPORTED on passive cards
  NvmlValue<int> ecc_mode_current;    // 1 enabled
  NvmlValue<int> ecc_mode_pending;
  NvmlValue<uint64_t> ecc_corrected_volatile;  // since the driver loaded
  NvmlValue<uint64_t> ecc_uncorrected_volatile;
  NvmlValue<uint64_t> ecc_corrected_aggregate;  // lifetime
  NvmlValue<uint64_t> ecc_uncorrected_aggregate;
  NvmlValue<uint32_t> retired_pages_sbe;          // pages retired for multiple single-bit errors
  NvmlValue<uint32_t> retired_pages_dbe;          // pages retired for double-bit errors
  NvmlValue<int> retired_pages_pending;           // 1: a reboot/reset retires them
  NvmlValue<uint32_t> remapped_rows_correctable;  // nvmlDeviceGetRemappedRows (Ampere+)
  NvmlValue<uint32_t> remapped_rows_uncorrectable;
  NvmlValue<int> remap_pending;       // 1: a GPU reset activates a remap
  NvmlValue<int> remap_failure;       // 1: a remap failed (no spare rows)
  NvmlValue<uint32_t> pcie_link_gen;  // current generation
  NvmlValue<uint32_t> pcie_link_gen_max;
  NvmlValue<uint32_t> pcie_link_width;  // lanes
  NvmlValue<uint32_t> pcie_link_width_max;
  NvmlValue<uint32_t> pcie_replay_count;
  NvmlValue<std::vector<NvmlNvLink>> nvlinks;  // rc: link 0's state query
};

struct NvmlGpu {
  uint32_t index = 0;
  int handle_rc = 0;  // nvmlDeviceGetHandleByIndex_v2
  NvmlValue<std::string> name;
  NvmlValue<std::string> uuid;
  NvmlValue<std::string> vbios_version;  // nvmlDeviceGetVbiosVersion, "96.00.89.00.01"
  NvmlValue<std::string> pci_bus_id;     // normalized "0000:17:00.0"
  NvmlValue<uint32_t> pci_device_id;     // (device << 16) | vendor, e.g. 0x268410DE
  NvmlValue<uint32_t> minor_number;
  NvmlValue<uint64_t> memory_total_bytes;
  NvmlValue<uint64_t> memory_used_bytes;
  NvmlValue<uint64_t> memory_free_bytes;
  NvmlValue<int> persistence_mode;  // 0 disabled, 1 enabled
  NvmlValue<int> compute_mode;      // 0 default, 2 prohibited, 3 exclusive-process
  NvmlValue<int> mig_mode_current;  // 0 disabled, 1 enabled
  NvmlValue<int> mig_mode_pending;
  NvmlValue<int> cc_major;  // CUDA compute capability
  NvmlValue<int> cc_minor;
  NvmlValue<int> architecture;                    // nvmlDeviceArchitecture_t
  NvmlValue<uint32_t> max_sm_clock_mhz;           // nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)
  NvmlValue<std::vector<NvmlProcess>> processes;  // compute processes
  // Graphics processes (nvmlDeviceGetGraphicsRunningProcesses): a display
  // server or a GL/Vulkan program; a GPU with one is in use too.
  NvmlValue<std::vector<NvmlProcess>> graphics_processes;
  NvmlValue<int> fabric_state;   // 0 not supported, 1 not started, 2 in progress, 3 completed
  NvmlValue<int> fabric_status;  // nvmlReturn_t inside the fabric info
  // The rest of the fabric info, read in the same call (rc as fabric_state's):
  // the NVLink domain the fabric manager placed the GPU in. A cluster UUID
  // of all zeros is "" (none assigned).
  NvmlValue<uint32_t> fabric_clique_id;
  NvmlValue<std::string> fabric_cluster_uuid;  // "0b6b0a04-..."
  NvmlValue<uint32_t> fabric_health_mask;      // NVML_GPU_FABRIC_HEALTH_MASK_* fields
  // v3 only (rc -1 from a driver that answers v2): 0 not supported,
  // 1 healthy, 2 unhealthy, 3 limited capacity.
  NvmlValue<int> fabric_health_summary;
  NvmlValue<uint32_t> mig_instance_count;  // MIG devices visible (GetMaxMigDeviceCount/handles)
  NvmlHealth health;
};

// nvmlDeviceGetTopologyCommonAncestor for one pair of GPUs (NVML indices).
struct NvmlTopoPair {
  uint32_t a = 0;
  uint32_t b = 0;
  // 0 INTERNAL, 10 SINGLE (one PCIe switch), 20 MULTIPLE, 30 HOSTBRIDGE,
  // 40 NODE, 50 SYSTEM
  NvmlValue<int> level;
};

// The NVML probe, run in a child process.
struct NvmlInfo {
  bool attempted = false;
  std::string library_requested;  // "libnvidia-ml.so.1" or --nvml-lib
  std::string library_loaded;     // real path from dladdr; "" if dlopen failed
  std::string dlopen_error;
  int init_rc = -1;         // nvmlInit_v2 (or nvmlInit)
  std::string init_symbol;  // which symbol was used
  NvmlValue<std::string> driver_version;
  NvmlValue<std::string> nvml_version;
  NvmlValue<int> cuda_driver_version;  // 12040 = 12.4
  NvmlValue<uint32_t> device_count;
  std::vector<NvmlGpu> gpus;
  std::vector<NvmlTopoPair> topology;  // every pair a < b
  // Child outcome: "" normal, "timeout", "crashed: SIGSEGV", "bad output: ...".
  std::string child_error;
  double duration_ms = 0;
};

// --- CUDA -----------------------------------------------------------------------

struct CudaDevice {
  int ordinal = 0;  // in this run's order (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES)
  int get_rc = -1;  // cuDeviceGet
  std::string name;
  std::string pci_bus_id;  // normalized "0000:17:00.0"
  std::string uuid;        // "GPU-xxxxxxxx-..."
  uint64_t total_memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
  int clock_khz = 0;  // CU_DEVICE_ATTRIBUTE_CLOCK_RATE
  int ctx_rc = -1;    // cuDevicePrimaryCtxRetain + cuCtxSetCurrent + cuMemGetInfo
  // Why no context was asked for (ctx_rc stays -1): the probe opens none on
  // a GPU in use or not in DEFAULT compute mode, nor where NVML could not
  // tell ("busy: 1 process (pid 4711, slurm job 4711)"). "" = asked.
  std::string ctx_skipped;
};

// The probe child's own address space (/proc/self/status VmSize, VmData):
// measured before cuInit, after it and after the first context, it is what
// CUDA reserves on this machine (memory.address-space-limit). 0: not reached.
struct VmUsage {
  uint64_t size_bytes = 0;  // VmSize, what RLIMIT_AS (ulimit -v) bounds
  uint64_t data_bytes = 0;  // VmData, what RLIMIT_DATA (ulimit -d) bounds
};

// The label of the CUDA run whose soft RLIMIT_AS/RLIMIT_DATA are raised to
// the hard limits: it proves (or clears) an address-space limit.
inline constexpr const char* kRaisedLimitLabel = "raised-limit";

// One run of the CUDA probe in a child process.
struct CudaRun {
  std::string label;  // "user" (the user's environment), "clean" or kRaisedLimitLabel
  std::map<std::string, std::string> env_changes;  // what "clean" changed ("" = unset)
  std::string library_requested;
  std::string library_loaded;
  std::string dlopen_error;
  int driver_version_rc = -1;
  int driver_version = 0;  // cuDriverGetVersion, 12040 = 12.4
  int init_rc = -1;        // cuInit(0)
  int device_count_rc = -1;
  int device_count = 0;
  std::vector<CudaDevice> devices;
  // CUDA runtime (libcudart), when one was found: the error frameworks show.
  std::string cudart_loaded;
  // Why no libcudart was loaded: the dlopen error of a named one, or the
  // names searched. "" when one loaded.
  std::string cudart_error;
  int cudart_runtime_version = 0;  // cudaRuntimeGetVersion
  int cudart_rc = -1;              // cudaGetDeviceCount
  int cudart_device_count = 0;
  std::string child_error;  // "" normal, "timeout", "crashed: SIGSEGV", ...
  double duration_ms = 0;
  VmUsage vm_start;    // before dlopen and cuInit
  VmUsage vm_init;     // after a successful cuInit
  VmUsage vm_context;  // after the first primary context
  // The soft RLIMIT_AS the child ran under (nullopt: unlimited). The
  // "raised-limit" run lifts it to the hard limit to prove a limit's effect.
  std::optional<uint64_t> rlimit_as_bytes;
};

struct CudaInfo {
  bool attempted = false;
  std::vector<CudaRun> runs;  // "user" first; "clean" only when "user" failed
};

// --- kernel log -----------------------------------------------------------------

// One NVIDIA-related kernel event, decoded. Repeats (same kind, type, code
// and GPU) are folded into one event with a count and first/last times.
struct KernelEvent {
  // "xid", "sxid", "nvrm", "aer", "uvm", "fabric-manager", "nouveau",
  // "module-signature"
  std::string kind;
  // What within the kind: for "nvrm" "api-mismatch", "rm-init-failed",
  // "fallen-off-bus", "probe-failed", "not-supported", ...; for "aer" the
  // severity ("corrected", "uncorrected-nonfatal", "uncorrected-fatal").
  std::string type;
  int code = 0;         // Xid / SXid number; 0 when the kind has none
  std::string gpu;      // PCI address "0000:17:00.0" (an NVSwitch's for an SXid); "" when none
  std::string device;   // SXid: the NVSwitch's device name, "nvswitch3"; "" otherwise
  int link = -1;        // SXid: the NVLink port, "Link 32"; -1 when the line names none
  int pid = 0;          // Xid "pid=" when printed
  std::string process;  // Xid "name=" when printed
  std::string message;  // the event's own text (Xid message, NVRM sentence)
  std::string line;     // the last occurrence as read, for evidence
  int count = 1;
  std::string first;  // time as the log printed it ("[  12.345678]", "Dec  2 10:00:01")
  std::string last;
  // Seconds between the last occurrence and the log's reference time (the
  // moment it was read; for a file, its newest line: see
  // KernelLogInfo::ages_to_log_end). nullopt: no time known.
  std::optional<double> age_s;
  // The first and last occurrence as unix times: the line's own wall-clock
  // stamp, or its boot-clock stamp placed by the boot time the reference
  // gives (both clocks known at once). nullopt: the log gives no wall time.
  std::optional<int64_t> first_unix_s;
  std::optional<int64_t> last_unix_s;
};

// Distinct events a kernel log keeps: far beyond any machine (GPUs x codes x
// kinds); occurrences of more (a log of forged PCI addresses) are only
// counted (KernelLogInfo::unfolded).
inline constexpr size_t kMaxKernelEvents = 8192;

// The kernel log probe: /dev/kmsg, then the systemd journal, then
// /var/log/kern.log; explain fills it from pasted lines.
struct KernelLogInfo {
  bool attempted = false;
  std::string source;  // "/dev/kmsg", "journal", "/var/log/kern.log", a file, "text"
  // Why a better source could not be read, with the reason ("/dev/kmsg:
  // Operation not permitted (kernel.dmesg_restrict = 1 and no CAP_SYSLOG)").
  // Set even when a fallback was read.
  std::string unreadable;
  int dmesg_restrict = -1;          // /proc/sys/kernel/dmesg_restrict; -1 unknown
  uint64_t bytes = 0;               // bytes of log text scanned
  std::vector<KernelEvent> events;  // folded, in order of first occurrence
  // Occurrences of events past the kMaxKernelEvents distinct ones kept:
  // counted, their events missing above.
  uint64_t unfolded = 0;
  // The events' age_s count back from the log's own newest line (a file from
  // elsewhere, a paste), not from when it was read: "before the log's end",
  // never "ago".
  bool ages_to_log_end = false;
  // "NVRM: GPU at PCI:0000:17:00: GPU-..." banners: PCI address -> UUID.
  std::map<std::string, std::string> gpu_uuids;
};

// --- NVLink fabric (NVSwitch systems) ----------------------------------------------

// One port of an InfiniBand device (/sys/class/infiniband/<dev>/ports/<n>).
struct IbPort {
  int port = 0;
  std::string state;       // "state": "4: ACTIVE", "1: DOWN"
  std::string link_layer;  // "InfiniBand", "Ethernet"
  // cap_mask bit 10, IsSMDisabled: the subnet manager may not run on this
  // port (the fabric manager's start script skips such ports).
  bool sm_disabled = false;
};

// A Mellanox PCI function that may be the NVLink management bridge of an
// NVLink5 baseboard (HGX/DGX B200, B300): a ConnectX-7 whose VPD carries
// SW_MNG. The NVSwitches sit behind it, not on the host's PCI bus.
struct NvlinkBridge {
  std::string bdf;     // "0000:05:00.1"
  std::string driver;  // "mlx5_core"; "" unbound
  // 1: its VPD names SW_MNG, 0: it does not, -1: VPD not readable (vpd_error).
  int switch_management = -1;
  std::string vpd_error;  // "cannot read /sys/bus/pci/devices/.../vpd: Permission denied"
  std::string ib_device;  // its InfiniBand device ("mlx5_10"); "" without mlx5_ib
  std::vector<IbPort> ports;
};

// What the probes saw of the NVLink fabric's software around the driver:
// the fabric manager's files, the NVLink5 management side, IMEX channels,
// and the fabric manager's own log. Which of it matters is the checks'
// business (facts/fabric.h).
struct FabricInfo {
  bool fm_binary = false;  // /usr/bin/nv-fabricmanager
  std::string fm_unit;  // the unit file found, "/lib/systemd/system/nvidia-fabricmanager.service"
  // A *.wants link to it under /etc/systemd/system: 1 enabled, 0 not, -1 no unit file.
  int fm_unit_enabled = -1;
  // The running fabric manager's /proc/PID/exe; " (deleted)" at its end when
  // the package replaced the binary under it. "" when none runs or unreadable.
  std::string fm_exe;
  bool nvlsm_binary = false;  // /opt/nvidia/nvlsm/sbin/nvlsm (package nvlsm)
  // /sys/class/infiniband_mad/abi_version exists: ib_umad is in the kernel.
  bool umad = false;
  std::vector<NvlinkBridge> bridges;  // Mellanox functions, sorted by bdf
  // /dev/nvidia-caps-imex-channels: its channel nodes ("channel0").
  bool imex_dir = false;
  std::vector<std::string> imex_channels;
  // Multi-node NVLink configured here: the IMEX daemon's node list
  // (/etc/nvidia-imex/nodes_config.cfg) exists.
  bool imex_configured = false;
  // /var/log/fabricmanager.log, decoded like a kernel log (kind
  // "fabric-manager"); read only where a fabric manager is expected.
  std::string log_path;   // "" not read
  std::string log_error;  // why it could not be read
  std::vector<KernelEvent> log_events;
};

// --- what a program reported -------------------------------------------------------

// An error line a program printed, as `explain` read it from pasted text:
// the codes go into the cuda/nvml fields, the line stays here as evidence.
struct ReportedError {
  // "cuda-runtime", "cuda-driver", "nvml", "fork-after-init",
  // "container-runtime", "nccl", ...
  std::string kind;
  int code = -1;     // the error number where the text has one
  std::string text;  // what the program said ("out of memory", "unsatisfied condition: cuda>=12.4")
  std::string line;  // the whole line as pasted
  int line_no = 0;   // 1-based line in the pasted text
};

// --- the snapshot -------------------------------------------------------------

struct Snapshot {
  std::string schema = kSnapshotSchema;
  std::string tool_version;
  std::string hostname;
  std::string taken_at;  // ISO 8601 UTC
  std::string root;      // --root used ("/" on a live machine); "" read from pasted text (explain)
  double deadline_s = 10;

  EnvInfo env;
  LimitsInfo limits;
  DriverInfo driver;
  std::vector<PciDevice> pci;          // NVIDIA functions only, sorted by bdf
  std::vector<PciBridge> pci_bridges;  // bridges above them, sorted by bdf
  IommuInfo iommu;
  std::vector<DevNode> devnodes;
  SecurityInfo security;
  ContainerInfo container;
  std::vector<ServiceInfo> services;
  std::vector<ProcessInfo> processes;  // NVIDIA-related processes and container engines only
  FabricInfo fabric;
  NvmlInfo nvml;
  CudaInfo cuda;
  WorkloadInfo workload;  // who uses each GPU
  KernelLogInfo kernel_log;
  std::vector<ReportedError> reported;  // explain: error lines from pasted text
  std::vector<ProbeRecord> probes;
  // Sources this snapshot did not observe ("driver", "nvml", ...): explain
  // sees only what the text shows. A check whose inputs are unobserved is
  // not run. Empty for a machine probed live.
  std::vector<std::string> unobserved;
};

}  // namespace gd
