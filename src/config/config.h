// The health-threshold config file (TOML, docs/config.md) -> Config.
#pragma once

#include <string>

#include "checks/check.h"
#include "util/result.h"

namespace gd {

// The defaults when path is "", else the defaults overridden by the file.
// Error: one line naming the file, the line and what is wrong.
Result<Config> load_config(const std::string& path);

}  // namespace gd
