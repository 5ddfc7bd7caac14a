#include "util/time.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace gd {

int64_t now_unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso_utc_now() { return iso_time_s(static_cast<int64_t>(std::time(nullptr))); }

namespace {

// The broken-down time of a unix time in s, in UTC or in the local time zone;
// false when it does not fit a struct tm (past year 2^31).
bool broken_down(int64_t unix_s, bool local, std::tm* tm) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  return (local ? localtime_r(&t, tm) : gmtime_r(&t, tm)) != nullptr;
}

std::string strftime_text(const std::tm& tm, const char* format) {
  char buf[48];
  size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

std::tm utc_tm(int64_t unix_s) {
  std::tm tm{};
  broken_down(unix_s, false, &tm);
  return tm;
}

std::tm local_tm(int64_t unix_s) {
  std::tm tm{};
  broken_down(unix_s, true, &tm);
  return tm;
}

}  // namespace

std::string iso_time_s(int64_t unix_s) {
  std::tm tm{};
  if (!broken_down(unix_s, false, &tm)) return "";  // past year 2^31: no such log
  return strftime_text(tm, "%Y-%m-%dT%H:%M:%SZ");
}

std::string iso_time_ms(int64_t unix_ms) {
  int64_t sub = ((unix_ms % 1000) + 1000) % 1000;
  return strftime_text(utc_tm((unix_ms - sub) / 1000), "%Y-%m-%dT%H:%M:%S") +
         fmt::format(".{:03d}Z", sub);
}

std::string iso_time_us(uint64_t unix_us) {
  return strftime_text(utc_tm(static_cast<int64_t>(unix_us / 1000000)), "%Y-%m-%dT%H:%M:%S") +
         fmt::format(".{:06d}+00:00", unix_us % 1000000);
}

std::string utc_datetime_text(int64_t unix_s) {
  return strftime_text(utc_tm(unix_s), "%Y-%m-%d %H:%M:%S UTC");
}

std::string local_datetime_text(int64_t unix_s) {
  return strftime_text(local_tm(unix_s), "%Y-%m-%d %H:%M:%S");
}

int utc_year(int64_t unix_s) { return utc_tm(unix_s).tm_year + 1900; }

int local_year(int64_t unix_s) { return local_tm(unix_s).tm_year + 1900; }

std::string seconds_1dp(double s) { return fmt::format("{:.1f}", s); }

}  // namespace gd
