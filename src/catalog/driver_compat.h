// Driver compatibility: which driver a CUDA toolkit needs, minor-version
// compatibility families, and which driver branches support which GPU
// architectures (and with which kernel module flavour).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu_models.h"

namespace gd {

// "550.54.14" -> {550, 54, 14}; "570.26" -> {570, 26, -1}.
struct DriverVersion {
  int major = 0;  // the branch, R550
  int minor = 0;
  int patch = -1;  // -1: two-part version
};

std::optional<DriverVersion> parse_driver_version(std::string_view text);
std::string to_string(const DriverVersion& v);
// <0, 0, >0 like strcmp; a missing patch counts as 0.
int compare(const DriverVersion& a, const DriverVersion& b);

// 12040 -> "12.4" (the encoding of cuDriverGetVersion/cudaRuntimeGetVersion).
std::string cuda_version_text(int cuda_version);

// One row of the CUDA release notes' "Toolkit Driver Version" table.
struct ToolkitDriver {
  int cuda_version;        // 12040
  const char* release;     // "12.4 GA"
  const char* min_driver;  // "550.54.14" (Linux x86_64)
};

const std::vector<ToolkitDriver>& toolkit_driver_table();
// The GA row of a toolkit minor (the least any release of that minor needs);
// nullptr when the table has no row for it.
const ToolkitDriver* toolkit_min_driver(int cuda_version);
// The newest CUDA version (e.g. 12040) whose toolkit a driver supports
// natively; 0 when the driver is older than every row.
int max_cuda_for_driver(const DriverVersion& driver);

// Minor-version compatibility family (CUDA 11.x, 12.x, 13.x).
struct MinorCompatFamily {
  int cuda_major;
  int min_branch;          // 525 for 12.x
  const char* min_driver;  // "525.60.13"
  int end_branch;          // first branch outside the family's range; 0 = none
};
const MinorCompatFamily* minor_compat_family(int cuda_major);

// Can a runtime of version `runtime` (12080) run on a driver that reports
// CUDA `driver_cuda` (cuDriverGetVersion, 12040)?
enum class RuntimeFit {
  kNative,       // driver_cuda >= runtime
  kMinorCompat,  // same major, driver at or above the family minimum
  kTooOld,       // expect cudaErrorInsufficientDriver (35)
  kUnknown,      // a version is unknown (0)
};
// `driver` (the module version) refines the family-minimum test where known.
RuntimeFit runtime_fit(int runtime, int driver_cuda, const std::optional<DriverVersion>& driver);

// Driver branch support for an architecture.
struct ArchBranches {
  GpuArch arch;
  int first_branch;         // first branch with support (0 unknown)
  int last_branch;          // last branch with support; 0 = still supported
  bool open_module;         // the open kernel module supports it (Turing+)
  bool proprietary_module;  // the proprietary module supports it
};
const ArchBranches* arch_branches(GpuArch arch);

struct ArchVerdict {
  bool supported = true;
  std::string reason;  // why not, one clause: "Kepler is last supported by R470"
  std::string fix;     // one step: "install the R470 driver (nvidia-driver-470)"
};
ArchVerdict driver_supports(GpuArch arch, bool model_requires_open, const DriverVersion& driver,
                            bool open_module);

}  // namespace gd
