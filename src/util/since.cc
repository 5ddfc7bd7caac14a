#include "util/since.h"

#include <cmath>
#include <ctime>
#include <optional>
#include <string>

#include "util/duration.h"

namespace gd {

namespace {

// The text as an error may quote it: one line, at most 40 characters.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) {
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  return out;
}

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool done() const { return i_ == s_.size(); }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  // Exactly n decimal digits.
  bool digits(int n, int* out) {
    int v = 0;
    for (int k = 0; k < n; ++k) {
      char c = peek();
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
      ++i_;
    }
    *out = v;
    return true;
  }
  // A fraction's digits as ms (the rest ignored); false if none.
  bool fraction_ms(int* ms) {
    int v = 0, n = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (n < 3) v = v * 10 + (peek() - '0');
      ++n;
      ++i_;
    }
    for (int k = n; k < 3; ++k) v *= 10;
    *ms = v;
    return n > 0;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// "YYYY-MM-DD[( |T)HH:MM[:SS[.fff]][Z|±HH[:]MM]]" -> unix ms; nullopt when
// the text is not that shape or names no real time.
std::optional<int64_t> parse_date_time(std::string_view text) {
  Cursor c(text);
  struct tm tm {};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, ms = 0;
  if (!c.digits(4, &year) || !c.eat('-') || !c.digits(2, &month) || !c.eat('-') ||
      !c.digits(2, &day)) {
    return std::nullopt;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) {
    return std::nullopt;
  }
  bool utc = false;
  int offset_min = 0;
  if (!c.done()) {
    if (!c.eat(' ') && !c.eat('T') && !c.eat('t')) return std::nullopt;
    if (!c.digits(2, &hour) || !c.eat(':') || !c.digits(2, &minute)) return std::nullopt;
    if (c.eat(':')) {
      if (!c.digits(2, &second)) return std::nullopt;
      if (c.eat('.') && !c.fraction_ms(&ms)) return std::nullopt;
    }
    if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
    if (c.eat('Z') || c.eat('z')) {
      utc = true;
    } else if (char sign = c.peek(); sign == '+' || sign == '-') {
      c.eat(sign);
      int oh = 0, om = 0;
      if (!c.digits(2, &oh)) return std::nullopt;
      c.eat(':');
      if (!c.digits(2, &om) || oh > 23 || om > 59) return std::nullopt;
      utc = true;
      offset_min = (sign == '-' ? -1 : 1) * (oh * 60 + om);
    }
    if (!c.done()) return std::nullopt;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;  // local time: let the zone rules say whether DST applies
  time_t t = utc ? timegm(&tm) : mktime(&tm);
  return static_cast<int64_t>(t) * 1000 + ms - static_cast<int64_t>(offset_min) * 60 * 1000;
}

// Local midnight `days_back` days before now's day.
int64_t local_midnight(int64_t now_ms, int days_back) {
  time_t now = static_cast<time_t>(now_ms / 1000);
  struct tm tm {};
  localtime_r(&now, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_mday -= days_back;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&tm)) * 1000;
}

}  // namespace

Result<int64_t> parse_since(std::string_view text, int64_t now_ms) {
  if (text == "today") return local_midnight(now_ms, 0);
  if (text == "yesterday") return local_midnight(now_ms, 1);
  bool date_like = text.size() >= 5 && text[4] == '-';
  if (date_like) {
    if (auto t = parse_date_time(text)) return *t;
    return Error{"bad date '" + shown(text) +
                 "' (use 2026-03-01, 2026-03-01T14:00, 2026-03-01T14:00:05Z or +02:00)"};
  }
  auto d = parse_duration(text);
  if (!d.ok()) {
    return Error{"bad --since '" + shown(text) +
                 "' (use a duration such as 2h or 1d, today, yesterday, or a date such as "
                 "2026-03-01 or 2026-03-01T14:00)"};
  }
  double back_ms = *d * 1000;
  // Further back than the epoch: everything.
  if (!(back_ms < static_cast<double>(now_ms))) return int64_t{0};
  return now_ms - std::llround(back_ms);
}

}  // namespace gd
