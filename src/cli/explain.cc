// gpudoctor explain (being written)
#include "cli/commands.h"

namespace gd {

void setup_explain(CLI::App*, ExplainArgs*) {}
int run_explain(const ExplainArgs&) { return kExitInternal; }

}  // namespace gd
