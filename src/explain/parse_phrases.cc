// Lines that name a cause in words rather than by an error code, from the
// phrase table (catalog/error_phrases.h): each gives its signal to
// explain/suspects.cc, which ranks the causes it points at.
#include "catalog/driver_regressions.h"
#include "catalog/error_phrases.h"
#include "explain/parse.h"

namespace gd {

bool parse_phrase_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  // Words a known driver regression shows (catalog/driver_regressions.cc):
  // kept so the driver-regression check can tell its symptom from others.
  if (shows_any_regression(lowered)) {
    add_reported(p, "regression-words", -1, "words a known driver regression shows", line, line_no);
  }
  const ErrorPhrase* phrase = find_error_phrase(lowered);
  if (phrase == nullptr) return false;
  add_reported(p, std::string(kPhraseKindPrefix) + phrase->signal, -1, phrase->label, line,
               line_no);
  return true;
}

}  // namespace gd
