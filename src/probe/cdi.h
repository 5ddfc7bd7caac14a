// CDI specs (Container Device Interface, /etc/cdi and /var/run/cdi): what
// podman, containerd, CRI-O and docker's CDI mode inject for a device such
// as nvidia.com/gpu=all. A spec names host paths (device nodes, driver
// libraries) as they were when it was generated; a driver upgrade or a GPU
// gone leaves it naming paths that no longer exist, and containers then
// fail to start (docs/containers.md "CDI specs").
#pragma once

#include <string_view>

#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

// The parts of one spec the checks compare: its kind, device names, every
// deviceNodes path and every mounts hostPath, the devices' and the common
// edits' alike. YAML (the subset nvidia-ctk writes: block mappings and
// sequences, plain or quoted scalars) or JSON. Error: neither, or no
// "kind" (one line).
Result<CdiSpec> parse_cdi_spec(std::string_view text);

}  // namespace gd
