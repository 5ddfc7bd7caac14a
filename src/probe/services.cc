// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_services(const ProbeOptions&, Snapshot*) { return {"services", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
