#include "snapshot/gpu_process.h"

#include <algorithm>

namespace gd {

const GpuProcess* find_gpu_process(const WorkloadInfo& w, uint32_t pid) {
  auto p = std::find_if(w.processes.begin(), w.processes.end(),
                        [&](const GpuProcess& x) { return x.pid == pid; });
  return p == w.processes.end() ? nullptr : &*p;
}

std::string job_text(const GpuProcess& p) {
  if (p.job_id.empty()) return "";
  if (p.job_kind == "slurm") return "slurm job " + p.job_id;
  if (p.job_kind == "kubernetes") return "kubernetes pod " + p.job_id;
  if (p.job_kind == "container") return "container " + p.job_id.substr(0, 12);
  return (p.job_kind.empty() ? std::string("job") : p.job_kind) + " " + p.job_id;
}

}  // namespace gd
