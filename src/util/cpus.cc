#include "util/cpus.h"

#include <errno.h>
#include <sched.h>

#include <cstring>

namespace gd {

// sched_getaffinity with a set large enough for this kernel's CPU count.
Result<std::vector<int>> allowed_cpus() {
  for (int n = 1024; n <= (1 << 16); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      std::vector<int> out;
      for (int cpu = 0; cpu < n; ++cpu) {
        if (CPU_ISSET_S(cpu, size, set)) out.push_back(cpu);
      }
      CPU_FREE(set);
      return out;
    }
    int e = errno;
    CPU_FREE(set);
    if (e != EINVAL) return Error{std::strerror(e)};
  }
  return Error{"the CPU mask is larger than 65536 CPUs"};
}

Result<Done> set_cpus(const std::vector<int>& cpus) {
  int n = cpus.back() + 1;
  cpu_set_t* set = CPU_ALLOC(n);
  size_t size = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(size, set);
  for (int cpu : cpus) CPU_SET_S(cpu, size, set);
  int rc = sched_setaffinity(0, size, set);
  int e = errno;
  CPU_FREE(set);
  if (rc != 0) return Error{std::strerror(e)};
  return Done{};
}

}  // namespace gd
