// gpudoctor run (being written).
#include "cli/commands.h"

namespace gd {

void setup_run(CLI::App* app, RunArgs* args) {
  (void)app;
  (void)args;
}

int run_run(const RunArgs&) {
  print_error("run: not written yet");
  return kExitInternal;
}

}  // namespace gd
