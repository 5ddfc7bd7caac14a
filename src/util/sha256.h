// SHA-256 (FIPS 180-4), for the few places that need a digest without
// linking a crypto library: the exporter's basic-auth cache keys
// (serve/web_config.cc), where OpenSSL would cost every exporter its
// resident pages (bench/serve_scrape.txt).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace gd {

std::array<uint8_t, 32> sha256(std::string_view data);

// Compares without an early exit, so the time does not tell where the
// first difference lies. False when the sizes differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace gd
