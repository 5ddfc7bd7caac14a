// ASCII helpers the parsers share (no locale: kernel and driver text is ASCII).
#pragma once

#include <cctype>
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

}  // namespace gd
