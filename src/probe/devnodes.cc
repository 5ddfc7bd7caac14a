// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_devnodes(const ProbeOptions&, Snapshot*) { return {"devnodes", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
