// Functions of an optional library, reached through dlopen/dlsym rather than
// linked: the library is mapped only by the process and the moment that
// needs it (OpenSSL for the exporter's TLS, serve/tls.cc; libsystemd for
// the journal, probe/kernel_log_journal.cc). Declare the pointer with the
// library's own prototype, decltype(&::fn), so a call is type-checked.
#pragma once

#include <dlfcn.h>

#include <string>

namespace gd {

// Sets `fn` to `name` in `lib`. When it is missing, `missing` (if still
// empty) becomes "<lib_name> lacks <name>" and fn stays null.
template <typename F>
void dl_find(void* lib, const char* lib_name, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr && missing.empty()) missing = std::string(lib_name) + " lacks " + name;
}

}  // namespace gd
