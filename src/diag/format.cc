#include "diag/format.h"

#include <fmt/format.h>

namespace gd {

std::string format_diag_value(double value, const std::string& unit) {
  if (unit == "FLOP/s") {
    return value >= 1e12 || value == 0 ? fmt::format("{:.1f} TFLOP/s", value / 1e12)
                                       : fmt::format("{:.1f} GFLOP/s", value / 1e9);
  }
  if (unit == "bytes/s") {
    return value >= 1e9 || value == 0 ? fmt::format("{:.1f} GB/s", value / 1e9)
                                      : fmt::format("{:.1f} MB/s", value / 1e6);
  }
  if (unit == "ratio") return fmt::format("{:.1f} %", value * 100);
  if (unit == "us" || unit == "µs") return fmt::format("{:.1f} µs", value);
  return fmt::format("{:.4g} {}", value, unit);
}

}  // namespace gd
