// ASCII helpers the parsers share (no locale: kernel and driver text is ASCII).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace gd {

// 'A'-'Z' -> 'a'-'z', every other byte as it is, whatever the locale (the
// rule of std::tolower in the "C" locale; gpudoctor never calls setlocale).
inline char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
// 'a'-'z' -> 'A'-'Z', every other byte as it is.
inline char ascii_upper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

// Equal ignoring ASCII case ("nvml_error_unknown" == "NVML_ERROR_UNKNOWN").
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

// needle occurs in hay, ignoring ASCII case ("NVIDIA H100 80GB HBM3" holds
// "h100"); false for an empty needle.
inline bool contains_nocase(std::string_view hay, std::string_view needle) {
  if (needle.empty() || needle.size() > hay.size()) return false;
  auto eq = [](char a, char b) { return ascii_lower(a) == ascii_lower(b); };
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), eq) != hay.end();
}

// "Slurm_Jwt" -> "SLURM_JWT".
inline std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_upper(c);
  return out;
}

// "NVIDIA-SMI" -> "nvidia-smi": A-Z only, every other byte as it is
// (whatever the locale).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// Text for a terminal: control bytes (ESC, CR, BEL, ...) other than newline
// and tab as \xNN, so that a log line or pasted text cannot move the cursor,
// retitle the window or hide what follows. UTF-8 passes unchanged.
inline std::string escape_controls(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace gd
