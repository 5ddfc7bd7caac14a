// What a healthy GPU of a model reaches: datasheet peaks (dense, FP32
// accumulate) and memory bandwidth, with the share of them a healthy card
// sustains in gpudoctor diag's tests. The sources are named in gpu_perf.cc.
#pragma once

#include <cstdint>

namespace gd {

struct GpuPerf {
  uint16_t device_id;  // PCI device id, vendor 0x10de (as gpu_models.h)
  const char* name;
  // Dense tensor / SIMT peaks at boost clock, TFLOP/s; 0 = none or unknown.
  double fp32_tflops;  // SIMT FP32 (no tensor cores)
  double tf32_tflops;
  double fp16_tflops;  // FP16 inputs, FP32 accumulate
  double bf16_tflops;  // BF16 inputs, FP32 accumulate
  double memory_gbs;   // device memory bandwidth, GB/s (1e9 bytes/s)
  double nvlink_gbs;   // NVLink per GPU per direction, GB/s; 0 = none
  const char* source;  // the datasheet or whitepaper
};

// nullptr for a device id without a row.
const GpuPerf* find_gpu_perf(uint16_t device_id);

// The share of a peak a healthy card reaches in gpudoctor diag's tests (the
// floor below which a figure is a finding). Why each value: gpu_perf.cc.
struct HealthyShare {
  double gemm_tensor;  // tf32, fp16, bf16 GEMM vs the tensor peak
  double gemm_fp32;    // SIMT fp32 GEMM vs the FP32 peak
  double memory;       // d2d copy (read + write) vs the memory bandwidth
  double pcie;         // pinned h2d/d2h vs the trained link's raw rate
  double nvlink;       // P2P copy vs the NVLink per-direction rate
  double nccl_busbw;   // all-reduce bus bandwidth vs the P2P path's rate
};
const HealthyShare& healthy_share();

// PCIe generation (1..6) -> GT/s per lane; 0 for an unknown generation.
double pcie_gen_gts(uint32_t gen);

// Raw PCIe rate of a link, per direction, bytes/s: lanes x GT/s x the line
// code (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s; PAM4 gen 6 counted at
// its 242/256 FLIT efficiency). 0 for an unknown speed or width.
double pcie_link_bytes_per_s(double speed_gts, int width);

}  // namespace gd
