#include "kernlog/kmsg.h"

#include <charconv>

#include "util/text.h"  // hex_digit

namespace gd {

namespace {

// A header field: digits only. (util/text.h's parse_u64 trims blanks, which
// a kmsg header never has: one there means the record is garbled.)
bool parse_field(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The kernel escapes non-printable bytes as \xHH; a literal backslash stays.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && hex_digit(s[i + 2]) >= 0 &&
        hex_digit(s[i + 3]) >= 0) {
      out.push_back(static_cast<char>(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3])));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

// 4,1201,88123456,-,caller=T812;NVRM: Xid (PCI:0000:17:00): 79, ...
//  SUBSYSTEM=pci
Result<KmsgRecord> parse_kmsg_record(std::string_view record) {
  size_t nl = record.find('\n');
  std::string_view first = record.substr(0, nl);  // dictionary lines follow, ignored
  size_t semi = first.find(';');
  if (semi == std::string_view::npos) return Error{"kmsg record has no ';' after its header"};
  std::string_view header = first.substr(0, semi);
  std::string_view fields[4];
  size_t n = 0;
  while (n < 4) {
    size_t comma = header.find(',');
    fields[n++] = header.substr(0, comma);
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  if (n < 4) return Error{"kmsg record header has fewer than 4 fields"};
  uint64_t prio = 0;
  KmsgRecord r;
  if (!parse_field(fields[0], &prio) || prio > 1023) {
    return Error{"kmsg record has a bad priority '" + std::string(fields[0].substr(0, 20)) + "'"};
  }
  if (!parse_field(fields[1], &r.seq)) return Error{"kmsg record has a bad sequence number"};
  if (!parse_field(fields[2], &r.ts_usec)) return Error{"kmsg record has a bad timestamp"};
  r.level = static_cast<int>(prio & 7);
  r.facility = static_cast<int>(prio >> 3);
  r.continuation = fields[3].find('c') != std::string_view::npos;
  r.message = unescape(first.substr(semi + 1));
  return r;
}

bool looks_like_kmsg_record(std::string_view line) {
  // digits ',' digits ',' digits ',' ... ';' within the first 64 bytes
  int commas = 0;
  bool digit = false;
  for (size_t i = 0; i < line.size() && i < 64; ++i) {
    char c = line[i];
    if (commas < 3) {
      if (c >= '0' && c <= '9') {
        digit = true;
      } else if (c == ',' && digit) {
        ++commas;
        digit = false;
      } else {
        return false;
      }
    } else if (c == ';') {
      return true;
    }
  }
  return false;
}

}  // namespace gd
