// libFuzzer target: a snapshot file as `check --from` reads it
// (snapshot/snapshot_json.h), whose reader keeps at most 1024 GPUs of a list
// while it parses and stops past 2,000,000 JSON values. Any bytes either give
// a snapshot or are refused with one line; a snapshot never holds more GPUs
// than that cap, whatever the file listed.
//
//   {"schema":"gpudoctor.snapshot/v1","nvml":{"attempted":true,"device_count":4,
//    "gpus":[{"index":0,"pci_bus_id":{"rc":0,"value":"00000000:01:00.0"}, ...}]}, ...}
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/invariants.h"
#include "snapshot/snapshot_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto snap = gd::snapshot_from_string(text);
  if (!snap.ok()) {
    GD_REQUIRE(!snap.error().empty());
    GD_REQUIRE(snap.error().find('\n') == std::string::npos);
    return 0;
  }
  constexpr size_t kCap = 1024;  // kMaxSnapshotGpus in snapshot_json.cc
  GD_REQUIRE(snap->nvml.gpus.size() <= kCap);
  for (const auto& run : snap->cuda.runs) GD_REQUIRE(run.devices.size() <= kCap);
  return 0;
}
