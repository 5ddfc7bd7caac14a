// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_container(const ProbeOptions&, Snapshot*) { return {"container", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
