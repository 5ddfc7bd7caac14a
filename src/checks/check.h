// The check interface. A check is a pure function of the snapshot and the
// config: no I/O, no clock, no globals. One check per file in src/checks/,
// each listed once in registry.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/finding.h"
#include "snapshot/snapshot.h"

namespace gd {

// Thresholds and knobs the checks read. Defaults suit datacenter and
// consumer machines alike.
struct Config {
  // memory.held-by-other-process: warn when other processes hold more than
  // this share of a GPU's memory.
  double memory_held_fraction = 0.9;
  // memory.address-space-limit: CUDA reserves virtual address space for
  // every GPU's memory plus host memory (unified addressing); below this many
  // bytes over that sum an RLIMIT_AS is suspicious even before a failure.
  uint64_t address_space_headroom_bytes = 8ULL << 30;
  // Kernel-log events whose last occurrence is older than this many seconds
  // no longer fail a node: an Xid handled hours ago must not keep a healthy
  // node drained forever. 2 h, as the Azure HPC node health checks use.
  double kernel_log_window_s = 2 * 3600;
  // pcie.errors: this many corrected AER errors on one link within the
  // window are a warning (a poor link), fewer are info.
  int pcie_corrected_warn_count = 10;
};

using CheckFn = std::vector<Finding> (*)(const Snapshot&, const Config&);

struct CheckEntry {
  const char* name;              // "driver-loaded"
  const char* description;       // one line, for --list-checks and the docs
  std::vector<std::string> ids;  // finding ids it may emit
  CheckFn fn;
  // Snapshot sources the check reads ("driver", "pci", "nvml", "cuda",
  // "kernel-log", ...; the probe names). When one of them is in
  // Snapshot::unobserved (explain), the check is not run.
  std::vector<std::string> needs = {};
};

// The one registry table, in a stable order.
const std::vector<CheckEntry>& all_checks();

}  // namespace gd
