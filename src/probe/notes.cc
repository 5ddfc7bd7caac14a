#include "probe/file_probes.h"

namespace gd {

void ProbeNotes::add(std::string what) {
  if (what.empty()) return;
  // Bounded: a tree full of garbage must not give a megabyte of detail.
  if (detail_.size() > 2000) return;
  if (!detail_.empty()) detail_ += "; ";
  detail_ += what;
}

ProbeRecord ProbeNotes::record(std::string name) const {
  ProbeRecord r;
  r.name = std::move(name);
  r.status = garbled_   ? ProbeStatus::kFailed
             : missing_ ? ProbeStatus::kUnavailable
                        : ProbeStatus::kOk;
  r.detail = detail_;
  return r;
}

}  // namespace gd
