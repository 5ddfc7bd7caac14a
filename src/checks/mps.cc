// mps.unreachable: MPS is in play (CUDA_MPS_PIPE_DIRECTORY set, or an MPS
// daemon runs) but CUDA clients cannot reach the control daemon; cuInit then
// fails with 805-810 (nvidia-facts §3, §6.1).
#include <fmt/format.h>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "mps.unreachable";
constexpr const char* kDefaultPipeDir = "/tmp/nvidia-mps";

// CUDA_ERROR_MPS_CONNECTION_FAILED (805) .. CUDA_ERROR_MPS_CLIENT_TERMINATED (810).
int mps_error(const CudaRun* u) {
  if (u == nullptr) return 0;
  for (int code = 805; code <= 810; ++code) {
    if (run_failed_with(*u, code)) return code;
  }
  return 0;
}

// /proc/PID/comm keeps 15 characters, so nvidia-cuda-mps-control and
// nvidia-cuda-mps-server both read "nvidia-cuda-mps".
std::vector<std::string> mps_processes(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& p : s.processes) {
    if (p.comm.rfind("nvidia-cuda-mps", 0) == 0) {
      out.push_back(fmt::format("{} (pid {})", p.comm, p.pid));
    }
  }
  return out;
}

}  // namespace

std::vector<Finding> check_mps(const Snapshot& s, const Config&) {
  const std::string* pipe = env_var(s, "CUDA_MPS_PIPE_DIRECTORY");
  const ServiceInfo* svc = find_service(s, "nvidia-cuda-mps-control");
  std::vector<std::string> procs = mps_processes(s);
  const CudaRun* u = user_cuda_run(s);
  int err = mps_error(u);
  bool daemon = (svc != nullptr && svc->running) || !procs.empty();
  if (pipe == nullptr && !daemon && err == 0) {
    return not_applicable(kId, "MPS is not in use (no CUDA_MPS_PIPE_DIRECTORY, no MPS daemon)");
  }
  std::vector<std::string> ev;
  ev.push_back(pipe != nullptr ? env_assignment("CUDA_MPS_PIPE_DIRECTORY", *pipe)
                               : fmt::format("CUDA_MPS_PIPE_DIRECTORY is not set: clients use {}",
                                             kDefaultPipeDir));
  if (svc != nullptr) {
    std::vector<std::string> pids;
    for (int p : svc->pids) pids.push_back(std::to_string(p));
    ev.push_back(fmt::format("service nvidia-cuda-mps-control: {}{}",
                             svc->running ? "running" : "not running",
                             pids.empty() ? "" : " (pid " + join(pids, ", ") + ")"));
  }
  if (!procs.empty()) ev.push_back("MPS processes: " + join(procs, ", "));
  if (!daemon) ev.push_back("no MPS control daemon process is running");
  if (s.container.in_container) {
    ev.push_back("inside a container: a daemon on the host is not visible from here");
  }
  if (u != nullptr) ev.push_back("CUDA with this environment: " + describe_run(*u));
  bool cuda_works = u != nullptr && run_succeeded(*u);

  std::string dir = pipe != nullptr ? *pipe : kDefaultPipeDir;
  std::vector<std::string> remedy = {
      fmt::format("export CUDA_MPS_PIPE_DIRECTORY={}; nvidia-cuda-mps-control -d   # start the "
                  "control daemon with the pipe directory clients use",
                  dir),
      "echo quit | nvidia-cuda-mps-control   # stop a stuck daemon before starting it again",
      "control.log in $CUDA_MPS_LOG_DIRECTORY (default /var/log/nvidia-mps) says why clients "
      "are refused",
  };
  if (pipe != nullptr) {
    remedy.push_back("unset CUDA_MPS_PIPE_DIRECTORY   # if this job is not meant to use MPS");
  }

  Finding f;
  if (err != 0) {
    f = make_finding(
        kId, Severity::kFail,
        fmt::format("CUDA cannot reach the MPS daemon: it fails with {}", cuda_driver_error(err)));
    if (pipe == nullptr && daemon) {
      ev.push_back(
          fmt::format("if the daemon was started with another CUDA_MPS_PIPE_DIRECTORY "
                      "than {}, clients must export the same one",
                      kDefaultPipeDir));
    }
    f.remedy = remedy;
  } else if (pipe != nullptr && !daemon) {
    if (cuda_works) {
      f = make_finding(kId, Severity::kWarn,
                       "CUDA_MPS_PIPE_DIRECTORY is set but no MPS control daemon runs: CUDA "
                       "works, without MPS");
    } else {
      f = make_finding(kId, s.container.in_container ? Severity::kWarn : Severity::kFail,
                       "CUDA_MPS_PIPE_DIRECTORY is set but no MPS control daemon runs to answer "
                       "on it");
    }
    f.remedy = remedy;
  } else {
    f = make_finding(kId, Severity::kOk,
                     cuda_works ? "the MPS control daemon runs and CUDA reaches it"
                                : "the MPS control daemon runs");
  }
  f.evidence = ev;
  return {f};
}

}  // namespace gd
