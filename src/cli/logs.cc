// gpudoctor logs (being written)
#include "cli/commands.h"

namespace gd {

void setup_logs(CLI::App*, LogsArgs*) {}
int run_logs(const LogsArgs&) { return kExitInternal; }

}  // namespace gd
