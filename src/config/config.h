// The health-threshold config file (TOML, docs/config.md) -> Config.
//
// Only the file named by --config (or $GPUDOCTOR_CONFIG) is read: no file in
// /etc is picked up behind the user's back, so a report never depends on a
// file the user did not name.
#pragma once

#include <string>
#include <string_view>

#include "checks/check.h"
#include "util/result.h"

namespace gd {

// The defaults when path is "", else the defaults overridden by the file.
// Error: one line naming the file, the line, the key and what is wrong
// ("gpudoctor.toml:4: thermal.gpu_margn_c: unknown key (known: ...)").
Result<Config> load_config(const std::string& path);

// The same for TOML text; `name` stands for the file in errors.
Result<Config> parse_config(std::string_view text, const std::string& name);

// The config file to read: the --config value, else $GPUDOCTOR_CONFIG (pass
// getenv's result, nullptr when unset), else "" (built-in defaults).
std::string config_path(const std::string& flag, const char* env_value);

}  // namespace gd
