// `gpudoctor serve` hands over to gpudoctor-serve (CMakeLists.txt says why
// it is a binary of its own): the same process, the same arguments.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "cli/commands.h"

namespace gd {

int exec_serve_binary(char** argv) {
  constexpr const char* kName = "gpudoctor-serve";
  if (std::string beside = sibling_exe(kName); !beside.empty()) {
    execv(beside.c_str(), argv);
    print_error("serve: cannot run " + beside + ": " + std::strerror(errno));
    return kExitInternal;
  }
  // Installed elsewhere (a package splitting bin/ and libexec/): PATH.
  execvp(kName, argv);
  print_error(std::string("serve: needs ") + kName + " beside " + self_exe_path() +
              " or on PATH: " + std::strerror(errno));
  return kExitInternal;
}

}  // namespace gd
