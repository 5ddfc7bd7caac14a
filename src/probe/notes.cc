#include "probe/file_probes.h"

namespace gd {

void ProbeNotes::add(const std::string& what) {
  if (what.empty()) return;
  // Bounded: a tree full of garbage must not give a megabyte of detail.
  if (detail_.size() > 2000) return;
  if (!detail_.empty()) detail_ += "; ";
  detail_ += what;
}

void ProbeNotes::gap(std::string field, std::string reason) {
  add(field + ": " + reason);
  missing_ = true;
  // Bounded like the detail: one gap per field is all a check needs.
  if (gaps_.size() < 64) gaps_.push_back({std::move(field), std::move(reason)});
}

void ProbeNotes::unrecognised(int count, const std::string& source) {
  if (count <= 0) return;
  unrecognised_ += count;
  garbled(std::to_string(count) + " unrecognised line" + (count == 1 ? "" : "s") + " in " + source);
}

ProbeRecord ProbeNotes::record(std::string name) const {
  ProbeRecord r;
  r.name = std::move(name);
  r.status = garbled_   ? ProbeStatus::kFailed
             : missing_ ? ProbeStatus::kUnavailable
                        : ProbeStatus::kOk;
  r.detail = detail_;
  r.gaps = gaps_;
  r.unrecognised_lines = unrecognised_;
  return r;
}

}  // namespace gd
