// ASCII helpers the parsers share (no locale: kernel and driver text is ASCII).
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace gd {

// Equal ignoring ASCII case ("nvml_error_unknown" == "NVML_ERROR_UNKNOWN").
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// "Slurm_Jwt" -> "SLURM_JWT".
inline std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "NVIDIA-SMI" -> "nvidia-smi": A-Z only, every other byte as it is
// (whatever the locale).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
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
