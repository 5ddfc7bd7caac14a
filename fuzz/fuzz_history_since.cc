// libFuzzer target: `gpudoctor history --since` (util/since.h). Any text
// either names a time no later than "now" for a duration and no earlier
// than the epoch, or is refused with one printable line of bounded length;
// it never crashes.
//
//   2h   1d   yesterday   2026-03-01   2026-03-01T14:00:05.250+02:00
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "util/since.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const int64_t now_ms = 1'772'452'800'000;  // 2026-03-02T12:00:00Z
  auto r = gd::parse_since(text, now_ms);
  if (!r.ok()) {
    GD_REQUIRE(!r.error().empty());
    GD_REQUIRE(r.error().size() < 300);
    for (char c : r.error()) GD_REQUIRE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    return 0;
  }
  bool date_like = size >= 5 && text[4] == '-';
  if (!date_like) GD_REQUIRE(*r >= 0 && *r <= now_ms);
  // Years 1970..9999, any zone: within these bounds.
  GD_REQUIRE(*r >= -86'400'000LL && *r < 253'402'387'200'000LL);
  return 0;
}
