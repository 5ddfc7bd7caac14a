// STUB: to be replaced by the real NVML/CUDA child probes.
#include "probe/probe.h"

namespace gd {

void probe_hardware(const ProbeOptions&, Snapshot*) {}
int nvml_child_main(const std::string&) { return 1; }
int cuda_child_main(const std::string&, const std::string&, const std::string&) { return 1; }

}  // namespace gd
