// Comparisons a check's verdict rests on (Finding.comparisons), made in one
// place so that `met` is computed, not asserted, and the evidence line a
// person reads is rendered from the very numbers the JSON carries: text and
// numbers cannot drift apart (issue 14: "driver too old" printed next to a
// version line that showed the driver new enough).
//
// A comparison states the requirement for health, `actual OP required`:
//   compare_versions("driver version vs the minimum for CUDA 12.4",
//                    "550.54.14", ">=", "550.54.15")  -> met = false
// and renders as the evidence line
//   "driver version vs the minimum for CUDA 12.4: 550.54.14 >= 550.54.15 (requirement NOT met)"
// tests/invariants/inv_comparisons.py re-reads every report with its own
// parser and holds each finding to these lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"

namespace gd {

// Dotted versions compared numerically part by part ("550.54.14" > "550.54.9",
// "10.0" > "9.2"); a missing part counts as 0 ("12" == "12.0"). nullopt when
// either is not dotted decimal numbers.
std::optional<int> compare_version_text(std::string_view a, std::string_view b);

// True when `cmp` (a three-way result, <0, 0, >0) satisfies op ("<", "<=",
// "==", "!=", ">=", ">"); false for an unknown op.
bool op_holds(int cmp, std::string_view op);

// The three makers compute `met` themselves. An unparseable version gives
// met = false (nothing proven healthy).
Comparison compare_versions(std::string what, std::string actual, std::string op,
                            std::string required);
Comparison compare_bytes(std::string what, uint64_t actual, std::string op, uint64_t required);
// Integers print as integers ("85"), others with up to 6 significant digits
// ("0.97"); `met` is computed from the printed values, so a reader who
// re-parses them reaches the same answer.
Comparison compare_numbers(std::string what, double actual, std::string op, double required);

// The evidence line for a comparison:
//   "<what>: <actual> <op> <required> (requirement met)"
//   "<what>: <actual> <op> <required> (requirement NOT met)"
// bytes show GiB and the exact count: "15.3 GiB (16384000000 bytes)".
std::string comparison_text(const Comparison& c);

// Adds the comparison and its evidence line to the finding, the only way a
// check states a comparison. Returns c.met.
bool add_comparison(Finding* f, Comparison c);

// Where a check would compare but a value is unknown, it says so instead of
// stating nothing: the evidence line "not compared: <what> (<missing> unknown)",
// which the invariant accepts in place of a comparison.
void add_not_compared(Finding* f, const std::string& what, const std::string& missing);

// True when every comparison is met (vacuously true for none).
bool all_met(const std::vector<Comparison>& cs);

}  // namespace gd
