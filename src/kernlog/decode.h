// Kernel message -> KernelEvent: Xid in every driver generation's shape, the
// NVRM lines that matter (catalog/nvrm.h), NVSwitch SXid, PCIe AER, UVM,
// fabric manager, nouveau and module-signature rejections.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "snapshot/snapshot.h"

namespace gd {

// "0000:17:00" or "0000:17:00.0" or "PCI:0000:17:00" -> "0000:17:00.0";
// "" when s is not a PCI address.
std::string normalize_pci_address(std::string_view s);

// Multi-line NVRM messages (API mismatch, "fallen off the bus and is not
// responding", "not supported by the NVIDIA driver release") come as several
// lines; the decoder joins them. Feed it messages in order.
class KernelMessageDecoder {
 public:
  // Decodes one message (prefixes stripped). Returns an event when the
  // message starts or is one; a continuation line completes the previous
  // event in place and returns nullopt (pending() then holds it).
  std::optional<KernelEvent> decode(std::string_view message);

  // "NVRM: GPU at PCI:0000:17:00: GPU-..." banners seen so far.
  const std::map<std::string, std::string>& gpu_uuids() const { return uuids_; }

  // Set when the last decode() continued a multi-line event: the caller's
  // copy of that event should take this message (and gpu) instead.
  const std::optional<KernelEvent>& amended() const { return amended_; }

 private:
  std::optional<KernelEvent> open_;  // a multi-line event still collecting lines
  std::optional<KernelEvent> amended_;
  std::map<std::string, std::string> uuids_;
};

}  // namespace gd
