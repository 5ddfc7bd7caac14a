// libFuzzer target: /dev/kmsg records (kernlog/kmsg.h) and the scanner's
// record path. The input is a saved /dev/kmsg: a record per line, each
// followed by its dictionary lines, which start with a space:
//
//   4,1201,88123456,-,caller=T812;NVRM: Xid (PCI:0000:17:00): 79, GPU has fallen off the bus.
//    SUBSYSTEM=pci
//    DEVICE=+pci:0000:17:00.0
//   6,3964,206764307,-;nvidia-nvswitch2: open (major=510)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/invariants.h"
#include "kernlog/kmsg.h"
#include "kernlog/scanner.h"

namespace {

void check_record(std::string_view record, const gd::Result<gd::KmsgRecord>& r) {
  std::string_view first = record.substr(0, record.find('\n'));
  if (!r.ok()) {
    GD_REQUIRE(!r.error().empty() && r.error().size() < 200);
    return;
  }
  GD_REQUIRE(r->level >= 0 && r->level <= 7);
  GD_REQUIRE(r->facility >= 0 && r->facility <= 127);
  size_t semi = first.find(';');
  GD_REQUIRE(semi != std::string_view::npos);
  // Unescaping only shrinks ("\x41" -> "A"); with no backslash it is the identity.
  std::string_view raw = first.substr(semi + 1);
  GD_REQUIRE(r->message.size() <= raw.size());
  if (raw.find('\\') == std::string_view::npos) GD_REQUIRE(r->message == raw);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  gd::KernelLogScanner scanner(2026);
  size_t taken = 0;
  auto take = [&] {
    for (const gd::KernelEvent& e : scanner.take_new()) {
      gd::fuzz::check_event(e, size);
      GD_REQUIRE(e.count == 1 && e.first == e.last);
      ++taken;
    }
  };
  while (!input.empty()) {
    // A record runs to the next line that does not start with a space.
    size_t end = 0;
    do {
      size_t nl = input.find('\n', end);
      end = nl == std::string_view::npos ? input.size() : nl + 1;
    } while (end < input.size() && input[end] == ' ');
    std::string_view record = input.substr(0, end);
    input.remove_prefix(end);
    auto r = gd::parse_kmsg_record(record);
    check_record(record, r);
    if (!r.ok()) continue;
    scanner.add_record(*r);
    // --follow takes new events now and then, which completes any
    // multi-line message; let the input decide when.
    if (r->seq % 4 == 0) take();
  }
  take();
  // Every event take_new handed out is folded into finish(): none lost, none invented.
  gd::KernelLogInfo all = scanner.finish({});
  gd::fuzz::check_info(all, size, std::nullopt);
  GD_REQUIRE(static_cast<size_t>(gd::fuzz::total_count(all)) == taken);
  return 0;
}
