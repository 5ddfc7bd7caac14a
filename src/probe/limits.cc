// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_limits(const ProbeOptions&, Snapshot*) { return {"limits", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
