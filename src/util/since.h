// `gpudoctor history --since`: when a window starts, as people write it.
//
//   2h  90m  1d  1w  3600        a duration back from now (util/duration.h)
//   today  yesterday             local midnight of today / of the day before
//   2026-03-01                   local midnight of that day
//   2026-03-01 14:00             local time (a space or a T between the two)
//   2026-03-01T14:00:05Z         UTC
//   2026-03-01T14:00:05+02:00    with an offset (+0200 too); seconds may have a fraction
#pragma once

#include <cstdint>
#include <string_view>

#include "util/result.h"

namespace gd {

// The start of the window in unix ms. Error: one line quoting (at most 40
// characters of) the text.
Result<int64_t> parse_since(std::string_view text, int64_t now_ms);

}  // namespace gd
