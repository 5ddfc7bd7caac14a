// Queries over the workload probe's record of a GPU's processes, shared by
// the probe's context gate and the checks: one wording of a process's job.
#pragma once

#include <cstdint>
#include <string>

#include "snapshot/snapshot.h"

namespace gd {

// The process with this pid as the workload probe read it; nullptr when it
// has none.
const GpuProcess* find_gpu_process(const WorkloadInfo& w, uint32_t pid);

// "slurm job 4711", "kubernetes pod 5c1d2e3f-...", "container 0123456789ab"
// (a container id's first 12 digits, as docker shows it); "" no job.
std::string job_text(const GpuProcess& p);

}  // namespace gd
