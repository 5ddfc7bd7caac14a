#include "util/text.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

namespace gd {

namespace {

std::string_view trim_of(std::string_view s, std::string_view ws) {
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string_view trim(std::string_view s) { return trim_of(s, " \t\r\n"); }

std::string_view trim_isspace(std::string_view s) { return trim_of(s, " \t\n\v\f\r"); }

std::string_view trim_spaces_tabs_trailing_cr(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

std::vector<std::string> split_strings(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (std::string_view part : split(text, sep)) out.emplace_back(part);
  return out;
}

std::vector<std::string> split_strings_nonempty(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (std::string_view part : split(text, sep)) {
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

namespace {

template <class T>
std::optional<T> parse_whole(std::string_view s, int base) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  T v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<uint64_t> parse_u64(std::string_view s) { return parse_whole<uint64_t>(s, 10); }
std::optional<int64_t> parse_i64(std::string_view s) { return parse_whole<int64_t>(s, 10); }
std::optional<uint32_t> parse_octal(std::string_view s) { return parse_whole<uint32_t>(s, 8); }

std::optional<int64_t> parse_size_suffixed(std::string_view s) {
  s = trim(s);
  // k, m, g, t: 2^10, 2^20, 2^30, 2^40 (tmpfs(5)'s size= suffixes).
  constexpr std::string_view kUnits = "kmgt";
  size_t unit = s.empty() ? std::string_view::npos
                          : kUnits.find(static_cast<char>(s.back() | 0x20));  // either case
  int shift = unit == std::string_view::npos ? 0 : 10 * static_cast<int>(unit + 1);
  if (shift != 0) s.remove_suffix(1);
  auto n = parse_whole<int64_t>(s, 10);
  if (!n || *n < 0 || *n > (INT64_MAX >> shift)) return std::nullopt;
  return *n << shift;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  s = trim(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return parse_whole<uint64_t>(s, 16);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

double parse_leading_double(std::string_view s) {
  s = trim(s);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return 0;
  // NaN, infinities and negatives are not link speeds.
  if (!(v > 0) || v > 1e6) return 0;
  return v;
}

std::string printable(std::string_view s, size_t max_len) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max_len) break;
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += ' ';
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string printable_or_question_mark(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) out += (c >= 0x20 && c <= 0x7e) ? c : '?';
  return out;
}

std::string controls_to_question_mark(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  return out;
}

std::string printable_unquoted_or_underscore(std::string_view s, size_t max_len) {
  std::string out;
  for (char ch : s) {
    if (out.size() >= max_len) break;
    auto c = static_cast<unsigned char>(ch);
    bool ok = c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\' && c != '`';
    out += ok ? ch : '_';
  }
  return out;
}

}  // namespace gd
