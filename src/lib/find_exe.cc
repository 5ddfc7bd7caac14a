// Finding the gpudoctor binary that the library re-executes as its probe
// child. The CLI re-executes /proc/self/exe; inside a library that is the
// host program (python3), so the binary must be found. Where NVML or CUDA
// would be needed and no binary is found, the library says so rather than
// load them into the caller: that is the whole point of the child.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "lib/lib_internal.h"
#include "util/exe.h"

// Set by cmake/libgpudoctor.cmake: the installed bindir relative to the
// installed libdir ("../bin"), and the absolute bindir of the configured prefix.
#ifndef GD_LIBDIR_TO_BINDIR
#define GD_LIBDIR_TO_BINDIR "../bin"
#endif
#ifndef GD_INSTALL_BINDIR
#define GD_INSTALL_BINDIR "/usr/local/bin"
#endif

namespace gd::lib {
namespace {

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The directory of the file this code was loaded from (the .so; the
// executable itself when linked statically into a program).
std::string this_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_library_dir), &info) == 0 || info.dli_fname == nullptr ||
      info.dli_fname[0] == '\0') {
    return "";
  }
  char* real = realpath(info.dli_fname, nullptr);
  std::string path = real != nullptr ? real : info.dli_fname;
  std::free(real);
  return dir_of(path);
}

}  // namespace

Result<std::string> find_gpudoctor_exe() {
  // An explicit choice is never second-guessed: a wrong one is an error,
  // not a silent fall-back to some other binary.
  if (const char* env = std::getenv("GPUDOCTOR_EXE"); env != nullptr && *env != '\0') {
    if (is_executable_file(env)) return std::string(env);
    return Error{std::string("GPUDOCTOR_EXE=") + env + " is not an executable file"};
  }
  std::string tried;
  std::string lib_dir = this_library_dir();
  if (!lib_dir.empty()) {
    // Beside the library first: the build tree and the wheel, which bundles
    // both in its package (where <dir>/../bin/gpudoctor of `pip install
    // --target` is pip's Python script, not the binary); then
    // <prefix>/lib/libgpudoctor.so.0 -> <prefix>/bin/gpudoctor.
    for (const std::string& candidate :
         {lib_dir + "/gpudoctor", lib_dir + "/" GD_LIBDIR_TO_BINDIR "/gpudoctor"}) {
      if (is_executable_file(candidate)) return candidate;
      tried += candidate + ", ";
    }
  }
  std::string installed = GD_INSTALL_BINDIR "/gpudoctor";
  if (is_executable_file(installed)) return installed;
  tried += installed + ", $PATH";
  const char* path = std::getenv("PATH");
  std::string on_path = path != nullptr ? find_on_path("gpudoctor", path) : "";
  if (!on_path.empty()) return on_path;
  return Error{"no gpudoctor binary found (tried " + tried + "); set GPUDOCTOR_EXE to its path"};
}

}  // namespace gd::lib
