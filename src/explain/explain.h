// explain: pasted text (error output, tracebacks, dmesg, nvidia-smi output,
// NCCL and container-runtime messages) -> the snapshot fields the probes
// fill -> the same checks -> a Report. One brain, not two.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "snapshot/snapshot.h"

namespace gd {

// Fills kernel_log, cuda, nvml, env and reported from the text; every source
// the text says nothing about goes into Snapshot::unobserved.
Snapshot snapshot_from_text(std::string_view raw);

// Runs the checks whose inputs the snapshot observed, adds the causes its
// error codes point at but cannot decide ("possible", with what to run
// next), and ranks causes before symptoms. report.snapshot points at s.
Report explain_snapshot(const Snapshot& s, const Config& c);

// Every id explain can name: its rules' candidates and explain.unattributed.
std::vector<std::string> explain_ids();

}  // namespace gd
