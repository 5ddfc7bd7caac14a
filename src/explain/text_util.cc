// Small helpers shared by the explain parsers.
#include <algorithm>

#include "explain/parse.h"

namespace gd {

void add_reported(TextParse* p, std::string kind, int code, std::string text, std::string_view line,
                  int line_no) {
  // Bounded: a huge log repeating one line must not grow the snapshot
  // without limit; the first lines of each kind are what evidence quotes.
  constexpr size_t kMaxReported = 2000;
  if (p->s->reported.size() >= kMaxReported) return;
  ReportedError r;
  r.kind = std::move(kind);
  r.code = code;
  // What a parser says of the line stays short, whatever the line: a text
  // that is the rest of a 4 KiB line is cut at a character's start.
  constexpr size_t kMaxTextChars = 240;
  if (text.size() > kMaxTextChars) {
    size_t cut = kMaxTextChars;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  r.text = std::move(text);
  r.line = std::string(trim(line));
  r.line_no = line_no;
  p->s->reported.push_back(std::move(r));
  p->observed.insert("reported");
}

const std::optional<CodeMention>& code_on_line(std::string_view line, std::string_view lowered,
                                               int line_no, TextParse* p) {
  if (p->code_line_no != line_no) {
    p->code_line_no = line_no;
    p->code = find_error_code(line, lowered);
  }
  return p->code;
}

bool is_ident_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

std::string_view ident_at(std::string_view s, size_t pos) {
  size_t end = pos;
  while (end < s.size() && is_ident_char(s[end])) ++end;
  return s.substr(pos, end - pos);
}

bool icontains(std::string_view lowered_haystack, std::string_view lowered_needle) {
  return lowered_haystack.find(lowered_needle) != std::string_view::npos;
}

namespace {

// UTF-16 by its byte-order mark, or by NULs in every other byte of the
// start (ASCII text in UTF-16 without a mark); 0 none, 1 little-, 2 big-endian.
int utf16_order(std::string_view raw) {
  if (raw.size() >= 2 && raw[0] == '\xff' && raw[1] == '\xfe') return 1;
  if (raw.size() >= 2 && raw[0] == '\xfe' && raw[1] == '\xff') return 2;
  size_t n = std::min<size_t>(raw.size() & ~size_t{1}, 256);
  if (n < 8) return 0;
  size_t odd_nul = 0, even_nul = 0;
  for (size_t i = 0; i < n; i += 2) {
    even_nul += raw[i] == '\0';
    odd_nul += raw[i + 1] == '\0';
  }
  if (odd_nul * 10 >= n / 2 * 9 && even_nul == 0) return 1;
  if (even_nul * 10 >= n / 2 * 9 && odd_nul == 0) return 2;
  return 0;
}

std::string from_utf16(std::string_view raw, int order) {
  std::string out;
  out.reserve(raw.size() / 2);
  size_t i = (raw.size() >= 2 && (raw[0] == '\xff' || raw[0] == '\xfe')) ? 2 : 0;
  for (; i + 1 < raw.size(); i += 2) {
    auto lo = static_cast<unsigned char>(order == 1 ? raw[i] : raw[i + 1]);
    auto hi = static_cast<unsigned char>(order == 1 ? raw[i + 1] : raw[i]);
    out += hi == 0 && lo < 0x80 ? static_cast<char>(lo) : '?';
  }
  return out;
}

}  // namespace

std::string plain_text(std::string_view raw) {
  std::string decoded;
  if (int order = utf16_order(raw)) {
    decoded = from_utf16(raw, order);
    raw = decoded;
  }
  if (raw.starts_with("\xef\xbb\xbf")) raw.remove_prefix(3);
  // Most pastes have neither escapes nor carriage returns: one copy.
  if (raw.find('\x1b') == std::string_view::npos && raw.find('\r') == std::string_view::npos) {
    return std::string(raw);
  }
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
      // CSI: parameter and intermediate bytes (0x20-0x3f), then one final
      // byte (0x40-0x7e). A sequence cut short ends at the first other byte,
      // which stays: a garbled one never swallows the next line.
      size_t j = i + 2;
      auto byte = [&](size_t k) { return static_cast<unsigned char>(raw[k]); };
      while (j < raw.size() && byte(j) >= 0x20 && byte(j) < 0x40) ++j;
      i = j < raw.size() && byte(j) >= 0x40 && byte(j) <= 0x7e ? j : j - 1;
      continue;
    }
    if (c == '\x1b' && i + 1 < raw.size() && raw[i + 1] == ']') {
      // OSC (a window title, a hyperlink): up to BEL or ESC backslash; the
      // end of the line ends it too, and stays.
      size_t j = i + 2;
      while (j < raw.size() && raw[j] != '\a' && raw[j] != '\x1b' && raw[j] != '\n') ++j;
      if (j < raw.size() && raw[j] == '\x1b') ++j;  // the backslash after it is skipped next
      i = j < raw.size() && raw[j] == '\n' ? j - 1 : j;
      continue;
    }
    if (c == '\r') {
      if (i + 1 < raw.size() && raw[i + 1] == '\n') continue;  // CRLF: the LF ends it
      out += '\n';
      continue;
    }
    out += c;
  }
  return out;
}

CudaRun& text_cuda_run(TextParse* p) {
  Snapshot& s = *p->s;
  p->observed.insert("cuda");
  s.cuda.attempted = true;
  if (s.cuda.runs.empty()) {
    CudaRun r;
    r.label = "user";
    r.library_requested = "libcuda.so.1";
    // Not empty: an empty library_loaded means dlopen failed, which the text
    // has not said.
    r.library_loaded = "as reported";
    s.cuda.runs.push_back(std::move(r));
  }
  return s.cuda.runs.front();
}

NvmlInfo& text_nvml(TextParse* p) {
  p->observed.insert("nvml");
  NvmlInfo& n = p->s->nvml;
  if (!n.attempted) {
    n.attempted = true;
    n.library_requested = "libnvidia-ml.so.1";
    n.library_loaded = "as reported";
  }
  return n;
}

}  // namespace gd
