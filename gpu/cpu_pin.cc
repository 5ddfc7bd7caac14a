#include <sched.h>

#include <cstring>

#include "helper.h"

namespace gdgpu {
CpuPin::CpuPin(const std::string&) {}
CpuPin::~CpuPin() = default;
}  // namespace gdgpu
