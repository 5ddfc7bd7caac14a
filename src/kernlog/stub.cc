// Temporary: links while the parsers are written.
#include "kernlog/kmsg.h"
#include "kernlog/line.h"
#include "kernlog/scanner.h"
namespace gd {
Result<KmsgRecord> parse_kmsg_record(std::string_view) { return Error{"todo"}; }
bool looks_like_kmsg_record(std::string_view) { return false; }
LogLine parse_log_line(std::string_view line, int) {
  LogLine l;
  l.message = line;
  return l;
}
std::string normalize_pci_address(std::string_view) { return ""; }
std::optional<KernelEvent> KernelMessageDecoder::decode(std::string_view) { return std::nullopt; }
struct KernelLogScanner::Impl {};
KernelLogScanner::KernelLogScanner(int) : impl_(new Impl) {}
KernelLogScanner::~KernelLogScanner() = default;
void KernelLogScanner::add_text(std::string_view) {}
void KernelLogScanner::add_line(std::string_view) {}
void KernelLogScanner::add_record(const KmsgRecord&) {}
std::vector<KernelEvent> KernelLogScanner::take_new() { return {}; }
KernelLogInfo KernelLogScanner::finish(const ScanReference&, std::optional<double>) const {
  return {};
}
}  // namespace gd
