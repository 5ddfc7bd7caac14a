#include "util/time.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace gd {

int64_t now_unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso_utc_now() { return iso_time_s(static_cast<int64_t>(std::time(nullptr))); }

std::string iso_time_s(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "";  // past year 2^31: no such log
  char buf[48];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string iso_time_ms(int64_t unix_ms) {
  int64_t sub = ((unix_ms % 1000) + 1000) % 1000;
  time_t t = static_cast<time_t>((unix_ms - sub) / 1000);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[48];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(sub));
  return buf;
}

std::string iso_time_us(uint64_t unix_us) {
  std::time_t t = static_cast<std::time_t>(unix_us / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[24];
  std::snprintf(frac, sizeof frac, ".%06u+00:00", static_cast<unsigned>(unix_us % 1000000));
  return std::string(buf) + frac;
}

std::string utc_datetime_text(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string local_datetime_text(int64_t unix_s) {
  time_t t = static_cast<time_t>(unix_s);
  struct tm tm {};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

int utc_year(int64_t unix_s) {
  time_t t = static_cast<time_t>(unix_s);
  struct tm tm {};
  gmtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

int local_year(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

std::string seconds_1dp(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace gd
