// The Slurm sink (`gpudoctor check --slurm`, docs/slurm.md): given a report
// and this node's state as scontrol shows it, decide whether to drain the
// node, update the reason of a drain gpudoctor set, resume a node gpudoctor
// drained, or leave it alone. Pure: src/cli/slurm_health.cc reads the state
// and runs scontrol.
//
// The rules, in order:
// - gpudoctor only ever touches a drain whose reason starts with
//   "gpudoctor:". A node someone else drained, downed or failed keeps its
//   state and its reason, whatever the report says.
// - A finding at or above the drain severity (fail by default, --slurm-drain-on
//   warn adds warn) drains the node; the reason names the top-ranked such
//   finding and its GPUs. Draining lets running jobs finish (Slurm's DRAIN,
//   never DOWN).
// - A node gpudoctor drained is resumed only on evidence of health: no
//   finding at the drain severity and every probe answered (none failed or
//   timed out). A report that could not look (a failed or hung probe with no
//   finding that fails) changes nothing.
// - A node with no NVIDIA GPU on the PCI bus and no NVIDIA driver is not a
//   GPU node: nothing to judge (one HealthCheckProgram serves the cluster).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "util/result.h"

namespace gd {

// The prefix that marks a drain as gpudoctor's own.
inline constexpr std::string_view kSlurmReasonPrefix = "gpudoctor:";
// Reasons are cut to this many characters (sinfo shows them in one column).
inline constexpr size_t kSlurmReasonMax = 100;

struct SlurmNode {
  std::string name;    // NodeName=
  std::string state;   // State=, e.g. "IDLE+DRAIN", "DOWN+NOT_RESPONDING"
  std::string reason;  // Reason= without scontrol's " [user@time]"; "" none
};

// The output of `scontrol show node -o NAME`: one line per node; the line
// whose NodeName= is `name` ("" = the first). Error: no such line, or it has
// no State=.
Result<SlurmNode> parse_scontrol_node(std::string_view text, std::string_view name);

bool slurm_node_drained(const SlurmNode& n);         // DRAIN flag (drained or draining)
bool slurm_node_out_of_service(const SlurmNode& n);  // drained, DOWN or FAIL
bool drained_by_gpudoctor(const SlurmNode& n);       // reason starts with "gpudoctor:"

enum class SlurmAction { kNone, kDrain, kUpdateReason, kResume };
const char* slurm_action_name(SlurmAction a);  // "none", "drain", "update-reason", "resume"

struct SlurmPolicy {
  Severity drain_on = Severity::kFail;  // kFail or kWarn
};

struct SlurmDecision {
  SlurmAction action = SlurmAction::kNone;
  std::string reason;   // the drain reason (kDrain, kUpdateReason)
  std::string message;  // one line: what is done (or not) and why
};

SlurmDecision decide_slurm(const Report& r, const SlurmNode& node, const SlurmPolicy& policy);

// A resume decide_slurm chose, after the re-probe that must pass first
// (diag/reprobe.h): `failed` empty, the resume with `proof` added to its
// message; else no action, the node left drained, and why.
SlurmDecision after_reprobe(const SlurmDecision& resume, const SlurmNode& node,
                            const std::string& failed, const std::string& proof);

// "gpudoctor: xid.79 GPU 0000:17:00.0": printable ASCII without quotes or
// backslashes, at most kSlurmReasonMax characters.
std::string slurm_drain_reason(const Finding& f);

// scontrol's arguments for the action (empty for kNone): one argv each, no
// shell, so the reason needs no quoting.
std::vector<std::string> scontrol_update_args(const std::string& node, const SlurmDecision& d);

// Every failing finding says only that GPUs went missing or that NVML or
// CUDA did not start (gpu.missing, nvml.init-*, cuda.init-*), with no cause
// beside it: what a transient drop looks like. `check --slurm` probes again
// before it drains on such a report (--slurm-recheck).
bool only_count_symptoms(const Report& r);
// The line that says what the re-check after `after` ("20s") found.
std::string recheck_note(const Report& first, const Report& second, const std::string& after);

}  // namespace gd
