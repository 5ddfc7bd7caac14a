// Sources (transcribed 2026-12):
//  - docs/nvidia-facts.md §9 "PCI device IDs" (NVIDIA
//    open-gpu-kernel-modules README supported-GPU table; pci.ids as mirrored
//    in gpud; compute capability from https://developer.nvidia.com/cuda-gpus).
//  - Forward compatibility support: nvidia-facts.md §5.3 (CUDA compatibility
//    guide: "NVIDIA data-center GPUs, select NGC-Server-Ready RTX SKUs, and
//    Jetson"); GeForce and workstation boards -> not supported (error 804).
//  - Open kernel module requirement: nvidia-facts.md §5.4 (Grace Hopper and
//    Blackwell need the open modules).
//  - Rows marked "pci.ids" (older and consumer GPUs that the facts file does
//    not list, needed to judge driver-branch support): public copies of the
//    pci.ids database, checked 2026-12; their compute capability from the
//    same NVIDIA cuda-gpus page.
#include "catalog/gpu_models.h"

#include <vector>

namespace gd {
namespace {

constexpr Support Y = Support::kYes;
constexpr Support N = Support::kNo;
constexpr Support U = Support::kUnknown;

// clang-format off
const std::vector<GpuModel> kModels = {
  // id      name                                   chip     arch                 cc      dc     fwd open
  // §9 (facts)
  {0x2204, "NVIDIA GeForce RTX 3090",               "GA102", GpuArch::kAmpere,    8, 6,  false, N, false},
  {0x2203, "NVIDIA GeForce RTX 3090 Ti",            "GA102", GpuArch::kAmpere,    8, 6,  false, N, false},
  {0x2684, "NVIDIA GeForce RTX 4090",               "AD102", GpuArch::kAda,       8, 9,  false, N, false},
  {0x2685, "NVIDIA GeForce RTX 4090 D",             "AD102", GpuArch::kAda,       8, 9,  false, N, false},
  {0x2b85, "NVIDIA GeForce RTX 5090",               "GB202", GpuArch::kBlackwell, 12, 0, false, N, true},
  {0x2b87, "NVIDIA GeForce RTX 5090 D",             "GB202", GpuArch::kBlackwell, 12, 0, false, N, true},
  {0x2b8c, "NVIDIA GeForce RTX 5090 D v2",          "GB202", GpuArch::kBlackwell, 12, 0, false, N, true},
  {0x20b0, "NVIDIA A100-SXM4-40GB",                 "GA100", GpuArch::kAmpere,    8, 0,  true,  Y, false},
  {0x20b2, "NVIDIA A100-SXM4-80GB",                 "GA100", GpuArch::kAmpere,    8, 0,  true,  Y, false},
  {0x20f1, "NVIDIA A100-PCIE-40GB",                 "GA100", GpuArch::kAmpere,    8, 0,  true,  Y, false},
  {0x20b1, "NVIDIA A100-PCIE-40GB",                 "GA100", GpuArch::kAmpere,    8, 0,  true,  Y, false},
  {0x20b5, "NVIDIA A100 80GB PCIe",                 "GA100", GpuArch::kAmpere,    8, 0,  true,  Y, false},
  {0x20b7, "NVIDIA A30",                            "GA100", GpuArch::kAmpere,    8, 0,  true,  Y, false},
  {0x2331, "NVIDIA H100 PCIe",                      "GH100", GpuArch::kHopper,    9, 0,  true,  Y, false},
  {0x2330, "NVIDIA H100 80GB HBM3",                 "GH100", GpuArch::kHopper,    9, 0,  true,  Y, false},
  {0x2321, "NVIDIA H100 NVL",                       "GH100", GpuArch::kHopper,    9, 0,  true,  Y, false},
  {0x2339, "NVIDIA H100",                           "GH100", GpuArch::kHopper,    9, 0,  true,  Y, false},
  {0x2335, "NVIDIA H200",                           "GH100", GpuArch::kHopper,    9, 0,  true,  Y, false},
  {0x233b, "NVIDIA H200 NVL",                       "GH100", GpuArch::kHopper,    9, 0,  true,  Y, false},
  {0x2342, "NVIDIA GH200 120GB",                    "GH100", GpuArch::kHopper,    9, 0,  true,  Y, true},
  {0x2348, "NVIDIA GH200 144G HBM3e",               "GH100", GpuArch::kHopper,    9, 0,  true,  Y, true},
  {0x2901, "NVIDIA B200",                           "GB100", GpuArch::kBlackwell, 10, 0, true,  Y, true},
  {0x2941, "NVIDIA GB200",                          "GB100", GpuArch::kBlackwell, 10, 0, true,  Y, true},
  {0x31c2, "NVIDIA B300",                           "GB110", GpuArch::kBlackwell, 10, 3, true,  Y, true},
  {0x31c3, "NVIDIA GB300",                          "GB110", GpuArch::kBlackwell, 10, 3, true,  Y, true},
  {0x2bb1, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "GB202", GpuArch::kBlackwell, 12, 0, false, N, true},
  {0x2bb4, "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "GB202", GpuArch::kBlackwell, 12, 0, false, N, true},
  {0x2bb5, "NVIDIA RTX PRO 6000 Blackwell Server Edition", "GB202", GpuArch::kBlackwell, 12, 0, true, U, true},
  {0x27b8, "NVIDIA L4",                             "AD104", GpuArch::kAda,       8, 9,  true,  Y, false},
  {0x26b9, "NVIDIA L40S",                           "AD102", GpuArch::kAda,       8, 9,  true,  Y, false},
  {0x26b5, "NVIDIA L40",                            "AD102", GpuArch::kAda,       8, 9,  true,  Y, false},
  {0x2236, "NVIDIA A10",                            "GA102", GpuArch::kAmpere,    8, 6,  true,  Y, false},
  {0x2237, "NVIDIA A10G",                           "GA102", GpuArch::kAmpere,    8, 6,  true,  Y, false},
  {0x2235, "NVIDIA A40",                            "GA102", GpuArch::kAmpere,    8, 6,  true,  Y, false},
  {0x1eb8, "Tesla T4",                              "TU104", GpuArch::kTuring,    7, 5,  true,  Y, false},
  {0x1db1, "Tesla V100-SXM2-16GB",                  "GV100", GpuArch::kVolta,     7, 0,  true,  Y, false},
  {0x1db4, "Tesla V100-PCIE-16GB",                  "GV100", GpuArch::kVolta,     7, 0,  true,  Y, false},
  {0x1db5, "Tesla V100-SXM2-32GB",                  "GV100", GpuArch::kVolta,     7, 0,  true,  Y, false},
  {0x1db6, "Tesla V100-PCIE-32GB",                  "GV100", GpuArch::kVolta,     7, 0,  true,  Y, false},
  {0x1df6, "Tesla V100S-PCIE-32GB",                 "GV100", GpuArch::kVolta,     7, 0,  true,  Y, false},
  {0x1db8, "Tesla V100-SXM3-32GB",                  "GV100", GpuArch::kVolta,     7, 0,  true,  Y, false},
  // pci.ids (see header comment)
  {0x1023, "Tesla K40m",                            "GK110B", GpuArch::kKepler,   3, 5,  true,  Y, false},
  {0x102d, "Tesla K80",                             "GK210", GpuArch::kKepler,    3, 7,  true,  Y, false},
  {0x1431, "Tesla M4",                              "GM206", GpuArch::kMaxwell,   5, 2,  true,  Y, false},
  {0x15f7, "Tesla P100-PCIE-12GB",                  "GP100", GpuArch::kPascal,    6, 0,  true,  Y, false},
  {0x15f8, "Tesla P100-PCIE-16GB",                  "GP100", GpuArch::kPascal,    6, 0,  true,  Y, false},
  {0x15f9, "Tesla P100-SXM2-16GB",                  "GP100", GpuArch::kPascal,    6, 0,  true,  Y, false},
  {0x1b38, "Tesla P40",                             "GP102", GpuArch::kPascal,    6, 1,  true,  Y, false},
  {0x1b80, "NVIDIA GeForce GTX 1080",               "GP104", GpuArch::kPascal,    6, 1,  false, N, false},
  {0x1b06, "NVIDIA GeForce GTX 1080 Ti",            "GP102", GpuArch::kPascal,    6, 1,  false, N, false},
  {0x2206, "NVIDIA GeForce RTX 3080",               "GA102", GpuArch::kAmpere,    8, 6,  false, N, false},
  {0x2702, "NVIDIA GeForce RTX 4080 SUPER",         "AD103", GpuArch::kAda,       8, 9,  false, N, false},
};
// clang-format on

}  // namespace

const char* arch_name(GpuArch a) {
  switch (a) {
    case GpuArch::kKepler:
      return "Kepler";
    case GpuArch::kMaxwell:
      return "Maxwell";
    case GpuArch::kPascal:
      return "Pascal";
    case GpuArch::kVolta:
      return "Volta";
    case GpuArch::kTuring:
      return "Turing";
    case GpuArch::kAmpere:
      return "Ampere";
    case GpuArch::kAda:
      return "Ada";
    case GpuArch::kHopper:
      return "Hopper";
    case GpuArch::kBlackwell:
      return "Blackwell";
    case GpuArch::kRubin:
      return "Rubin";
    case GpuArch::kUnknown:
      break;
  }
  return "unknown";
}

// nvmlDeviceArchitecture_t, nvidia-facts.md §4.3: 2 Kepler, 3 Maxwell,
// 4 Pascal, 5 Volta, 6 Turing, 7 Ampere, 8 Ada, 9 Hopper, 10 Blackwell, 13 Rubin.
GpuArch arch_from_nvml(int nvml_arch) {
  switch (nvml_arch) {
    case 2:
      return GpuArch::kKepler;
    case 3:
      return GpuArch::kMaxwell;
    case 4:
      return GpuArch::kPascal;
    case 5:
      return GpuArch::kVolta;
    case 6:
      return GpuArch::kTuring;
    case 7:
      return GpuArch::kAmpere;
    case 8:
      return GpuArch::kAda;
    case 9:
      return GpuArch::kHopper;
    case 10:
      return GpuArch::kBlackwell;
    case 13:
      return GpuArch::kRubin;
    default:
      return GpuArch::kUnknown;
  }
}

// Compute capability per architecture, nvidia-facts.md §5.4.
GpuArch arch_from_cc(int cc_major, int cc_minor) {
  switch (cc_major) {
    case 3:
      return GpuArch::kKepler;
    case 5:
      return GpuArch::kMaxwell;
    case 6:
      return GpuArch::kPascal;
    case 7:
      return cc_minor >= 5 ? GpuArch::kTuring : GpuArch::kVolta;
    case 8:
      return cc_minor == 9 ? GpuArch::kAda : GpuArch::kAmpere;
    case 9:
      return GpuArch::kHopper;
    case 10:
    case 11:
    case 12:
      return GpuArch::kBlackwell;
    default:
      return GpuArch::kUnknown;
  }
}

const GpuModel* find_gpu_model(uint16_t device_id) {
  for (const auto& m : kModels) {
    if (m.device_id == device_id) return &m;
  }
  return nullptr;
}

}  // namespace gd
