// Placeholder until the Slurm health check lands.
#include "cli/commands.h"

namespace gd {

int slurm_health(const Report&, const CheckArgs&) {
  print_error("--slurm is not built yet");
  return kExitInternal;
}

}  // namespace gd
