// Placeholder: written by the issue-6 work.
#include "emit.h"
#include "helper.h"
namespace gdgpu { bool run_gemm_tests(const Gpu&, const HelperOptions&) { return true; } }
