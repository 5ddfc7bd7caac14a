// Placeholder: written by the issue-6 work.
#include "diag/run_helper.h"

namespace gd {
double diag_deadline_s(int, double, size_t) { return 0; }
std::vector<std::string> diag_environment(const std::vector<std::string>& env) { return env; }
std::vector<std::string> diag_helper_args(const DiagOptions&) { return {}; }
std::string find_diag_helper() { return ""; }
Result<std::vector<std::string>> resolve_diag_gpus(const Snapshot&, const std::string&) {
  return Error{"not implemented"};
}
std::map<std::string, std::string> diag_gpu_cpus(const Snapshot&, const std::vector<std::string>&) {
  return {};
}
DiagRun run_diag_helper(const DiagOptions&) { return {}; }
}  // namespace gd
