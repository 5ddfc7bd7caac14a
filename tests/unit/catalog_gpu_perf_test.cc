// catalog/gpu_perf.h: the datasheet table agrees with gpu_models, its
// figures are positive and ordered as the hardware is, the healthy shares
// are floors (well below 1), and PCIe link rates are the spec's.
#include <gtest/gtest.h>

#include <string>

#include "catalog/findings.h"
#include "catalog/gpu_models.h"
#include "catalog/gpu_perf.h"

namespace gd {
namespace {

// Every device id of gpu_models.cc, to walk the table through its public
// lookup (the rows are not exported).
std::vector<uint16_t> all_ids() {
  std::vector<uint16_t> out;
  for (uint32_t id = 0; id <= 0xffff; ++id) {
    if (find_gpu_perf(static_cast<uint16_t>(id)) != nullptr)
      out.push_back(static_cast<uint16_t>(id));
  }
  return out;
}

TEST(CatalogGpuPerf, EveryRowIsAKnownModelWithSaneFigures) {
  std::vector<uint16_t> ids = all_ids();
  EXPECT_GE(ids.size(), 20u);
  for (uint16_t id : ids) {
    const GpuPerf* p = find_gpu_perf(id);
    SCOPED_TRACE(p->name);
    const GpuModel* m = find_gpu_model(id);
    ASSERT_NE(m, nullptr) << "device id 0x" << std::hex << id << " is not in gpu_models";
    EXPECT_STREQ(p->name, m->name);
    EXPECT_NE(std::string(p->source), "");
    for (double v : {p->fp32_tflops, p->tf32_tflops, p->fp16_tflops, p->bf16_tflops, p->memory_gbs,
                     p->nvlink_gbs}) {
      EXPECT_GE(v, 0);
    }
    EXPECT_TRUE(p->fp32_tflops > 0 || p->memory_gbs > 0) << "a row with no figure";
    // Tensor math is at least as fast as SIMT FP32; BF16 and FP16 at least TF32.
    if (p->tf32_tflops > 0) {
      EXPECT_GE(p->tf32_tflops, p->fp32_tflops);
    }
    if (p->fp16_tflops > 0) {
      EXPECT_GE(p->fp16_tflops, p->fp32_tflops);
    }
    if (p->bf16_tflops > 0 && p->tf32_tflops > 0) {
      EXPECT_GE(p->bf16_tflops, p->tf32_tflops);
    }
    if (p->fp16_tflops > 0 && p->tf32_tflops > 0) {
      EXPECT_GE(p->fp16_tflops, p->tf32_tflops);
    }
    // No BF16 before Ampere, no TF32 either.
    if (m->cc_major < 8) {
      EXPECT_EQ(p->bf16_tflops, 0);
      EXPECT_EQ(p->tf32_tflops, 0);
    }
    // Dense figures: nothing above 1.0 PFLOP/s for these generations; a
    // sparse figure would be.
    EXPECT_LT(p->bf16_tflops, 1000);
    EXPECT_LT(p->memory_gbs, 10000);
    // NVLink per direction is below the memory bandwidth.
    if (p->nvlink_gbs > 0 && p->memory_gbs > 0) {
      EXPECT_LT(p->nvlink_gbs, p->memory_gbs);
    }
  }
}

TEST(CatalogGpuPerf, KnownFigures) {
  const GpuPerf* h100 = find_gpu_perf(0x2330);
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->bf16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(h100->nvlink_gbs, 450);
  const GpuPerf* h200 = find_gpu_perf(0x2335);
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->memory_gbs, 4800);
  // GeForce: the FP32-accumulate rate, half the FP16-accumulate one.
  const GpuPerf* rtx4090 = find_gpu_perf(0x2684);
  ASSERT_NE(rtx4090, nullptr);
  EXPECT_DOUBLE_EQ(rtx4090->bf16_tflops, 165.2);
  EXPECT_DOUBLE_EQ(rtx4090->nvlink_gbs, 0);
  EXPECT_DOUBLE_EQ(find_gpu_perf(0x20b2)->nvlink_gbs, 300);
  EXPECT_DOUBLE_EQ(find_gpu_perf(0x1db1)->nvlink_gbs, 150);
  EXPECT_EQ(find_gpu_perf(0x9999), nullptr);
}

TEST(CatalogGpuPerf, HealthySharesAreConservativeFloors) {
  const HealthyShare& s = healthy_share();
  for (double v : {s.gemm_tensor, s.gemm_fp32, s.memory, s.pcie, s.nvlink, s.nccl_busbw}) {
    EXPECT_GT(v, 0.3);
    EXPECT_LE(v, 0.75);  // a healthy card reaches 0.8 and more of the others
  }
}

TEST(CatalogGpuPerf, PcieLinkRates) {
  EXPECT_NEAR(pcie_link_bytes_per_s(8.0, 16), 15.75e9, 0.1e9);
  EXPECT_NEAR(pcie_link_bytes_per_s(16.0, 16), 31.5e9, 0.1e9);
  EXPECT_NEAR(pcie_link_bytes_per_s(32.0, 16), 63.0e9, 0.1e9);
  EXPECT_NEAR(pcie_link_bytes_per_s(32.0, 8), 31.5e9, 0.1e9);
  EXPECT_NEAR(pcie_link_bytes_per_s(2.5, 16), 4.0e9, 0.01e9);  // 8b/10b
  EXPECT_NEAR(pcie_link_bytes_per_s(5.0, 1), 0.5e9, 0.01e9);
  EXPECT_NEAR(pcie_link_bytes_per_s(64.0, 16), 121.0e9, 0.1e9);  // 242/256 FLIT
  EXPECT_EQ(pcie_link_bytes_per_s(0, 16), 0);
  EXPECT_EQ(pcie_link_bytes_per_s(12.0, 16), 0);
  EXPECT_EQ(pcie_link_bytes_per_s(32.0, 0), 0);
}

TEST(CatalogGpuPerf, DiagIdsAreInTheCatalog) {
  for (const char* id :
       {"perf.compute-slow", "perf.memory-bandwidth-slow", "perf.pcie-slow", "memory.test-failed",
        "compute.mismatch", "p2p.slow", "nccl.slow", "diag.incomplete", "clocks.throttled"}) {
    const CatalogEntry* e = find_catalog_entry(id);
    ASSERT_NE(e, nullptr) << id;
    // Ranked after the init and health causes they may follow from.
    if (std::string(id) != "diag.incomplete" && std::string(id) != "clocks.throttled") {
      EXPECT_GT(e->rank, find_catalog_entry("ecc.rows-pending")->rank) << id;
    }
  }
  EXPECT_TRUE(find_catalog_entry("diag.incomplete")->symptom);
}

}  // namespace
}  // namespace gd
