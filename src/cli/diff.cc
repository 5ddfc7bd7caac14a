// Placeholder until `gpudoctor diff` lands.
#include "cli/commands.h"

namespace gd {

void setup_diff(CLI::App*, DiffArgs*) {}

int run_diff(const DiffArgs&) {
  print_error("diff is not built yet");
  return kExitInternal;
}

}  // namespace gd
