#include "util/exe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "util/text.h"

namespace gd {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string find_on_path(const std::string& exe, const std::string& path) {
  for (std::string_view dir : split(path, ':')) {
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = std::string(dir) + "/" + exe;
    if (is_executable_file(candidate)) return candidate;
  }
  return "";
}

std::string self_exe_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

std::string sibling_exe(const std::string& name) {
  std::string self = self_exe_path();
  size_t slash = self.rfind('/');
  if (slash == std::string::npos) return "";
  std::string path = self.substr(0, slash + 1) + name;
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

}  // namespace gd
