// Kernel message -> KernelEvent: Xid in every driver generation's shape, the
// NVRM lines that matter (catalog/nvrm.h), NVSwitch SXid, PCIe AER, UVM,
// fabric manager, nouveau and module-signature rejections.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// "0000:17:00", "0000:17:00.0", "PCI:0000:17:00", "00000000:17:00.0" (the
// nvidia-smi form) -> "0000:17:00.0"; "" when s is not a PCI address.
std::string normalize_pci_address(std::string_view s);

// When a line was logged, as far as the line says.
struct Occurrence {
  std::string stamp;  // as printed; "" when the line has none
  std::optional<double> boot_s;
  std::optional<int64_t> unix_s;
};

struct DecodedEvent {
  KernelEvent event;  // count 1; first/last/age unset
  Occurrence when;
};

// Several kernel messages span lines (API mismatch, "installed in this system
// has fallen off the bus", AER with its detail lines); the decoder joins
// them, so feed it messages in log order.
class KernelMessageDecoder {
 public:
  // Decodes one message (time prefixes stripped); appends the events it
  // completes to out. raw is the whole line, kept as evidence.
  void feed(std::string_view message, const Occurrence& when, std::string_view raw,
            std::vector<DecodedEvent>* out);
  // Completes an event still collecting continuation lines.
  void flush(std::vector<DecodedEvent>* out);

  // "NVRM: GPU at PCI:0000:17:00: GPU-..." banners seen so far: PCI -> UUID.
  const std::map<std::string, std::string>& gpu_uuids() const { return uuids_; }
  // True right after a line of an AER group: the next line may be one of its
  // detail lines ("nvidia 0000:01:00.0:    [ 0] RxErr"), which carry no
  // keyword of the scanner's prefilter, so the scanner feeds the lines after
  // such a group until this turns false (kernlog/candidates.h).
  bool wants_aer_detail() const { return aer_details_; }
  // Lines the scanner passed over came next: no detail line among them, or
  // it would not have, so the group takes no more.
  void passed_over_lines() { aer_details_ = false; }

 private:
  std::optional<DecodedEvent> open_;  // a multi-line event still collecting lines
  bool aer_details_ = false;          // the last line fed belongs to open_'s AER group
  std::map<std::string, std::string> uuids_;
  std::optional<DecodedEvent> lost_;  // the last Xid 79, whose banner may follow
};

// Whether a message has the form of an AER group's detail line ("nvidia
// 0000:01:00.0:    [ 0] RxErr", "...: device [10de:2684] error status/mask=
// ..."): the decoder takes no other line as one, so the lines of a group
// end at the first line without this form.
bool may_be_aer_detail(std::string_view message);

// The numbers inside a decoded event's message, for the checks that explain it.
// "RmInitAdapter failed! (0x62:0x40:2168)": the init stage and the NV_STATUS
// (facts §2.1); nullopt when the message has no "(0xS:0xN" part.
struct RmInitCodes {
  int stage = 0;
  int status = 0;
};
std::optional<RmInitCodes> rm_init_codes(const std::string& message);
// Xid 154: "GPU recovery action changed from 0x4 (Drain and Reset) to 0x1
// (GPU Reset Required)": the action after "to 0x"; -1 when there is none.
int xid154_recovery_action(const std::string& message);

}  // namespace gd
