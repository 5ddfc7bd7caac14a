// The glibc symbols newer than the release binaries' floor (2.31) that the
// static libstdc++ and libgcc of Debian 12 call, defined in the binary
// itself so the link against Debian 11's glibc (scripts/sysroot.sh)
// resolves them here and the binary asks the system for none of them.
// Linked into the shipped binaries only, and only in that link
// (cmake/release.cmake); util/glibc_floor.h says how each is done. (The
// declarations they match, noexcept included, are glibc 2.36's headers.)
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/single_threaded.h>

#include <cstdint>

#include "util/glibc_floor.h"

extern "C" {

// libgcc's unwinder, on every exception thrown (glibc 2.35).
// The parameters carry glibc's own names: its declaration in <dlfcn.h>
// is the one this defines.
// NOLINTNEXTLINE(bugprone-reserved-identifier): glibc's names, as declared
int _dl_find_object(void* __address, dl_find_object* __result) noexcept {
  return gd::find_object(__address, __result);
}

// libstdc++'s std::random_device and libcrypt's salts (glibc 2.36).
uint32_t arc4random() noexcept { return gd::random_u32(); }
void arc4random_buf(void* buf, size_t size) noexcept { gd::random_bytes(buf, size); }

// libstdc++'s reference counts skip their atomic operations while this is
// nonzero (glibc 2.32 sets it until a second thread starts). Zero here: the
// atomic path always, correct with or without threads.
char __libc_single_threaded = 0;

}  // extern "C"
