// gpudoctor env (being written).
#include "cli/commands.h"

namespace gd {

void setup_env(CLI::App* app, EnvArgs* args) {
  (void)app;
  (void)args;
}

int run_env(const EnvArgs&) {
  print_error("env: not written yet");
  return kExitInternal;
}

}  // namespace gd
