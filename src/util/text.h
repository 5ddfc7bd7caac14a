// Small text helpers: procfs, sysfs and pasted-text parsing without
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
// Every byte isspace(3) names in the "C" locale off both ends: space, \t,
// \n, \v, \f, \r.
std::string_view trim_isspace(std::string_view s);
// Spaces and tabs off both ends and CRs off the end only (a CRLF line's
// CR), so a CR at the start stays.
std::string_view trim_spaces_tabs_trailing_cr(std::string_view s);

std::vector<std::string_view> split_lines(std::string_view text);
std::vector<std::string_view> split_ws(std::string_view line);  // on spaces and tabs
std::vector<std::string_view> split(std::string_view s, char sep);
// The parts between `sep`, empty ones included, as owned strings (split()
// gives views).
std::vector<std::string> split_strings(std::string_view text, char sep);
// The same without the empty parts: "a,,b," -> {"a", "b"}.
std::vector<std::string> split_strings_nonempty(std::string_view text, char sep);

// The parts with `sep` between each two: {"a", "", "b"} -> "a,,b",
// {"", "a"} -> ",a".
template <class Strings>
std::string join(const Strings& parts, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& p : parts) {
    if (!first) out += sep;
    out += p;
    first = false;
  }
  return out;
}
// The parts with `sep` before each one once the text so far is not empty:
// leading empty parts leave no trace ({"", "a"} -> "a"), later ones do
// ({"a", "", "b"} -> "a,,b"). In a std::set only the first part can be "",
// so there it drops the empty part.
template <class Strings>
std::string join_skip_leading_empty(const Strings& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

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

// Four rules for text from files or users that goes somewhere a stray byte
// would do harm. See also escape_controls (util/ascii.h).
//
// A safe copy for the snapshot: at most max_len bytes, control bytes and
// bytes >= 0x7f shown as \xHH, so garbage never turns into invalid JSON text.
std::string printable(std::string_view s, size_t max_len = 256);
// Every byte outside printable ASCII (0x20-0x7e) as '?'; length kept.
std::string printable_or_question_mark(std::string_view s);
// Control bytes (below 0x20, and 0x7f) as '?', so the text stays on one
// line; bytes >= 0x80 (UTF-8) as they are.
std::string controls_to_question_mark(std::string_view s);
// At most max_len bytes of printable ASCII without quotes, backslashes or
// backticks (" ' \ `); every other byte as '_'.
std::string printable_unquoted_or_underscore(std::string_view s, size_t max_len);

}  // namespace gd
