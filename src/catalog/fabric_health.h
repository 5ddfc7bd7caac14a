// NVML's fabric health of a GPU (nvmlGpuFabricInfo_v2/v3 healthMask and
// healthSummary), decoded. Transcribed 2026-12 from nvml.h (NVML API 13,
// R570+: NVML_GPU_FABRIC_HEALTH_MASK_* and NVML_GPU_FABRIC_HEALTH_SUMMARY_*),
// read through the public bindings of rust-nvml/nvml-wrapper#142 and the
// NVML reference (https://docs.nvidia.com/deploy/nvml-api/structnvmlGpuFabricInfo__v3__t.html).
// Each field is (mask >> SHIFT) & WIDTH; WIDTH is a mask, not a bit count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gd {

struct FabricHealthIssue {
  std::string text;  // "bandwidth degraded", the nvidia-smi -q row in words
  bool fatal;        // the GPU cannot use the fabric as meant (else: reduced)
};

// The problems a health mask reports; empty when none (or none supported).
std::vector<FabricHealthIssue> fabric_health_issues(uint32_t mask);

// healthSummary: "not supported", "healthy", "unhealthy", "limited capacity".
const char* fabric_health_summary_name(int summary);
inline constexpr int kFabricSummaryUnhealthy = 2;
inline constexpr int kFabricSummaryLimited = 3;

}  // namespace gd
