// Kernel events for people and machines: what `gpudoctor logs` prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "snapshot/snapshot.h"

namespace gd {

// What an event means and what to do, from the catalogs.
struct EventMeaning {
  std::string meaning;  // one line
  std::string fault;    // "hardware", "driver", "application", ... ("" unknown)
  std::string action;   // "reset the GPU", ... ("" none)
  std::string advice;   // the action with its command
};
EventMeaning describe_event(const KernelEvent& e);

// One event as JSON: the KernelEvent fields, the GPU's identity from s, and
// its meaning.
nlohmann::ordered_json event_to_json(const Snapshot& s, const KernelEvent& e);
// {"source", "unreadable", "bytes", "events": [...]}
std::string render_events_json(const Snapshot& s);
// A header line and one block per event.
std::string render_events_text(const Snapshot& s);
// One block, for --follow.
std::string render_event_text(const Snapshot& s, const KernelEvent& e);

}  // namespace gd
