// Placeholder: written by the issue-6 work.
#include "cli/commands.h"

namespace gd {
void setup_diag(CLI::App*, DiagArgs*) {}
int run_diag(const DiagArgs&) { return kExitInternal; }
}  // namespace gd
