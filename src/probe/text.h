// Small text helpers for the file probes: procfs and sysfs parsing without
// std::regex and without exceptions. All of them accept arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

std::string_view trim(std::string_view s);  // spaces, tabs, CR, LF
std::vector<std::string_view> split_lines(std::string_view text);
std::vector<std::string_view> split_ws(std::string_view line);  // on spaces and tabs
std::vector<std::string_view> split(std::string_view s, char sep);

// Whole-string decimal / hex parses of a trimmed value; nullopt on anything
// else ("12x", "", binary junk). parse_hex accepts an optional 0x prefix.
std::optional<uint64_t> parse_u64(std::string_view s);
std::optional<int64_t> parse_i64(std::string_view s);
std::optional<uint64_t> parse_hex(std::string_view s);
std::optional<uint32_t> parse_octal(std::string_view s);
// A size in bytes as mount options write it: "65536k", "1g", "4096" (k, m, g,
// t: powers of 1024, either case). nullopt for anything else, "50%" included,
// and for sizes past int64.
std::optional<int64_t> parse_size_suffixed(std::string_view s);
// '0'-'9', 'a'-'f', 'A'-'F' -> 0-15; -1 for anything else.
int hex_digit(char c);
// The leading float of "16.0 GT/s PCIe" -> 16.0; 0 when there is none ("Unknown").
double parse_leading_double(std::string_view s);

// A safe copy for the snapshot: at most max_len bytes, control bytes and
// bytes >= 0x7f shown as \xHH, so garbage never turns into invalid JSON text.
std::string printable(std::string_view s, size_t max_len = 256);

}  // namespace gd
