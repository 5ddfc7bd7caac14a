// CpuPin: pins the calling thread to a CPU list while host memory near a GPU
// is allocated (first touch places its pages on the thread's NUMA node).
#include <sched.h>

#include <cstring>

#include "helper.h"

namespace gdgpu {
namespace {

// Parses a kernel CPU list ("0-15,32-47", "3", "0-3,8") into set. False on
// anything else (then the thread stays unpinned: a wrong list must not
// make the test fail, only measure a NUMA hop).
bool parse_cpu_list(const std::string& s, cpu_set_t* set) {
  CPU_ZERO(set);
  size_t i = 0;
  bool any = false;
  auto number = [&](long* out) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    long v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + (s[i] - '0');
      if (v >= CPU_SETSIZE) return false;
      ++i;
    }
    *out = v;
    return true;
  };
  while (i < s.size()) {
    long lo = 0, hi = 0;
    if (!number(&lo)) return false;
    hi = lo;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!number(&hi) || hi < lo) return false;
    }
    for (long c = lo; c <= hi; ++c) CPU_SET(static_cast<int>(c), set);
    any = true;
    if (i < s.size()) {
      if (s[i] != ',') return false;
      ++i;
      if (i == s.size()) return false;  // trailing comma
    }
  }
  return any;
}

}  // namespace

CpuPin::CpuPin(const std::string& cpus) {
  if (cpus.empty()) return;
  cpu_set_t want;
  if (!parse_cpu_list(cpus, &want)) return;
  cpu_set_t old;
  CPU_ZERO(&old);
  if (sched_getaffinity(0, sizeof(old), &old) != 0) return;
  if (sched_setaffinity(0, sizeof(want), &want) != 0) return;  // CPUs offline or not ours
  old_.resize(sizeof(old));
  std::memcpy(old_.data(), &old, sizeof(old));
  pinned_ = true;
}

CpuPin::~CpuPin() {
  if (!pinned_) return;
  cpu_set_t old;
  std::memcpy(&old, old_.data(), sizeof(old));
  sched_setaffinity(0, sizeof(old), &old);
}

}  // namespace gdgpu
