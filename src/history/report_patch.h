// Reports in the history stored as a change (schema 3, store.cc): an RFC
// 6902 JSON Patch from the last whole report, made by the store and applied
// by it (when retention moves a base) and by the reader.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "util/result.h"

namespace gd::history {

// Reports as render_json writes them: keys in their order, two-space
// indent, a final newline; a rebuilt report reads the same as the original.
using ReportJson = nlohmann::ordered_json;

// The report's text as render_json writes it.
std::string report_text(const ReportJson& j);

// The JSON Patch that turns `from` into `to`, as compact text. Unlike
// ReportJson::diff, arrays keep what they have in common, and an object
// that gains a key is replaced whole, so a rebuilt report keeps its key order.
std::string patch_text(const ReportJson& from, const ReportJson& to);

// base with patch (text) applied; the error says why not (a hand-edited
// row: the text is no JSON Patch, or it does not apply to base).
Result<ReportJson> patched(const ReportJson& base, const std::string& patch);

}  // namespace gd::history
