// Placeholder: written by the issue-6 work.
#include "emit.h"
#include "helper.h"
namespace gdgpu {
bool run_context_test(const Gpu&, const HelperOptions&) { return true; }
bool run_kernel_test(const Gpu&, const HelperOptions&) { return true; }
bool run_copy_tests(const Gpu&, const HelperOptions&) { return true; }
}  // namespace gdgpu
