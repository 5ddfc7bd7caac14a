// Sinks: render a Report. They never decide health themselves.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "checks/finding.h"

namespace gd {

struct TextOptions {
  bool verbose = false;  // also: notes in full, the folk remedies, ok and n/a findings
  bool quiet = false;    // the verdict line only
};

std::string render_text(const Report& r, const TextOptions& opt = {});
// The severity words of a rendered (and already escaped) text report in
// colour: at the start of a finding line ("  FAIL  ...") and after
// "Verdict: ". Only these: the rest of the text is the machine's own.
std::string colorize_report(const std::string& text);

// One finding as the report's "findings" array holds it.
nlohmann::ordered_json finding_to_json(const Finding& f);
// gpudoctor.report/v1: verdict, findings[] (rank order), gpus[], probes[].
nlohmann::ordered_json report_to_json(const Report& r);
std::string render_json(const Report& r);  // pretty, trailing newline

}  // namespace gd
