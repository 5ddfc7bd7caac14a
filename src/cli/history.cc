// Placeholder until `gpudoctor history` lands.
#include "cli/commands.h"

namespace gd {

void setup_history(CLI::App*, HistoryArgs*) {}

int run_history(const HistoryArgs&) {
  print_error("history is not built yet");
  return kExitInternal;
}

}  // namespace gd
