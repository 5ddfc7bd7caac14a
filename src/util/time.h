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
// A unix time in µs, ISO 8601 with microseconds and a numeric UTC offset:
// "2026-12-02T10:00:01.123456+00:00" (the syslog stamp kernlog/line.h reads).
std::string iso_time_us(uint64_t unix_us);

// A unix time in s for people: "2026-03-01 14:02:11 UTC".
std::string utc_datetime_text(int64_t unix_s);
// The same in the local time zone, without a zone: "2026-03-01 15:02:11".
std::string local_datetime_text(int64_t unix_s);

// The calendar year of a unix time in s, in UTC / in the local time zone.
int utc_year(int64_t unix_s);
int local_year(int64_t unix_s);

// Seconds to one decimal, without a unit: 12.345 -> "12.3".
std::string seconds_1dp(double s);

}  // namespace gd
