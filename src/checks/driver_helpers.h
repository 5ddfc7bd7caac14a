// Helpers shared by the driver, CUDA-library, device-node and container
// checks. Pure functions over the snapshot, like checks/util.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/driver_compat.h"
#include "catalog/gpu_models.h"
#include "checks/check.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {

// The NVIDIA kernel driver is present: /proc/driver/nvidia, the module, or
// nvidiactl in /proc/devices.
bool nvidia_driver_loaded(const Snapshot& s);
// The nvidia module's character device in /proc/devices ("nvidiactl",
// "nvidia", "nvidia-frontend"); "" when none is registered.
std::string nvidia_char_device(const Snapshot& s);
// Why the snapshot's module list may miss a module that is in the kernel:
// "/proc/modules could not be read (...)", "2 unrecognised lines in
// /proc/modules"; "" when /proc/modules was read and understood whole. A
// module missing from a doubtful list is "not seen", never "not loaded".
std::string module_list_doubt(const Snapshot& s);
// Where and how a module was seen, for evidence: "/proc/modules: nvidia_uvm
// Live, refcount -", "/sys/module/nvidia: built into the kernel".
std::string module_evidence(const ModuleInfo& m);
// True when the user's CUDA run started: cuInit, cuDeviceGetCount and the
// first context of every device it listed succeeded, the devices it opened
// no context on (ctx_skipped: in use by a job) aside, and at least one
// context was opened. Then nothing CUDA's start needs (driver, nvidia_uvm,
// device nodes) can be missing.
bool cuda_started_for_user(const Snapshot& s);
// The kernel module version, parsed; nullopt when unknown.
std::optional<DriverVersion> kernel_driver_version(const Snapshot& s);
// The kernel module's version as text: /proc/driver/nvidia/version's, else
// NVML's (nvmlInit succeeds only when the library and the module are the same
// version), with *from saying which. "" when neither is known.
std::string module_version(const Snapshot& s, std::string* from);

bool contains(std::string_view haystack, std::string_view needle);

// "10de:2684"
std::string pci_id_text(const PciDevice& d);
// Best known model name: /proc/driver/nvidia, NVML, then the catalog.
std::string gpu_name(const Snapshot& s, const PciDevice& d);
// "0000:01:00.0 NVIDIA GeForce RTX 4090 (10de:2684)"
std::string gpu_label(const Snapshot& s, const PciDevice& d);
// Architecture from the PCI device id, else NVML's architecture or cc.
GpuArch gpu_arch(const Snapshot& s, const PciDevice& d);

// The version in a driver library's file name:
// "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14" -> "550.54.14". nullopt
// when the name carries no driver version ("libcuda.so.1", "libcuda.so").
std::optional<std::string> library_file_version(std::string_view path);

// A GPU's own device node: /dev/nvidia0, /dev/nvidia1, ... (not nvidiactl,
// nvidia-uvm or nvidia-caps).
bool is_gpu_node(std::string_view path);

// NVIDIA_DRIVER_CAPABILITIES' entries, trimmed and lower-cased, empty
// ones left out ("compute, Utility" -> {"compute", "utility"}).
std::vector<std::string> driver_capability_list(const std::string& value);
// NVIDIA_DRIVER_CAPABILITIES grants `cap` ("compute", "utility"): listed,
// in any case, or "all"; unset, the container toolkit's default
// "utility,compute" applies.
bool driver_capability(const Snapshot& s, std::string_view cap);

// The directory part of a path ("/a/b/libcuda.so" -> "/a/b").
std::string dir_name(std::string_view path);

// A CUDA toolkit stubs directory (".../lib64/stubs"), whose libcuda.so is
// the link-time stub, not a driver.
bool is_stub_dir(std::string_view dir);
// A forward-compatibility package's directory (".../cuda-12.8/compat").
bool is_compat_dir(std::string_view dir);

// LD_LIBRARY_PATH with every entry for which `drop` holds removed.
// Entries are compared without trailing slashes.
template <class Pred>
std::string filter_path_list(std::string_view list, Pred drop) {
  std::vector<std::string> keep;
  for (auto& e : split_strings(list, ':')) {
    if (e.empty() || drop(e)) continue;
    keep.push_back(e);
  }
  return join(keep, ":");
}
// "export LD_LIBRARY_PATH=..." or "unset LD_LIBRARY_PATH" when empty.
std::string ld_library_path_command(const std::string& new_value);

// True when any of cuInit, cuDeviceGetCount, cudaGetDeviceCount of the run
// returned `code`.
bool run_has_rc(const CudaRun* r, int code);
// cudaGetDeviceCount as frameworks print it: "Error 2: out of memory".
std::string framework_error_text(int cudart_rc);
// " [cudaErrorMemoryAllocation]", "" for an unknown code.
std::string runtime_name_suffix(int cudart_rc);
// "cuInit: CUDA_ERROR_UNKNOWN (999)" / "cudaGetDeviceCount: Error 999: ..."
// lines for the run's failing calls.
std::vector<std::string> cuda_error_lines(const CudaRun& r);

// GPU minors known from /proc/driver/nvidia/gpus or NVML, with the bus id.
struct KnownMinor {
  int minor;
  std::string bdf;
};
std::vector<KnownMinor> known_gpu_minors(const Snapshot& s);

// "3 h 12 min", "45 s"
std::string format_seconds(double seconds);

// True when a probe child's child_error says it hit the deadline ("timeout ...").
bool child_timed_out(const std::string& child_error);
// The snapshot's probe deadline as said to the user: "10", "1.5".
std::string deadline_text(const Snapshot& s);

}  // namespace gd
