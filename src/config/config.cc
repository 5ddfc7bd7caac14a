#include "config/config.h"

namespace gd {

Result<Config> load_config(const std::string& path) {
  if (path.empty()) return Config{};
  return Error{"--config: not written yet"};
}

}  // namespace gd
