// libFuzzer target: the health-threshold config file (config/config.h,
// TOML through toml++). Any text either loads into a Config whose values
// are in their documented ranges or is refused with one line naming the
// file; it never crashes or throws.
//
//   [thermal]
//   gpu_warn_c = 85
//   [model."RTX 4090"]
//   thermal.gpu_fail_c = 94
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "fuzz/invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = gd::parse_config(text, "fuzz.toml");
  if (!c.ok()) {
    GD_REQUIRE(c.error().starts_with("fuzz.toml"));
    GD_REQUIRE(c.error().find('\n') == std::string::npos);
    return 0;
  }
  for (const auto* t : {&c->health}) {
    GD_REQUIRE(t->gpu_margin_c >= 0 && t->memory_margin_c >= 0);
    GD_REQUIRE(t->power_limit_info_pct >= 0 && t->power_limit_info_pct <= 100);
  }
  for (const auto& m : c->models) {
    GD_REQUIRE(!m.match.empty());
    GD_REQUIRE(m.thresholds.gpu_margin_c >= 0);
  }
  GD_REQUIRE(c->pcie_load_utilization_pct >= 0 && c->pcie_load_utilization_pct <= 100);
  return 0;
}
