// gpudoctor topo (being written).
#include "cli/commands.h"

namespace gd {

void setup_topo(CLI::App* app, TopoArgs* args) {
  (void)app;
  (void)args;
}

int run_topo(const TopoArgs&) {
  print_error("topo: not written yet");
  return kExitInternal;
}

}  // namespace gd
