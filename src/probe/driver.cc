// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_driver(const ProbeOptions&, Snapshot*) { return {"driver", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
