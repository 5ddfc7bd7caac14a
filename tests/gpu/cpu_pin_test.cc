// Tests of CpuPin (gpu/cpu_pin.cc): the helper pins the thread that
// allocates a GPU's pinned host buffers to the GPU's NUMA-local CPUs, and
// must give the thread its old CPUs back afterwards. A list it cannot parse
// or apply leaves the thread as it was (a NUMA hop, not a failed test).
#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <vector>

#include "helper.h"

namespace gdgpu {
namespace {

std::vector<int> current_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string list_of(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

TEST(CpuPin, PinsAndRestores) {
  const std::vector<int> before = current_cpus();
  ASSERT_FALSE(before.empty());
  {
    CpuPin pin(std::to_string(before.front()));
    EXPECT_EQ(current_cpus(), std::vector<int>{before.front()});
  }
  EXPECT_EQ(current_cpus(), before);
}

TEST(CpuPin, RangesAndLists) {
  const std::vector<int> before = current_cpus();
  if (before.size() < 2) GTEST_SKIP() << "one CPU";
  const int a = before[0], b = before[1];
  {
    CpuPin pin(std::to_string(a) + "-" + std::to_string(b));
    std::vector<int> want;
    for (int c : before)
      if (c >= a && c <= b) want.push_back(c);
    EXPECT_EQ(current_cpus(), want);
  }
  {
    CpuPin pin(std::to_string(b) + "," + std::to_string(a));
    EXPECT_EQ(current_cpus(), (std::vector<int>{a, b}));
  }
  EXPECT_EQ(current_cpus(), before);
}

TEST(CpuPin, BadOrEmptyListsChangeNothing) {
  const std::vector<int> before = current_cpus();
  const std::string all = list_of(before);
  for (const char* bad : {"", "x", "1-", "-1", "3-1", "1,,2", "1,", "0-99999999", "1 2"}) {
    CpuPin pin(bad);
    EXPECT_EQ(current_cpus(), before) << bad;
  }
  {
    // CPUs the process may not use (or that do not exist): the kernel
    // refuses, the thread keeps its CPUs.
    CpuPin pin(std::to_string(CPU_SETSIZE - 1));
    EXPECT_EQ(current_cpus(), before);
  }
  {
    CpuPin pin(all);  // the same set: pinned, and restored to the same
    EXPECT_EQ(current_cpus(), before);
  }
  EXPECT_EQ(current_cpus(), before);
}

}  // namespace
}  // namespace gdgpu
