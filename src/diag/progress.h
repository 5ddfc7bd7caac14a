// `gpudoctor diag`'s progress on stderr while the helper runs: a line per
// test as it finishes, and on a terminal the test now running. Read from the
// helper's own output lines (gpu/README.md), as they arrive.
#pragma once

#include <string>
#include <string_view>

namespace gd {

// A finished test ("  pass  memtest 0000:17:00.0 (12.1 s)"), for a "result"
// line; "" for any other line (hello, device, start, done, garbage).
std::string diag_progress_line(std::string_view helper_line);
// The test a "start" line begins ("memtest 0000:17:00.0"); "" for others.
std::string diag_started_test(std::string_view helper_line);

}  // namespace gd
