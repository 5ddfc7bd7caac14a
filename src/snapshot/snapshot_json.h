// JSON form of the snapshot (gpudoctor.snapshot/v1).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

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

// The probe children's answers (one NvmlInfo / CudaRun each); never throw.
nlohmann::json nvml_info_to_json(const NvmlInfo& info);
Result<NvmlInfo> nvml_info_from_json(const nlohmann::json& j);
nlohmann::json cuda_run_to_json(const CudaRun& run);
Result<CudaRun> cuda_run_from_json(const nlohmann::json& j);

const char* probe_status_name(ProbeStatus s);  // "ok", "unavailable", "failed", "timed-out"
const char* pci_kind_name(PciKind k);          // "gpu", "nvswitch", "audio", "bridge", "other"

}  // namespace gd
