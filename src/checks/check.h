// The check interface. A check is a pure function of the snapshot and the
// config: no I/O, no clock, no globals. One check per file in src/checks/,
// each listed once in registry.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "config/config.h"
#include "snapshot/snapshot.h"

namespace gd {

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
  // It reads the Linux kernel driver's own traces (its module, /proc and
  // /dev entries, nvidia_uvm): under WSL, where the Windows driver serves
  // the GPU and none of them exist, it answers n/a (check `wsl` instead).
  bool linux_driver = false;
};

// The one registry table, in a stable order.
const std::vector<CheckEntry>& all_checks();

}  // namespace gd
