// container.driver-not-injected: a container whose runtime brought in none
// of the NVIDIA driver's user-space libraries, so CUDA cannot load libcuda
// even where the GPU device nodes are there. The driver's libraries live on
// the host and must be mounted in by the runtime at start: Apptainer does
// it with --nv (binding them under /.singularity.d/libs; without it,
// "libcuda.so.1: cannot open shared object file", apptainer/singularity#5337,
// rickstaa/panda-autograsp#150: "you most likely forgot to call the
// container using the --nv flag"), Docker with --gpus (the NVIDIA runtime's
// hook), Kubernetes through the device plugin. A container given only
// --device /dev/nvidia0 has the nodes and still no driver.
// NVIDIA_DRIVER_CAPABILITIES without compute leaves libcuda out too; that
// is container.capabilities' finding, and this one stands aside for it.
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

// The runtime's own way to bring the driver in.
std::vector<std::string> remedy_for(const std::string& runtime) {
  if (runtime == "apptainer") {
    return {
        "apptainer exec --nv IMAGE ...   # --nv before the image name; it binds the host's "
        "driver libraries and nvidia-smi in",
        "Slurm + Apptainer: srun apptainer exec --nv IMAGE ..."};
  }
  if (runtime == "podman") return {"podman run --device nvidia.com/gpu=all IMAGE ...   # CDI"};
  if (runtime == "kubernetes") {
    return {
        "request the GPUs from the device plugin (resources.limits nvidia.com/gpu: N), and "
        "on a cluster with several runtimes set runtimeClassName: nvidia"};
  }
  return {
      "docker run --gpus all IMAGE ...   # the NVIDIA runtime's hook mounts the driver in; "
      "--device /dev/nvidia0 alone does not"};
}

}  // namespace

std::vector<Finding> check_driver_injected(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.driver-not-injected";
  if (!s.container.in_container) return not_applicable(kId, "Not running in a container.");
  if (!driver_capability(s, "compute")) {
    return not_applicable(kId,
                          "NVIDIA_DRIVER_CAPABILITIES leaves libcuda out on purpose (see "
                          "container.capabilities).");
  }
  if (!s.container.driver_libraries.empty()) {
    return all_ok(kId, "The NVIDIA driver's libraries are in the container (" +
                           s.container.driver_libraries.begin()->first + ", ...).");
  }
  const CudaRun* run = s.cuda.runs.empty() ? nullptr : &s.cuda.runs.front();
  if (run == nullptr || run->dlopen_error.empty()) {
    return not_applicable(kId,
                          "No driver library was found, but libcuda loaded: it comes from "
                          "somewhere this check does not look.");
  }
  std::string runtime = s.container.runtime.empty() ? "container" : s.container.runtime;
  Finding f = make_finding(kId, Severity::kFail,
                           "This " + runtime +
                               " container has none of the NVIDIA driver's libraries: its "
                               "runtime did not bring the driver in, so CUDA cannot load "
                               "libcuda.");
  f.evidence.push_back(
      "libcuda.so.*, libnvidia-ml.so.*: none in /usr/lib/x86_64-linux-gnu, "
      "/usr/lib64, /usr/local/nvidia/lib64, /.singularity.d/libs, ...");
  f.evidence.push_back("dlopen " + run->library_requested + ": " + run->dlopen_error);
  f.evidence.push_back("container: " + runtime + " (" + s.container.evidence + ")");
  f.remedy = remedy_for(runtime);
  return {f};
}

}  // namespace gd
