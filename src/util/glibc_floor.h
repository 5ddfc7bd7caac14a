// What the release binaries need from a glibc newer than their floor, 2.31
// (scripts/sysroot.sh, docs/install.md), done with what 2.31 has. They are
// linked against Debian 11's glibc, but their static libstdc++ and libgcc
// were built by Debian 12 against glibc 2.36 and call three of its newer
// symbols; src/util/glibc_floor_symbols.cc defines those three in the
// shipped binaries only, by way of these functions. Everything else always
// uses the system's own.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>

namespace gd {

// _dl_find_object (glibc 2.35), which libgcc's unwinder asks for the
// exception-handling frame of the object holding `pc`: found here through
// dl_iterate_phdr (glibc 2.2), as libgcc itself does on an older glibc.
// 0 and *out filled (map start and end, link map, PT_GNU_EH_FRAME) when an
// object maps pc; -1 otherwise.
int find_object(void* pc, dl_find_object* out);

// arc4random_buf (glibc 2.36), which libcrypt calls for bcrypt salts, and
// arc4random, which libstdc++'s std::random_device calls: `size` bytes from
// getrandom(2) (glibc 2.25), retried on EINTR and short reads. Like glibc's,
// they never fail: without getrandom (a kernel before 3.17) they read
// /dev/urandom, and abort only if neither gives bytes.
void random_bytes(void* buf, size_t size);
uint32_t random_u32();

}  // namespace gd
