// libFuzzer target: a CDI spec file as the container probe reads it
// (probe/cdi.h), YAML or JSON. Any bytes either give a spec with a kind or
// are refused with one line; nothing it returns is larger than its input.
//
//   ---
//   cdiVersion: 0.5.0
//   kind: nvidia.com/gpu
//   devices:
//   - name: "0"
//     containerEdits:
//       deviceNodes:
//       - path: /dev/nvidia0
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "probe/cdi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = gd::parse_cdi_spec(text);
  if (!spec.ok()) {
    GD_REQUIRE(!spec.error().empty());
    GD_REQUIRE(spec.error().find('\n') == std::string::npos);
    return 0;
  }
  GD_REQUIRE(!spec->kind.empty());
  size_t total = spec->kind.size();
  for (const auto* list : {&spec->devices, &spec->device_nodes, &spec->host_paths}) {
    for (const std::string& s : *list) total += s.size();
  }
  GD_REQUIRE(total <= size);
  return 0;
}
