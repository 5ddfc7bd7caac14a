// `gpudoctor serve`'s "/": one self-contained HTML page (inline CSS, no
// script, no external assets) showing each GPU and the findings.
#pragma once

#include <string>

#include "serve/exporter_state.h"

namespace gd {

std::string render_status_page(const ExporterView& v);

}  // namespace gd
