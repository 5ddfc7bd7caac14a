// Sources (transcribed 2026-12 via docs/nvidia-facts.md §5):
//  - §5.1 CUDA Toolkit Release Notes, Table 3 "Toolkit Driver Version"
//    (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html),
//    Linux x86_64 column.
//  - §5.2 Minor-version compatibility
//    (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
//  - §5.4 Driver branch support per architecture (NVIDIA Unix driver
//    deprecation notes: R470 last for Kepler; "580 series will be the last to
//    support GPUs based on the Maxwell, Pascal, and Volta architectures"; open
//    kernel modules need Turing or newer; Blackwell and Grace Hopper need the
//    open modules; first branches per the open-gpu-kernel-modules README).
#include "catalog/driver_compat.h"

#include <charconv>

namespace gd {

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
  int parts[3] = {0, 0, -1};
  int n = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end && n < 3) {
    int v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || next == p || v < 0) return std::nullopt;
    parts[n++] = v;
    p = next;
    if (p == end) break;
    if (*p != '.') return std::nullopt;
    ++p;
    if (p == end) return std::nullopt;
  }
  if (p != end || n < 2) return std::nullopt;
  return DriverVersion{parts[0], parts[1], parts[2]};
}

// NVIDIA prints the parts after the branch with two digits ("470.42.01").
std::string to_string(const DriverVersion& v) {
  auto two = [](int x) { return (x < 10 ? "0" : "") + std::to_string(x); };
  std::string out = std::to_string(v.major) + "." + two(v.minor);
  if (v.patch >= 0) out += "." + two(v.patch);
  return out;
}

int compare(const DriverVersion& a, const DriverVersion& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  int ap = a.patch < 0 ? 0 : a.patch;
  int bp = b.patch < 0 ? 0 : b.patch;
  if (ap != bp) return ap < bp ? -1 : 1;
  return 0;
}

std::string cuda_version_text(int cuda_version) {
  if (cuda_version <= 0) return "unknown";
  return std::to_string(cuda_version / 1000) + "." + std::to_string((cuda_version % 1000) / 10);
}

const std::vector<ToolkitDriver>& toolkit_driver_table() {
  // clang-format off
  static const std::vector<ToolkitDriver> kTable = {
    {11000, "11.0.1 RC", "450.36.06"}, {11000, "11.0.2 GA", "450.51.05"}, {11000, "11.0.3 U1", "450.51.06"},
    {11010, "11.1 GA", "455.23"}, {11010, "11.1.1 U1", "455.32"},
    {11020, "11.2.0 GA", "460.27.03"}, {11020, "11.2.1 / 11.2.2", "460.32.03"},
    {11030, "11.3.0 / 11.3.1", "465.19.01"},
    {11040, "11.4.0 GA", "470.42.01"}, {11040, "11.4 U1 / U2", "470.57.02"}, {11040, "11.4 U3 / U4", "470.82.01"},
    {11050, "11.5 GA / U1 / U2", "495.29.05"},
    {11060, "11.6 GA", "510.39.01"}, {11060, "11.6 U1 / U2", "510.47.03"},
    {11070, "11.7 GA", "515.43.04"}, {11070, "11.7 U1", "515.48.07"},
    {11080, "11.8 GA", "520.61.05"},
    {12000, "12.0 GA", "525.60.13"}, {12000, "12.0 U1", "525.85.12"},
    {12010, "12.1 GA / U1", "530.30.02"},
    {12020, "12.2 GA", "535.54.03"}, {12020, "12.2 U1", "535.86.09"}, {12020, "12.2 U2", "535.104.05"},
    {12030, "12.3 GA", "545.23.06"}, {12030, "12.3 U1", "545.23.08"},
    {12040, "12.4 GA", "550.54.14"}, {12040, "12.4 U1", "550.54.15"},
    {12050, "12.5 GA", "555.42.02"}, {12050, "12.5 U1", "555.42.06"},
    {12060, "12.6 GA", "560.28.03"}, {12060, "12.6 U1 / U2", "560.35.03"}, {12060, "12.6 U3", "560.35.05"},
    {12080, "12.8 GA", "570.26"}, {12080, "12.8 U1", "570.124.06"},
    {12090, "12.9 GA", "575.51.03"}, {12090, "12.9 U1", "575.57.08"},
    {13000, "13.0 GA", "580.65.06"}, {13000, "13.0 U1", "580.82.07"}, {13000, "13.0 U2", "580.95.05"},
    {13010, "13.1 GA", "590.44.01"}, {13010, "13.1 U1", "590.48.01"},
    {13020, "13.2 GA", "595.45.04"}, {13020, "13.2 U1", "595.58.03"},
  };
  // clang-format on
  return kTable;
}

const ToolkitDriver* toolkit_min_driver(int cuda_version) {
  // Rows are in release order, so the first row of a minor is its least.
  for (const auto& row : toolkit_driver_table()) {
    if (row.cuda_version == cuda_version) return &row;
  }
  return nullptr;
}

int max_cuda_for_driver(const DriverVersion& driver) {
  int best = 0;
  for (const auto& row : toolkit_driver_table()) {
    auto need = parse_driver_version(row.min_driver);
    if (need && compare(driver, *need) >= 0 && row.cuda_version > best) best = row.cuda_version;
  }
  return best;
}

const MinorCompatFamily* minor_compat_family(int cuda_major) {
  // clang-format off
  static const MinorCompatFamily kFamilies[] = {
    {13, 580, "580.65.06", 0},
    {12, 525, "525.60.13", 580},
    {11, 450, "450.80.02", 525},
  };
  // clang-format on
  for (const auto& f : kFamilies) {
    if (f.cuda_major == cuda_major) return &f;
  }
  return nullptr;
}

RuntimeFit runtime_fit(int runtime, int driver_cuda, const std::optional<DriverVersion>& driver) {
  if (runtime <= 0 || driver_cuda <= 0) return RuntimeFit::kUnknown;
  if (driver_cuda >= runtime) return RuntimeFit::kNative;
  if (driver_cuda / 1000 != runtime / 1000) return RuntimeFit::kTooOld;
  const MinorCompatFamily* fam = minor_compat_family(runtime / 1000);
  if (fam == nullptr) return RuntimeFit::kTooOld;  // before CUDA 11: no minor compat
  if (driver) {
    auto min = parse_driver_version(fam->min_driver);
    if (min && compare(*driver, *min) < 0) return RuntimeFit::kTooOld;
  }
  return RuntimeFit::kMinorCompat;
}

const ArchBranches* arch_branches(GpuArch arch) {
  // clang-format off
  static const ArchBranches kArch[] = {
    // arch                first  last  open   proprietary
    {GpuArch::kKepler,     0,     470,  false, true},
    {GpuArch::kMaxwell,    0,     580,  false, true},
    {GpuArch::kPascal,     367,   580,  false, true},
    {GpuArch::kVolta,      384,   580,  false, true},
    {GpuArch::kTuring,     410,   0,    true,  true},
    {GpuArch::kAmpere,     450,   0,    true,  true},
    {GpuArch::kAda,        520,   0,    true,  true},
    {GpuArch::kHopper,     520,   0,    true,  true},
    {GpuArch::kBlackwell,  570,   0,    true,  false},
  };
  // clang-format on
  for (const auto& a : kArch) {
    if (a.arch == arch) return &a;
  }
  return nullptr;
}

ArchVerdict driver_supports(GpuArch arch, bool model_requires_open, const DriverVersion& driver,
                            bool open_module) {
  ArchVerdict v;
  const ArchBranches* b = arch_branches(arch);
  if (b == nullptr) return v;  // unknown: no claim
  std::string name = arch_name(arch);
  std::string branch = "R" + std::to_string(driver.major);
  if (b->last_branch != 0 && driver.major > b->last_branch) {
    v.supported = false;
    v.reason = name + " GPUs are supported up to driver branch R" + std::to_string(b->last_branch) +
               "; this driver is " + branch;
    v.fix = "install the R" + std::to_string(b->last_branch) +
            " branch driver with the proprietary kernel module (e.g. sudo apt install "
            "nvidia-driver-" +
            std::to_string(b->last_branch) + ")";
    return v;
  }
  if (b->first_branch != 0 && driver.major < b->first_branch) {
    v.supported = false;
    v.reason = name + " GPUs need driver branch R" + std::to_string(b->first_branch) +
               " or newer; this driver is " + branch;
    v.fix = "install a newer driver (R" + std::to_string(b->first_branch) + " or later)";
    return v;
  }
  if (open_module && !b->open_module) {
    v.supported = false;
    v.reason = "the open kernel module supports Turing and newer only; " + name +
               " GPUs need the proprietary module";
    v.fix =
        "install the proprietary kernel module of the same branch (e.g. sudo apt install "
        "nvidia-driver-" +
        std::to_string(driver.major) + " instead of nvidia-driver-" + std::to_string(driver.major) +
        "-open)";
    return v;
  }
  if (!open_module && (!b->proprietary_module || model_requires_open)) {
    v.supported = false;
    v.reason = "this GPU needs the open kernel module; the proprietary module is loaded";
    v.fix =
        "install the open kernel module of the same branch (e.g. sudo apt install "
        "nvidia-driver-" +
        std::to_string(driver.major) + "-open)";
    return v;
  }
  return v;
}

}  // namespace gd
