// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_pci(const ProbeOptions&, Snapshot*) { return {"pci", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
