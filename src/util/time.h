// Wall-clock times as the reports and the history write them.
#pragma once

#include <cstdint>
#include <string>

namespace gd {

// Now, as a unix time in ms (the system clock).
int64_t now_unix_ms();
// Now, RFC 3339 in UTC to the second: "2026-03-01T14:02:11Z".
std::string iso_utc_now();
// A unix time in s, RFC 3339 in UTC: "2026-03-01T14:02:11Z"; "" when out of range.
std::string iso_time_s(int64_t unix_s);
// A unix time in ms, RFC 3339 in UTC with milliseconds: "2026-03-01T14:02:11.000Z".
std::string iso_time_ms(int64_t unix_ms);

}  // namespace gd
