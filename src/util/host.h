// This machine's name, as the reports and the exporter show it.
#pragma once

#include <string>

namespace gd {

// gethostname(2); "" when it fails.
std::string host_name();

}  // namespace gd
