// Placeholder until the status page lands.
#include "serve/status_page.h"

namespace gd {

std::string render_status_page(const ExporterView&) { return "<!doctype html><title>gpudoctor</title>\n"; }

}  // namespace gd
