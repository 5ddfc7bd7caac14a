// Finding executables: this binary, its siblings and programs on a PATH.
#pragma once

#include <string>

namespace gd {

// A regular file this process may execute.
bool is_executable_file(const std::string& path);
// `exe` in the first absolute directory of `path` (a PATH value) that holds
// it executable, else "". Empty and relative entries are skipped: they mean
// the current directory, and a tool run from a job's working directory must
// never run whatever program happens to lie there.
std::string find_on_path(const std::string& exe, const std::string& path);
// The running binary, re-executed as the probe child; "" when unknown.
std::string self_exe_path();
// `name` in this binary's directory when it is there and executable, else "".
std::string sibling_exe(const std::string& name);

}  // namespace gd
