// Placeholder until `gpudoctor serve` lands.
#include "cli/commands.h"

namespace gd {

void setup_serve(CLI::App*, ServeArgs*) {}

int run_serve(const ServeArgs&) {
  print_error("serve is not built yet");
  return kExitInternal;
}

}  // namespace gd
