#include "catalog/fabric_health.h"

#include <iterator>

namespace gd {

namespace {

// A two-bit flag: 0 NOT_SUPPORTED, 1 TRUE (the problem is there), 2 FALSE.
struct Flag {
  int shift;
  const char* text;  // the nvidia-smi -q row it is
  bool fatal;
};
constexpr uint32_t kFlagWidth = 0x3;
constexpr int kFlagTrue = 1;
// clang-format off
constexpr Flag kFlags[] = {
    {0, "bandwidth degraded (Bandwidth)", false},                               // _DEGRADED_BW
    {2, "route recovery in progress (Route Recovery in progress)", false},      // _ROUTE_RECOVERY
    {4, "a route is unhealthy (Route Unhealthy)", true},                        // _ROUTE_UNHEALTHY
    {6, "access timeout recovery (Access Timeout Recovery)", false},            // _ACCESS_TIMEOUT_RECOVERY
};
// clang-format on

// NVML_GPU_FABRIC_HEALTH_MASK_*_INCORRECT_CONFIGURATION: shift 8, width 0xf.
constexpr int kConfigShift = 8;
constexpr uint32_t kConfigWidth = 0xf;
constexpr const char* kConfigValues[] = {
    nullptr,                      // 0 NOT_SUPPORTED
    nullptr,                      // 1 NONE
    "incorrect system GUID",      // 2 INCORRECT_SYSGUID
    "incorrect chassis serial",   // 3 INCORRECT_CHASSIS_SN
    "no partition",               // 4 NO_PARTITION
    "insufficient NVLinks",       // 5 INSUFFICIENT_NVLINKS
    "incompatible GPU firmware",  // 6 INCOMPATIBLE_GPU_FW (newer headers)
    "invalid location",           // 7 INVALID_LOCATION (newer headers)
};

}  // namespace

std::vector<FabricHealthIssue> fabric_health_issues(uint32_t mask) {
  std::vector<FabricHealthIssue> out;
  for (const Flag& f : kFlags) {
    if (((mask >> f.shift) & kFlagWidth) == kFlagTrue) out.push_back({f.text, f.fatal});
  }
  uint32_t config = (mask >> kConfigShift) & kConfigWidth;
  if (config >= 2) {
    std::string what = config < std::size(kConfigValues)
                           ? kConfigValues[config]
                           : "configuration value " + std::to_string(config);
    out.push_back({"incorrect configuration: " + what + " (Incorrect Configuration)", true});
  }
  return out;
}

const char* fabric_health_summary_name(int summary) {
  switch (summary) {
    case 0:
      return "not supported";
    case 1:
      return "healthy";
    case 2:
      return "unhealthy";
    case 3:
      return "limited capacity";
    default:
      return "unknown";
  }
}

}  // namespace gd
