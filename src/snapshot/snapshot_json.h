// JSON form of the snapshot (gpudoctor.snapshot/v1).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

nlohmann::json snapshot_to_json(const Snapshot& s);
std::string snapshot_to_string(const Snapshot& s);  // pretty, trailing newline

// Never throws: a malformed or foreign document gives an Error naming the
// problem ("not a gpudoctor snapshot", "field nvml.gpus[0].index: ...").
Result<Snapshot> snapshot_from_json(const nlohmann::json& j);
Result<Snapshot> snapshot_from_string(const std::string& text);
Result<Snapshot> snapshot_from_file(const std::string& path);

const char* probe_status_name(ProbeStatus s);  // "ok", "unavailable", "failed", "timed-out"
const char* pci_kind_name(PciKind k);          // "gpu", "nvswitch", "audio", "bridge", "other"

}  // namespace gd
