// Placeholder until `gpudoctor labels` lands.
#include "cli/commands.h"

namespace gd {

void setup_labels(CLI::App*, LabelsArgs*) {}

int run_labels(const LabelsArgs&) {
  print_error("labels is not built yet");
  return kExitInternal;
}

}  // namespace gd
