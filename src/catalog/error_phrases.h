// Error text that names a cause without an error code: phrases that real
// programs, containers and tools print, each with the signal it gives
// `explain` (explain/rules.cc maps a signal to its causes) and
// the public thread that showed it (tests/cases/<id>.json holds its URL,
// the text as posted and the cause the thread confirmed).
#pragma once

#include <string_view>
#include <vector>

namespace gd {

struct ErrorPhrase {
  std::vector<const char*> all_of;  // lower-case substrings, all in one line
  const char* signal;               // explain's signal: "uvm:missing", "nvml:18", ...
  const char* label;                // what the line says, for the evidence
  const char* seen_in;              // the tests/cases record that shows it
};

const std::vector<ErrorPhrase>& error_phrases();

// The first phrase whose substrings all appear in `lowered` (a lower-case
// line); nullptr if none.
const ErrorPhrase* find_error_phrase(std::string_view lowered);

}  // namespace gd
