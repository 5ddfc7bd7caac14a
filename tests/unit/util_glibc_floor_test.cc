// The stand-ins for glibc's newer symbols that the release binaries carry
// (src/util/glibc_floor.h), against glibc's own: these tests link the build
// machine's glibc (2.35 or newer), so its _dl_find_object is there to
// compare with, object by object.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <math.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <set>

#include "util/glibc_floor.h"

namespace gd {
namespace {

int function_in_this_program() { return 7; }

void expect_same_as_glibc(void* pc, const char* what) {
  dl_find_object ours{}, glibcs{};
  int rc_ours = find_object(pc, &ours);
  int rc_glibc = _dl_find_object(pc, &glibcs);
  ASSERT_EQ(rc_ours, rc_glibc) << what;
  if (rc_glibc != 0) return;
  EXPECT_EQ(ours.dlfo_map_start, glibcs.dlfo_map_start) << what;
  EXPECT_EQ(ours.dlfo_map_end, glibcs.dlfo_map_end) << what;
  // What libgcc's unwinder reads to find a frame's unwind table.
  EXPECT_NE(ours.dlfo_eh_frame, nullptr) << what;
  EXPECT_EQ(ours.dlfo_eh_frame, glibcs.dlfo_eh_frame) << what;
}

TEST(GlibcFloor, FindObjectAgreesWithGlibcOnEveryKindOfObject) {
  expect_same_as_glibc(reinterpret_cast<void*>(&function_in_this_program), "this program");
  expect_same_as_glibc(dlsym(RTLD_DEFAULT, "getpid"), "libc");
  expect_same_as_glibc(dlsym(RTLD_DEFAULT, "cos"), "libm");
  expect_same_as_glibc(dlsym(RTLD_DEFAULT, "_dl_find_object"), "the dynamic loader");
}

TEST(GlibcFloor, FindObjectFindsNothingOutsideEveryObject) {
  int on_the_stack = 0;
  dl_find_object out{};
  EXPECT_EQ(find_object(&on_the_stack, &out), -1);
  EXPECT_EQ(find_object(nullptr, &out), -1);
}

TEST(GlibcFloor, RandomBytesFillTheWholeBufferAndDiffer) {
  std::array<unsigned char, 4096> a{}, b{};
  random_bytes(a.data(), a.size());
  random_bytes(b.data(), b.size());
  EXPECT_NE(a, b);
  // 4096 bytes of zeros from a working source: chance 2^-32768.
  std::set<unsigned char> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 200u);
  random_bytes(a.data(), 0);  // nothing to do, and no hang
}

TEST(GlibcFloor, RandomU32Varies) {
  std::set<uint32_t> seen;
  for (int i = 0; i < 64; ++i) seen.insert(random_u32());
  EXPECT_GT(seen.size(), 60u);
}

}  // namespace
}  // namespace gd
