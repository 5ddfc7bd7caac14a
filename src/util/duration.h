// "90s", "30m", "2h", "1d", "1w" or plain seconds -> seconds.
#pragma once

#include <string_view>

#include "util/result.h"

namespace gd {

Result<double> parse_duration(std::string_view text);

}  // namespace gd
