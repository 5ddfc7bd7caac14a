// `gpudoctor __probe-nvml --lib PATH`,
// `gpudoctor __probe-cuda --lib PATH --cudart PATH --label user|clean
//  --contexts none|gate`:
// the probe children that call NVML and CUDA (src/probe/child.cc runs them);
// `gpudoctor __probe-nvml-sampler --lib PATH`: serve's long-lived NVML
// sampler (src/probe/nvml_sampler.h, src/probe/sampler.cc runs it).
#include <signal.h>
#include <sys/prctl.h>

#include <cstring>

#include "cli/commands.h"
#include "probe/nvml_sampler.h"

namespace gd {

bool is_probe_child(int argc, char** argv) {
  return argc >= 2 &&
         (std::strcmp(argv[1], "__probe-nvml") == 0 || std::strcmp(argv[1], "__probe-cuda") == 0 ||
          std::strcmp(argv[1], "__probe-nvml-sampler") == 0);
}

int run_probe_child(int argc, char** argv) {
  // Dies with its parent: a child stuck in cuInit must not outlive a killed
  // gpudoctor or a killed library host. The runner waits in the thread that
  // spawned it, so the parent thread outlives the child in normal use.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::string lib, cudart, label = "user";
  CudaContexts contexts = CudaContexts::kNone;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    if (flag == "--lib") {
      lib = argv[i + 1];
    } else if (flag == "--cudart") {
      cudart = argv[i + 1];
    } else if (flag == "--label") {
      label = argv[i + 1];
    } else if (flag == "--contexts") {
      std::string_view v = argv[i + 1];
      if (v != "none" && v != "gate") {
        print_error("probe child: --contexts takes none or gate, not " + std::string(v));
        return kExitUsage;
      }
      contexts = v == "gate" ? CudaContexts::kGate : CudaContexts::kNone;
    } else {
      print_error("probe child: unknown flag " + std::string(flag));
      return kExitUsage;
    }
  }
  if (std::strcmp(argv[1], "__probe-nvml") == 0) return nvml_child_main(lib);
  if (std::strcmp(argv[1], "__probe-nvml-sampler") == 0) return nvml_sampler_child_main(lib);
  return cuda_child_main(lib, cudart, label, contexts);
}

}  // namespace gd
