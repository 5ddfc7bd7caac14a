// Which GPUs the CUDA probe may open a context on (DESIGN.md "A running job
// is sacred"). A context costs a job hundreds of MiB of GPU memory, and on
// an EXCLUSIVE_PROCESS GPU one we hold can make the job's own start fail;
// gpudoctor runs every minute on nodes where jobs run. So a context is
// opened only where NVML answered for the GPU and shows it idle: no compute
// or graphics process, compute mode DEFAULT. Anything else, unknown
// included, is a GPU we do not touch, and the reason is recorded in
// CudaDevice::ctx_skipped.
//
// The parent decides (context_gate, pure) and sends the answer to the CUDA
// probe child as one line of JSON on its stdin, after the child's
// context-free reads (cuInit, the count, each device's attributes):
//   {"allow": ["0000:17:00.0"], "deny": {"0000:41:00.0": "busy: 1 process (pid 4711)"},
//    "other": "NVML lists no GPU at this bus id: whether it is busy is unknown"}
// "other" is the reason for a bus id in neither list.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct ContextGate {
  std::vector<std::string> allow;           // normalized bus ids ("0000:17:00.0")
  std::map<std::string, std::string> deny;  // bus id -> why no context there
  std::string other;                        // why none on a bus id in neither
};

// The longest gate line the child reads (64 GPUs with long reasons fit many
// times over).
inline constexpr size_t kMaxContextGateBytes = 64u << 10;

// ctx_skipped of the CUDA probe child run without a gate (--contexts none:
// topo, the C library), which needs CUDA's device order only.
inline constexpr const char* kNoContextAsked = "no context asked for (device order only)";

// The gate from NVML's answer; `workload` (when filled) names the job and
// user behind each pid in a reason. NVML as a whole not answering denies
// every GPU through `other`.
ContextGate context_gate(const NvmlInfo& nvml, const WorkloadInfo& workload);
// Every GPU denied, for `reason` ("NVML did not answer within 6.0 s: ...").
ContextGate deny_all_contexts(const std::string& reason);
// Why no context on `bus_id` (normalized; "" unknown: `other`); "" = allowed.
std::string context_denied(const ContextGate& gate, const std::string& bus_id);

// The gate as one line of JSON, ending in '\n'.
std::string context_gate_line(const ContextGate& gate);
// The gate from that line (without its '\n'). Error: not JSON, not an
// object, or "allow" not a list of strings, "deny" not an object of
// strings, "other" not a string. A line without "allow" allows nothing.
Result<ContextGate> parse_context_gate(std::string_view line);

}  // namespace gd
