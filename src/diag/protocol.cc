// Placeholder: written by the issue-6 work.
#include "diag/protocol.h"

namespace gd {
bool parse_helper_output(std::string_view, DiagRun*) { return false; }
}  // namespace gd
