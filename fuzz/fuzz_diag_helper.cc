// Placeholder: written by the issue-6 work.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "diag/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gd::DiagRun run;
  gd::parse_helper_output(std::string_view(reinterpret_cast<const char*>(data), size), &run);
  return 0;
}
