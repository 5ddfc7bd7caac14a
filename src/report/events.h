// Kernel events for people and machines: what `gpudoctor logs` prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
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
// `logs --since`: where the window starts, and how many occurrences it could
// not place in time (KernelLogStats::undated), which were kept.
struct EventsWindow {
  std::optional<int64_t> since_unix_s;
  uint64_t undated = 0;
};
// "--since does not apply to 3 event lines that carry no date (...): they
// are shown"; "" when there are none or no window.
std::string undated_note(const EventsWindow& w);
// {"source", "unreadable", "bytes", "events": [...]}; with a window, "since"
// and "since_undated" too.
std::string render_events_json(const Snapshot& s, const EventsWindow& w = {});
// A header line and one block per event; a note: line for undated ones.
std::string render_events_text(const Snapshot& s, const EventsWindow& w = {});
// One block, for --follow.
std::string render_event_text(const Snapshot& s, const KernelEvent& e);

}  // namespace gd
