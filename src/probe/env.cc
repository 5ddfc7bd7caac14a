// STUB: to be replaced by the real probe.
#include "probe/probe.h"

namespace gd {

ProbeRecord probe_env(const ProbeOptions&, Snapshot*) { return {"env", ProbeStatus::kUnavailable, "not implemented", 0}; }

}  // namespace gd
