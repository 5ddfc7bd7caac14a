// Lines that name a cause in words rather than by an error code, from the
// phrase table (catalog/error_phrases.h): each gives its signal to
// explain/rules.cc, which maps it to the causes it points at.
#include "catalog/driver_regressions.h"
#include "catalog/error_phrases.h"
#include "explain/parse.h"
#include "util/ascii.h"

namespace gd {

bool parse_phrase_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  const ErrorPhrase* phrase = find_error_phrase(lowered);
  if (phrase == nullptr) return false;
  add_reported(p, std::string(kPhraseKindPrefix) + phrase->signal, -1, phrase->label, line,
               line_no);
  return true;
}

void add_regression_lines(std::string_view text, TextParse* p) {
  const NvmlValue<std::string>& version = p->s->nvml.driver_version;
  if (!version.ok()) return;
  auto v = parse_driver_version(version.value);
  if (!v || regressions_for(*v).empty()) return;
  // Numbered as the line parsers number them: every '\n' ends one.
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    line = line.substr(0, kMaxLineChars);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (shows_any_regression(ascii_lower(line))) {
      add_reported(p, "regression-words", -1, "words a known driver regression shows", line,
                   line_no);
    }
  }
}

}  // namespace gd
