// Internals of the file probes, exposed for their unit tests: the pure
// parsers of each source and the probe bodies that take an explicit RootFs
// (and credentials) instead of the ProbeOptions root and this process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/rootfs.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

// Collects what went wrong while reading a probe's sources and turns it into
// the ProbeRecord: garbled content -> kFailed, else a missing primary source
// -> kUnavailable, else kOk. The detail lists every note, "; "-separated
// (an ok probe may carry notes about secondary sources it could not read).
class ProbeNotes {
 public:
  void unavailable(const std::string& what) { add(what), missing_ = true; }
  void garbled(const std::string& what) { add(what), garbled_ = true; }
  void note(const std::string& what) { add(what); }
  // A field left unset because its input was not observed; the probe goes
  // "unavailable" but keeps every field it did read.
  void gap(std::string field, std::string reason);
  // `count` lines of `source` that no parser recognised ("/proc/modules").
  void unrecognised(int count, const std::string& source);
  ProbeRecord record(std::string name) const;

 private:
  void add(const std::string& what);
  std::string detail_;
  std::vector<FieldGap> gaps_;
  int unrecognised_ = 0;
  bool missing_ = false;
  bool garbled_ = false;
};

// --- env ---------------------------------------------------------------------
bool env_name_allowed(std::string_view name);
// The value recorded for an allowed variable: as it is, bounded, or its shape
// ("<redacted: 40 chars>") when it is not of its variable's kind.
std::string env_value_kept(std::string_view name, std::string_view value);
// envp: a NULL-terminated "NAME=value" array, like environ.
EnvInfo filter_env(const char* const* envp);
inline constexpr size_t kEnvValueMaxBytes = 16 * 1024;

// --- this process: credentials and rlimits (process_identity.cc) --------------
// Live root: this process, by system call. Recorded root: the tree's
// /proc/self/status and /proc/self/limits when it has them, so a recorded
// machine has a fixed user and ulimit; else this process.
struct Credentials {
  uint32_t euid = 0;
  uint32_t egid = 0;
  std::vector<uint32_t> groups;  // supplementary
  uint32_t uid = 0;              // real uid
  // In a user namespace (a rootless container) root overrides the mode bits
  // only of nodes whose owner is mapped into it (capable_wrt_inode_uidgid).
  bool user_namespace = false;
};
Credentials process_credentials();
// /proc/self/status "Uid:", "Gid:" and "Groups:" lines; nullopt when garbled.
std::optional<Credentials> parse_proc_status_credentials(std::string_view text);
// *problem: why a recorded /proc/self/status was not used ("" when fine).
Credentials credentials_at(const RootFs& fs, std::string* problem);
// /proc/self/uid_map: false for the initial namespace's identity map
// ("0 0 4294967295"), true for any other map; nullopt when garbled or empty.
std::optional<bool> parse_uid_map_is_namespace(std::string_view text);
// SELinux mode, this process's security label and its user namespace.
SecurityInfo security_at(const RootFs& fs);

struct ProcessRlimits {
  std::optional<uint64_t> as_bytes;  // soft RLIMIT_AS; nullopt = unlimited
  std::optional<uint64_t> data_bytes;
  std::optional<uint64_t> as_hard_bytes;  // hard limits: how far the soft ones may be raised
  std::optional<uint64_t> data_hard_bytes;
};
ProcessRlimits process_rlimits();
// This process's VmSize and VmData (/proc/self/status), and their parser.
VmUsage process_vm_usage();
VmUsage parse_proc_status_vm(std::string_view text);
// /proc/self/limits "Max address space" and "Max data size" soft limits.
std::optional<ProcessRlimits> parse_proc_limits(std::string_view text);
ProcessRlimits rlimits_at(const RootFs& fs, std::string* problem);

// --- limits --------------------------------------------------------------------
struct CgroupRef {
  std::string v2_path;          // "0::/path" line
  std::string memory_v1_path;   // "N:memory:/path" line (v1 or hybrid)
  std::string devices_v1_path;  // "N:devices:/path" line
};
CgroupRef parse_proc_cgroup(std::string_view text);
ProbeRecord probe_limits_files(const RootFs& fs, Snapshot* s);  // the /proc and /sys part

// --- driver --------------------------------------------------------------------
struct NvidiaVersion {
  std::string version;  // "550.54.14"
  std::string line;     // the NVRM version line
  bool open_module = false;
};
std::optional<NvidiaVersion> parse_nvidia_version(std::string_view text);
// Keeps nvidia*, nouveau and nv_peer_mem; *malformed counts the lines that are
// not "name size refcount users state [address] [taint]" (refcount and users
// may be "-"). A malformed line naming a kept module still lists it, with
// state "" and refcount unknown: unrecognised is never "absent".
std::vector<ModuleInfo> parse_proc_modules(std::string_view text, int* malformed);
std::map<std::string, std::string> parse_nvidia_params(std::string_view text, int* malformed);
std::map<std::string, int> parse_proc_devices_char(std::string_view text);
ProbeRecord probe_driver_at(const RootFs& fs, Snapshot* s);

// --- pci -------------------------------------------------------------------------
struct GpuProcInformation {
  std::string model;
  std::string uuid;
  std::optional<int> minor;
  bool excluded = false;
};
GpuProcInformation parse_gpu_information(std::string_view text);
PciKind pci_kind_of_class(uint32_t class_code);
ProbeRecord probe_pci_at(const RootFs& fs, Snapshot* s);

// --- devnodes --------------------------------------------------------------------
// Read+write permission from the mode bits alone, the way the kernel picks
// the owner, group or other class; euid 0 may always open.
bool can_open_rw(uint32_t mode, uint32_t owner_uid, uint32_t owner_gid, const Credentials& c);
// A recorded tree's stand-in for a device node: "char 195:0 0666 0:0".
struct RecordedNode {
  bool is_char = false;
  int major = -1;
  int minor = -1;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string refused;  // "EACCES", "EPERM", "" (see DevNode::kernel_refused)
};
Result<RecordedNode> parse_recorded_node(std::string_view text);
// creds.user_namespace is taken from the tree's (or this process's) uid_map.
ProbeRecord probe_devnodes_at(const RootFs& fs, Credentials creds, Snapshot* s);

// --- container --------------------------------------------------------------------
ProbeRecord probe_container_at(const RootFs& fs, Snapshot* s);
// "libcuda.so.550.54.14" -> "550.54.14"; nullopt for sonames ("libcuda.so.1").
std::optional<std::string> driver_library_version(std::string_view file_name);

// --- services --------------------------------------------------------------------
inline constexpr size_t kMaxPids = 100000;
ProbeRecord probe_services_at(const RootFs& fs, Snapshot* s);
// "Version: 550.54.15-1" of the first installed nvidia-fabricmanager* package.
std::optional<std::string> fabricmanager_version_from_dpkg(std::string_view status_text);

// --- fabric (after services: it reads the fabric manager's pid) ------------------------
ProbeRecord probe_fabric_at(const RootFs& fs, Snapshot* s);

}  // namespace gd
