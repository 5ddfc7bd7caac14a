// Functions of an optional library, reached through dlopen/dlsym rather than
// linked: the library is mapped only by the process and the moment that
// needs it (OpenSSL for the exporter's TLS, serve/tls.cc; libsystemd for
// the journal, probe/kernel_log_journal.cc; NVML and CUDA in the probe
// children, probe/hw_common.cc). Declare the pointer with the
// library's own prototype, decltype(&::fn), so a call is type-checked.
#pragma once

#include <dlfcn.h>

#include <string>

namespace gd {

// dlopen(lib_name), symbols local and bound now; nullptr with `why` set to
// dlerror's text when it cannot be loaded.
inline void* dl_open(const char* lib_name, std::string* why) {
  dlerror();  // an older error must not be taken for this one
  void* h = dlopen(lib_name, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    *why = e ? e : std::string("cannot load ") + lib_name;
  }
  return h;
}

// Sets `fn` to `name` in `lib`. When it is missing, `missing` (if still
// empty) becomes "<lib_name> lacks <name>" and fn stays null.
template <typename F>
void dl_find(void* lib, const char* lib_name, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr && missing.empty()) missing = std::string(lib_name) + " lacks " + name;
}

}  // namespace gd

// A library's function table as an X-macro list, named once:
//   #define MY_FUNCTIONS(X) X(fn_a) X(fn_b)
//   struct Table { MY_FUNCTIONS(GD_DL_POINTER) std::string error; };
//   MY_FUNCTIONS(GD_DL_RESOLVE)  // where `handle`, `lib_name` and `table` are in scope
// A pointer is named and typed as the library's own function (a name cannot
// be parenthesized, hence the NOLINTs).
// clang-format off
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define GD_DL_POINTER(name) decltype(&::name) name = nullptr;
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define GD_DL_RESOLVE(name) ::gd::dl_find(handle, lib_name, #name, table.name, table.error);
// clang-format on
