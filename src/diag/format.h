// Figures of the active diagnostics in human units, one formatter for the
// findings' evidence (diag/evaluate*.cc), the diag report and the status
// page, so a figure reads the same wherever it is shown.
#pragma once

#include <string>

namespace gd {

// FLOP/s as "712.4 TFLOP/s" (below 1e12: "GFLOP/s"), bytes/s as
// "55.1 GB/s" (1e9 bytes/s; below 1e9: "MB/s"), a ratio as "93.5 %", µs as
// "12.3 µs", anything else as "<value> <unit>".
std::string format_diag_value(double value, const std::string& unit);

}  // namespace gd
