#include "util/duration.h"

#include <charconv>
#include <cmath>
#include <string>

namespace gd {

Result<double> parse_duration(std::string_view text) {
  std::string shown(text.substr(0, 40));
  double value = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || p == text.data() || !std::isfinite(value) || value < 0) {
    return Error{"bad duration '" + shown + "' (use e.g. 90s, 30m, 2h, 1d)"};
  }
  std::string_view unit(p, static_cast<size_t>(text.data() + text.size() - p));
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else if (unit == "w") {
    scale = 7 * 86400;
  } else {
    return Error{"bad duration '" + shown + "': unknown unit (use s, m, h, d or w)"};
  }
  return value * scale;
}

}  // namespace gd
