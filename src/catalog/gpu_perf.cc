// Datasheet figures per GPU model, for gpudoctor diag's expected figures.
//
// Sources (transcribed 2026-12; dense figures, i.e. the datasheets' "with
// sparsity" values halved; FP16/BF16 with FP32 accumulate):
//  [V100]  NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2 / PCIe /
//          V100S PCIe columns); "Tensor Performance" is FP16 multiply with
//          FP32 accumulate (NVIDIA Tesla V100 GPU Architecture whitepaper).
//  [T4]    NVIDIA T4 Tensor Core GPU datasheet.
//  [A100]  NVIDIA A100 Tensor Core GPU datasheet (A100 40GB/80GB PCIe and
//          SXM columns; NVLink 600 GB/s per GPU, both directions together;
//          "NVLink Bridge for 2 GPUs: 600 GB/s" on the PCIe boards).
//  [A30]   NVIDIA A30 Tensor Core GPU datasheet (NVLink bridge 200 GB/s).
//  [A10]   NVIDIA A10 Tensor Core GPU datasheet.
//  [A40]   NVIDIA A40 datasheet (NVLink 112.5 GB/s bidirectional).
//  [L4]    NVIDIA L4 Tensor Core GPU datasheet.
//  [L40]   NVIDIA L40 GPU datasheet; [L40S] NVIDIA L40S GPU datasheet.
//  [H100]  NVIDIA H100 Tensor Core GPU datasheet (SXM, PCIe and NVL
//          columns) and the NVIDIA H100 Tensor Core GPU Architecture
//          whitepaper (H100 SXM5: FP16/BF16 with FP32 accumulate 989.4,
//          TF32 494.7, FP32 66.9 TFLOP/s). NVLink 900 GB/s per SXM GPU;
//          NVL and PCIe bridges 600 GB/s.
//  [H200]  NVIDIA H200 Tensor Core GPU datasheet (H200 SXM and H200 NVL
//          columns; NVL: "2- or 4-way NVIDIA NVLink bridge: 900 GB/s per GPU").
//  [GA102] NVIDIA Ampere GA102 GPU Architecture whitepaper, RTX 3090 column.
//  [AD102] NVIDIA Ada GPU Architecture whitepaper, RTX 4090 column.
// GeForce boards run FP16/BF16 tensor math with FP32 accumulate at half the
// FP16-accumulate rate (the whitepapers list both): the FP32-accumulate
// figure is the one here (RTX 4090: 165.2, not 330.3).
// NVLink figures are per GPU, per direction: half the datasheets' totals.
//
// Left out on purpose (the peer comparison still covers these GPUs):
//  - tensor and FP32 figures of the power-capped boards T4 (70 W), L4 (72 W)
//    and A10 (150 W): under a sustained GEMM their clocks sit far below
//    boost, so what a healthy board reaches varies too much for a floor;
//    their memory bandwidth is kept.
//  - L40 / L40S tensor figures: their datasheets do not say which
//    accumulate precision the FP16/BF16 figure is for.
//  - GH200 memory (the two SKUs' HBM3 / HBM3e bandwidths could not be tied
//    to the device ids with certainty), B200 / B300 / GB200 and the RTX 5090
//    (no datasheet with per-GPU dense figures checked), H100 0x2339 (which
//    SKU is ambiguous), RTX 3090 NVLink (bridge rate not checked).
#include "catalog/gpu_perf.h"

#include <cmath>
#include <iterator>
#include <vector>

namespace gd {
namespace {

// clang-format off
const std::vector<GpuPerf> kPerf = {
  // id      name                       fp32   tf32   fp16   bf16   mem GB/s nvlink source
  {0x1db1, "Tesla V100-SXM2-16GB",      15.7,     0, 125.0,     0,   900.0, 150.0, "[V100] SXM2"},
  {0x1db5, "Tesla V100-SXM2-32GB",      15.7,     0, 125.0,     0,   900.0, 150.0, "[V100] SXM2"},
  {0x1db4, "Tesla V100-PCIE-16GB",      14.0,     0, 112.0,     0,   900.0,     0, "[V100] PCIe"},
  {0x1db6, "Tesla V100-PCIE-32GB",      14.0,     0, 112.0,     0,   900.0,     0, "[V100] PCIe"},
  {0x1df6, "Tesla V100S-PCIE-32GB",     16.4,     0, 130.0,     0,  1134.0,     0, "[V100] V100S PCIe"},
  {0x1eb8, "Tesla T4",                     0,     0,     0,     0,   320.0,     0, "[T4]"},
  {0x20b0, "NVIDIA A100-SXM4-40GB",     19.5, 156.0, 312.0, 312.0,  1555.0, 300.0, "[A100] 40GB SXM"},
  {0x20b2, "NVIDIA A100-SXM4-80GB",     19.5, 156.0, 312.0, 312.0,  2039.0, 300.0, "[A100] 80GB SXM"},
  {0x20f1, "NVIDIA A100-PCIE-40GB",     19.5, 156.0, 312.0, 312.0,  1555.0, 300.0, "[A100] 40GB PCIe"},
  {0x20b1, "NVIDIA A100-PCIE-40GB",     19.5, 156.0, 312.0, 312.0,  1555.0, 300.0, "[A100] 40GB PCIe"},
  {0x20b5, "NVIDIA A100 80GB PCIe",     19.5, 156.0, 312.0, 312.0,  1935.0, 300.0, "[A100] 80GB PCIe"},
  {0x20b7, "NVIDIA A30",                10.3,  82.0, 165.0, 165.0,   933.0, 100.0, "[A30]"},
  {0x2236, "NVIDIA A10",                   0,     0,     0,     0,   600.0,     0, "[A10]"},
  {0x2235, "NVIDIA A40",                37.4,  74.8, 149.7, 149.7,   696.0, 56.25, "[A40]"},
  {0x27b8, "NVIDIA L4",                    0,     0,     0,     0,   300.0,     0, "[L4]"},
  {0x26b5, "NVIDIA L40",                90.5,     0,     0,     0,   864.0,     0, "[L40]"},
  {0x26b9, "NVIDIA L40S",               91.6,     0,     0,     0,   864.0,     0, "[L40S]"},
  {0x2330, "NVIDIA H100 80GB HBM3",     66.9, 494.7, 989.4, 989.4,  3350.0, 450.0, "[H100] SXM"},
  {0x2331, "NVIDIA H100 PCIe",          51.0, 378.0, 756.5, 756.5,  2000.0, 300.0, "[H100] PCIe"},
  {0x2321, "NVIDIA H100 NVL",           60.0, 417.5, 835.5, 835.5,  3900.0, 300.0, "[H100] NVL"},
  {0x2335, "NVIDIA H200",               66.9, 494.7, 989.4, 989.4,  4800.0, 450.0, "[H200] SXM"},
  {0x233b, "NVIDIA H200 NVL",           60.0, 417.5, 835.5, 835.5,  4800.0, 450.0, "[H200] NVL"},
  {0x2342, "NVIDIA GH200 120GB",        66.9, 494.7, 989.4, 989.4,       0,     0, "[H100] SXM (GH200 runs the H100 SXM's GPU at the same clocks)"},
  {0x2348, "NVIDIA GH200 144G HBM3e",   66.9, 494.7, 989.4, 989.4,       0,     0, "[H100] SXM (GH200 runs the H100 SXM's GPU at the same clocks)"},
  {0x2204, "NVIDIA GeForce RTX 3090",   35.6,  35.6,  71.0,  71.0,   936.0,     0, "[GA102] RTX 3090"},
  {0x2684, "NVIDIA GeForce RTX 4090",   82.6,  82.6, 165.2, 165.2,  1008.0,     0, "[AD102] RTX 4090"},
};
// clang-format on

// The shares a healthy card reaches, as floors: a figure below its floor is
// a finding, so each is set below the lowest a healthy board of any row
// reaches; the peer comparison (diag/evaluate.h outlier_fraction) catches
// the milder cases.
const HealthyShare kShare = {
    // cuBLAS large bf16/fp16/tf32 GEMMs reach ~0.65-0.8 of the dense peak
    // on H100 SXM and ~0.9 on A100 SXM; the PCIe and NVL boards (H100 PCIe
    // 350 W, A100 PCIe 250 W, A30 165 W, A40 300 W) hold their clocks below
    // boost under their power limit and land near 0.6-0.7.
    .gemm_tensor = 0.50,
    // SIMT SGEMM reaches ~0.75 (H100) to ~0.9 (V100, A100) of the FP32
    // peak on the HBM parts, but GA10x/AD10x count two FP32 datapaths per
    // SM partition, one shared with INT32, so SGEMM there reaches only
    // ~0.6-0.7 of the doubled peak (RTX 3090 ~24 of 35.6 TFLOP/s, RTX 4090
    // ~55 of 82.6), less on a power-capped A40.
    .gemm_fp32 = 0.40,
    // A device-to-device copy (read + write counted, as bandwidthTest does)
    // reaches ~0.85-0.9 of the HBM bandwidth; on GDDR6 boards with ECC on
    // (the data-center default: T4, A10, A40, L4, L40) ~0.7-0.8.
    .memory = 0.60,
    // Pinned host copies reach ~0.8-0.87 of the raw link rate (TLP headers
    // and flow control take the rest: 12-13 GB/s on gen3 x16, 25-26 on gen4
    // x16, 50-55 on gen5 x16); d2h is a little lower on some root complexes.
    .pcie = 0.65,
    // cudaMemcpyPeer over NVLink reaches ~0.8-0.87 of the per-direction rate
    // (H100 over NVSwitch ~370-390 of 450 GB/s; A100 ~240-260 of 300).
    .nvlink = 0.60,
    // NCCL all-reduce bus bandwidth at large sizes reaches ~0.75-0.85 of the
    // slowest link of its ring (more with NVLink SHARP on NVSwitch systems).
    .nccl_busbw = 0.50,
};

}  // namespace

const GpuPerf* find_gpu_perf(uint16_t device_id) {
  for (const auto& p : kPerf) {
    if (p.device_id == device_id) return &p;
  }
  return nullptr;
}

const HealthyShare& healthy_share() { return kShare; }

// PCIe Base Specification: 2.5 and 5 GT/s use 8b/10b, 8 to 32 GT/s
// 128b/130b; 64 GT/s (gen 6, PAM4) moves 242 payload bytes per 256-byte FLIT.
// PCIe Base Specification; the speeds of nvidia-facts.md §7.2 (2026-12).
double pcie_gen_gts(uint32_t gen) {
  static const double kGts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  return gen < std::size(kGts) ? kGts[gen] : 0;
}

double pcie_link_bytes_per_s(double speed_gts, int width) {
  if (width <= 0 || width > 32) return 0;
  struct Code {
    double gts, efficiency;
  };
  static const Code kCodes[] = {{2.5, 8.0 / 10},     {5.0, 8.0 / 10},     {8.0, 128.0 / 130},
                                {16.0, 128.0 / 130}, {32.0, 128.0 / 130}, {64.0, 242.0 / 256}};
  for (const Code& c : kCodes) {
    if (std::fabs(speed_gts - c.gts) < 0.05) return width * c.gts * 1e9 * c.efficiency / 8;
  }
  return 0;
}

}  // namespace gd
