#include "kernlog/line.h"

#include <charconv>

#include "kernlog/kmsg.h"

namespace gd {

namespace {

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil): no timegm, no TZ, no locale.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads up to max digits at s[*i]; false when there is none.
bool read_int(std::string_view s, size_t* i, int max, int* out) {
  int v = 0, n = 0;
  while (*i < s.size() && n < max && is_digit(s[*i])) {
    v = v * 10 + (s[*i] - '0');
    ++*i;
    ++n;
  }
  *out = v;
  return n > 0;
}

bool expect(std::string_view s, size_t* i, char c) {
  if (*i >= s.size() || s[*i] != c) return false;
  ++*i;
  return true;
}

int month_index(std::string_view s) {
  for (int m = 0; m < 12; ++m) {
    if (s == kMonths[m]) return m + 1;
  }
  return 0;
}

// "HH:MM:SS[.ffffff]" -> seconds of the day (the fraction is dropped).
bool read_clock(std::string_view s, size_t* i, int* secs) {
  int h, m, sec;
  if (!read_int(s, i, 2, &h) || !expect(s, i, ':') || !read_int(s, i, 2, &m) ||
      !expect(s, i, ':') || !read_int(s, i, 2, &sec) || h > 23 || m > 59 || sec > 60) {
    return false;
  }
  if (*i < s.size() && (s[*i] == '.' || s[*i] == ',')) {
    ++*i;
    while (*i < s.size() && is_digit(s[*i])) ++*i;
  }
  *secs = h * 3600 + m * 60 + sec;
  return true;
}

// "Dec  2 10:00:01" / "Dec 02 10:00:01.123456" at s[0]; returns its length.
size_t read_syslog_stamp(std::string_view s, int year, int64_t* unix_s) {
  if (s.size() < 15 || s[3] != ' ') return 0;
  int mon = month_index(s.substr(0, 3));
  if (mon == 0) return 0;
  size_t i = 4;
  if (s[i] == ' ') ++i;
  int day, secs;
  if (!read_int(s, &i, 2, &day) || day < 1 || day > 31 || !expect(s, &i, ' ') ||
      !read_clock(s, &i, &secs)) {
    return 0;
  }
  *unix_s = days_from_civil(year, mon, day) * 86400 + secs;
  return i;
}

// "2026-12-02T10:00:01.123456+00:00", "...+0000", "...Z" or no zone.
size_t read_iso_stamp(std::string_view s, int64_t* unix_s) {
  size_t i = 0;
  int y, mo, d, secs;
  if (!read_int(s, &i, 4, &y) || i != 4 || !expect(s, &i, '-') || !read_int(s, &i, 2, &mo) ||
      !expect(s, &i, '-') || !read_int(s, &i, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31) {
    return 0;
  }
  if (i >= s.size() || (s[i] != 'T' && s[i] != ' ')) return 0;
  ++i;
  if (!read_clock(s, &i, &secs)) return 0;
  int64_t offset_s = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int sign = s[i] == '-' ? -1 : 1;
    ++i;
    int hh, mm = 0;
    if (!read_int(s, &i, 2, &hh)) return 0;
    if (i < s.size() && s[i] == ':') ++i;
    read_int(s, &i, 2, &mm);
    offset_s = sign * (hh * 3600 + mm * 60);
  }
  *unix_s = days_from_civil(y, mo, d) * 86400 + secs - offset_s;
  return i;
}

// "[  12.345678]" -> 12.345678 s since boot.
size_t read_boot_stamp(std::string_view s, double* boot_s) {
  if (s.empty() || s[0] != '[') return 0;
  size_t i = 1;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t start = i;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
  if (i == start || i >= s.size() || s[i] != ']' || i - start > 24) return 0;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data() + start, s.data() + i, v);
  if (ec != std::errc() || p != s.data() + i) return 0;
  *boot_s = v;
  return i + 1;
}

// "[Wed Dec  2 10:00:01 2026]" (dmesg -T).
size_t read_human_stamp(std::string_view s, int64_t* unix_s) {
  if (s.size() < 26 || s[0] != '[' || s[4] != ' ') return 0;
  size_t close = s.find(']');
  if (close == std::string_view::npos || close > 32) return 0;
  std::string_view inner = s.substr(5, close - 5);  // "Dec  2 10:00:01 2026"
  int64_t t = 0;
  size_t n = read_syslog_stamp(inner, 1970, &t);
  if (n == 0) return 0;
  size_t i = n;
  if (!expect(inner, &i, ' ')) return 0;
  int year;
  if (!read_int(inner, &i, 4, &year) || i != inner.size()) return 0;
  // Re-anchor the 1970 date in the right year.
  int64_t year_days = days_from_civil(year, 1, 1) - days_from_civil(1970, 1, 1);
  *unix_s = t + year_days * 86400;
  return close + 1;
}

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && (s[0] == ' ' || s[0] == '\t')) s.remove_prefix(1);
  return s;
}

// "host ident[pid]: rest" after a syslog/ISO stamp; false if not that shape.
bool strip_host_ident(std::string_view* rest, std::string_view* ident) {
  std::string_view s = skip_spaces(*rest);
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp == 0) return false;
  s.remove_prefix(sp + 1);
  size_t colon = s.find(": ");
  size_t space = s.find(' ');
  if (colon == std::string_view::npos || (space != std::string_view::npos && space < colon)) {
    return false;
  }
  std::string_view id = s.substr(0, colon);
  size_t bracket = id.find('[');
  *ident = id.substr(0, bracket);
  *rest = s.substr(colon + 2);
  return true;
}

// "kern  :warn  : " (dmesg -x / --decode).
size_t read_decode_prefix(std::string_view s) {
  size_t c1 = s.find(':');
  if (c1 == std::string_view::npos || c1 == 0 || c1 > 8) return 0;
  size_t c2 = s.find(':', c1 + 1);
  if (c2 == std::string_view::npos || c2 - c1 > 8 || c2 + 1 >= s.size() || s[c2 + 1] != ' ') {
    return 0;
  }
  for (size_t i = 0; i < c2; ++i) {
    char c = s[i];
    if (!(c == ' ' || c == ':' || (c >= 'a' && c <= 'z'))) return 0;
  }
  return c2 + 2;
}

// "[Jul 23 2024 07:53:55]" (the fabric manager's own log: month, day, year,
// time; its lines as github.com/leptonai/gpud's fabric-manager matcher
// quotes them).
size_t read_fm_stamp(std::string_view s, int64_t* unix_s) {
  if (s.size() < 22 || s[0] != '[' || s[4] != ' ') return 0;
  size_t close = s.find(']');
  if (close == std::string_view::npos || close > 24) return 0;
  std::string_view inner = s.substr(1, close - 1);  // "Jul 23 2024 07:53:55"
  int mon = month_index(inner.substr(0, 3));
  size_t i = 4;
  if (i < inner.size() && inner[i] == ' ') ++i;
  int day, year, secs;
  if (mon == 0 || !read_int(inner, &i, 2, &day) || day < 1 || day > 31 || !expect(inner, &i, ' ') ||
      !read_int(inner, &i, 4, &year) || !expect(inner, &i, ' ') || !read_clock(inner, &i, &secs) ||
      i != inner.size()) {
    return 0;
  }
  *unix_s = days_from_civil(year, mon, day) * 86400 + secs;
  return close + 1;
}

// "[ERROR] [tid 841] " after a fabric-manager stamp: the level and thread.
std::string_view skip_fm_tags(std::string_view s) {
  for (int tag = 0; tag < 2; ++tag) {
    s = skip_spaces(s);
    size_t close = s.find("] ");
    if (s.empty() || s[0] != '[' || close == std::string_view::npos || close > 16) break;
    s.remove_prefix(close + 2);
  }
  return skip_spaces(s);
}

// "<4>" before a dmesg stamp (dmesg -r: the raw syslog priority); the
// line itself when it has none.
std::string_view read_priority(std::string_view s) {
  if (s.size() < 3 || s[0] != '<') return s;
  size_t i = 1;
  while (i < s.size() && i < 5 && is_digit(s[i])) ++i;
  if (i == 1 || i >= s.size() || s[i] != '>' || i + 1 >= s.size() || s[i + 1] != '[') return s;
  return s.substr(i + 1);
}

}  // namespace

LogLine parse_log_line(std::string_view line, int year, std::optional<int64_t> written_by) {
  LogLine l = parse_log_line(line, year);
  // A day of slack: the stamp is local time, read as UTC.
  if (l.form == LineForm::kSyslog && written_by && l.unix_s && *l.unix_s > *written_by + 86400) {
    l = parse_log_line(line, year - 1);
  }
  return l;
}

LogLine parse_log_line(std::string_view line, int year) {
  LogLine l;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  l.message = line;
  if (line.empty()) return l;

  if (looks_like_kmsg_record(line)) {
    // 4,1201,88123456,-;NVRM: ... (a saved /dev/kmsg). No unescaping here:
    // the message stays a view into the line.
    size_t c1 = line.find(','), c2 = line.find(',', c1 + 1), c3 = line.find_first_of(",;", c2 + 1);
    uint64_t us = 0;
    std::from_chars(line.data() + c2 + 1, line.data() + c3, us);
    l.form = LineForm::kKmsg;
    l.boot_s = static_cast<double>(us) / 1e6;
    l.stamp = line.substr(0, line.find(';'));
    l.message = line.substr(line.find(';') + 1);
    return l;
  }

  std::string_view rest = read_priority(line);
  int64_t unix_s = 0;
  // "kern  :err   : " before a dmesg stamp or an ISO one (dmesg -x
  // --time-format iso); never before a message alone.
  bool decoded = false;  // dmesg -x: no host or ident follows the stamp
  if (size_t n = read_decode_prefix(rest); n > 0 && rest.size() > n) {
    decoded = rest[n] == '[' || read_iso_stamp(rest.substr(n), &unix_s) > 0;
    if (decoded) rest.remove_prefix(n);
  }
  double boot_s = 0;
  if (size_t n = read_boot_stamp(rest, &boot_s)) {
    l.form = LineForm::kDmesg;
    l.stamp = rest.substr(0, n);
    l.boot_s = boot_s;
    l.message = skip_spaces(rest.substr(n));
    return l;
  }
  if (size_t n = read_fm_stamp(rest, &unix_s)) {
    l.form = LineForm::kFabricManager;
    l.stamp = rest.substr(0, n);
    l.unix_s = unix_s;
    l.ident = "nv-fabricmanager";
    l.message = skip_fm_tags(rest.substr(n));
    return l;
  }
  if (size_t n = read_human_stamp(rest, &unix_s)) {
    l.form = LineForm::kDmesgHuman;
    l.stamp = rest.substr(0, n);
    l.unix_s = unix_s;
    l.message = skip_spaces(rest.substr(n));
    return l;
  }
  size_t n = read_syslog_stamp(rest, year, &unix_s);
  LineForm form = LineForm::kSyslog;
  if (n == 0) {
    n = read_iso_stamp(rest, &unix_s);
    form = LineForm::kIsoSyslog;
  }
  if (n == 0) return l;  // bare
  std::string_view after = rest.substr(n);
  std::string_view ident;
  if (decoded || !strip_host_ident(&after, &ident)) {
    // A stamp followed directly by the message (some log shippers).
    after = skip_spaces(after);
  }
  l.form = form;
  l.stamp = rest.substr(0, n);
  l.unix_s = unix_s;
  l.ident = ident;
  // "kernel: [  12.345678] NVRM: ..." carries the boot time too.
  if (size_t b = read_boot_stamp(after, &boot_s)) {
    l.boot_s = boot_s;
    after = skip_spaces(after.substr(b));
  }
  l.message = after;
  return l;
}

}  // namespace gd
