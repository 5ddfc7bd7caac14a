// Byte counts as text, in binary units (KiB = 1024 bytes). Three rules, each
// where its text is read: findings, diag reports, and the caps errors name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gd {

// One decimal from KiB up: 512 -> "512 B", 1536 -> "1.5 KiB",
// 25769803776 -> "24.0 GiB" (up to PiB).
std::string format_bytes(uint64_t bytes);

// A whole number where the value is within 0.05 of one, else one decimal;
// "bytes" below 1 KiB: 1048576 -> "1 MiB", 1536 -> "1.5 KiB",
// 150754820096 -> "140.4 GiB", 100 -> "100 bytes" (up to TiB).
std::string format_bytes_whole_if_round(double bytes);

// The largest of MiB and KiB that divides the count exactly, else bytes:
// "1 MiB", "64 MiB", "512 KiB", "1536 KiB", "100 B".
std::string format_bytes_exact(size_t bytes);

}  // namespace gd
