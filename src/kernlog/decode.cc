#include "kernlog/decode.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "catalog/nvrm.h"
#include "util/ascii.h"
#include "util/text.h"  // trim, hex_digit

namespace gd {

namespace {

constexpr size_t kMaxMessage = 600;  // a joined multi-line message is cut here

// Up to max hex digits at s[*i]; the count read.
int read_hex(std::string_view s, size_t* i, int max, unsigned* out) {
  unsigned v = 0;
  int n = 0;
  while (*i < s.size() && n < max && hex_digit(s[*i]) >= 0) {
    v = v * 16 + static_cast<unsigned>(hex_digit(s[*i]));
    ++*i;
    ++n;
  }
  *out = v;
  return n;
}

// The length of a PCI address at s[0] ("0000:17:00" or "0000:17:00.0"), 0 if none.
size_t pci_address_length(std::string_view s) {
  size_t i = 0;
  unsigned v;
  int dom = read_hex(s, &i, 8, &v);
  if (dom < 4 || i >= s.size() || s[i] != ':') return 0;
  ++i;
  if (read_hex(s, &i, 2, &v) != 2 || i >= s.size() || s[i] != ':') return 0;
  ++i;
  if (read_hex(s, &i, 2, &v) != 2) return 0;
  if (i + 1 < s.size() && s[i] == '.' && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 1]) < 8) {
    i += 2;
  }
  return i;
}

// The first PCI address anywhere in s, normalized; "" when none.
std::string find_pci_address(std::string_view s) {
  for (size_t i = 0; i + 10 <= s.size(); ++i) {
    if (s[i + 4] != ':' && (i + 8 >= s.size() || s[i + 8] != ':')) continue;
    if (i > 0 && hex_digit(s[i - 1]) >= 0) continue;
    if (size_t n = pci_address_length(s.substr(i))) return normalize_pci_address(s.substr(i, n));
  }
  return "";
}

int parse_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() ? v : -1;
}

void cut(std::string* s) {
  if (s->size() > kMaxMessage) s->resize(kMaxMessage);
}

KernelEvent make_event(const char* kind, std::string_view type, std::string_view raw) {
  KernelEvent e;
  e.kind = kind;
  e.type = std::string(type);
  e.line = std::string(raw.substr(0, kMaxMessage));
  return e;
}

// NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
// NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting ...
// NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No
// NVRM: Xid (PCI:0000:06:00): 120, GSP task exception: store access page fault (cause:0xf) ...
// NVRM: Xid (0000:03:00): 14, Channel 00000001                      (drivers before R515)
std::optional<KernelEvent> parse_xid(std::string_view t, std::string_view raw) {
  // t starts after "Xid ("
  if (t.starts_with("PCI:")) t.remove_prefix(4);
  size_t n = pci_address_length(t);
  if (n == 0) return std::nullopt;
  KernelEvent e = make_event("xid", "", raw);
  e.gpu = normalize_pci_address(t.substr(0, n));
  size_t close = t.find("): ", n);
  if (close == std::string_view::npos || close > n + 32) return std::nullopt;
  std::string_view rest = t.substr(close + 3);
  size_t comma = rest.find(',');
  e.code = parse_int(trim(rest.substr(0, comma)));
  if (e.code < 0 || e.code > 100000) return std::nullopt;
  rest = comma == std::string_view::npos ? std::string_view() : trim(rest.substr(comma + 1));
  if (rest.starts_with("pid=")) {
    size_t end = rest.find(',');
    std::string_view pid = rest.substr(4, end == std::string_view::npos ? rest.npos : end - 4);
    e.pid = std::max(0, parse_int(pid));
    rest = end == std::string_view::npos ? std::string_view() : trim(rest.substr(end + 1));
    if (rest.starts_with("name=")) {
      size_t end2 = rest.find(", ");
      std::string_view name = rest.substr(5, end2 == std::string_view::npos ? rest.npos : end2 - 5);
      if (name != "<unknown>") e.process = std::string(trim(name));
      rest = end2 == std::string_view::npos ? std::string_view() : trim(rest.substr(end2 + 2));
    }
  }
  e.message = std::string(rest.substr(0, kMaxMessage));
  return e;
}

// One SXid line (common_nvswitch.h NVSWITCH_PRINT_SXID, the formats of
// intr_*.c, error_nvswitch.c, soe_*.c and therm_*.c in open-gpu-kernel-modules
// src/common/nvswitch/kernel), after "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): ":
//   12028, Non-fatal, Link 32 egress non-posted PRIV error (First)
//   24007, Fatal, Link 28 sourcetrack timeout error (First)
//   26006, SOE HALTED                          (no severity word)
//   22013, Severity 0 Engine instance 44 Sub-engine instance 00
//   22013, Data {0x0000002b, ...}
struct SxidLine {
  enum Form { kEvent, kSeverity, kData } form = kEvent;
  KernelEvent event;     // kEvent
  std::string severity;  // kSeverity: "severity 0, engine instance 44"
};

// "Link 32 rest" -> 32 and "rest"; -1 when the text names no link.
int take_link(std::string_view* s) {
  if (!s->starts_with("Link ")) return -1;
  std::string_view r = s->substr(5);
  size_t sp = r.find(' ');
  int link = parse_int(r.substr(0, sp));
  if (link < 0) return -1;
  *s = sp == std::string_view::npos ? std::string_view() : trim(r.substr(sp + 1));
  return link;
}

// t: past "SXid (" ; device: "nvswitch3".
std::optional<SxidLine> parse_sxid(std::string_view t, std::string_view device,
                                   std::string_view raw) {
  if (t.starts_with("PCI:")) t.remove_prefix(4);
  size_t n = pci_address_length(t);
  if (n == 0 || t.substr(n, 3) != "): ") return std::nullopt;
  SxidLine out;
  KernelEvent& e = out.event;
  e = make_event("sxid", "", raw);
  e.gpu = normalize_pci_address(t.substr(0, n));
  e.device = std::string(device.substr(0, 32));
  std::string_view rest = t.substr(n + 3);
  size_t comma = rest.find(',');
  e.code = parse_int(trim(rest.substr(0, comma)));
  if (e.code < 0) return std::nullopt;
  rest = comma == std::string_view::npos ? std::string_view() : trim(rest.substr(comma + 1));
  // The register dump and the engine line that follow an SXid's own line.
  if (rest.starts_with("Data {")) {
    out.form = SxidLine::kData;
    return out;
  }
  if (rest.starts_with("Severity ")) {
    std::string_view d = rest.substr(9);
    size_t sp = d.find(' ');
    out.form = SxidLine::kSeverity;
    out.severity = "severity " + std::string(d.substr(0, sp));
    if (size_t inst = d.find("Engine instance "); inst != std::string_view::npos) {
      std::string_view i = d.substr(inst + 16);
      out.severity += ", engine instance " + std::string(i.substr(0, i.find(' ')));
    }
    return out;
  }
  // The driver's word: Fatal, Non-fatal or Correctable; SOE, thermal and a
  // few other lines print none.
  for (auto [word, type] : {std::pair{"Fatal,", "fatal"}, std::pair{"Non-fatal,", "non-fatal"},
                            std::pair{"Correctable,", "correctable"}}) {
    if (rest.starts_with(word)) {
      e.type = type;
      rest = trim(rest.substr(std::string_view(word).size()));
      break;
    }
  }
  if (e.type.empty()) e.type = "unstated";
  e.link = take_link(&rest);
  if (rest.ends_with(" (First)")) rest.remove_suffix(8);  // the first of a burst
  e.message = std::string(rest.substr(0, kMaxMessage));
  return out;
}

const char* aer_severity(std::string_view t) {
  if (t.find("Uncorrected (Fatal)") != std::string_view::npos ||
      t.find("Uncorrectable (Fatal)") != std::string_view::npos) {
    return "uncorrected-fatal";
  }
  if (t.find("Uncorrected (Non-Fatal)") != std::string_view::npos ||
      t.find("Uncorrectable (Non-Fatal)") != std::string_view::npos) {
    return "uncorrected-nonfatal";
  }
  return "corrected";
}

// The device a "<driver> <address>: ..." line is about ("nvidia 0000:01:00.0: ...").
std::string line_device(std::string_view t) {
  size_t sp = t.find(' ');
  if (sp == std::string_view::npos || sp > 32) return "";
  std::string_view a = t.substr(sp + 1);
  size_t n = pci_address_length(a);
  return n ? normalize_pci_address(a.substr(0, n)) : "";
}

// "[ 0] RxErr": the end of "[ 0]" (past the ']'), 0 when `detail` does not
// start with a bracketed error index, as the kernel prints it ("[%2d]",
// drivers/pci/pcie/aer.c).
size_t aer_error_index_end(std::string_view detail) {
  if (detail.empty() || detail[0] != '[') return 0;
  size_t i = 1;
  while (i < detail.size() && (detail[i] == ' ' || detail[i] == '\t')) ++i;
  size_t digits = i;
  while (i < detail.size() && detail[i] >= '0' && detail[i] <= '9') ++i;
  if (i == digits || i >= detail.size() || detail[i] != ']') return 0;
  return i + 1;
}

// What an AER group's detail line says after its device: past the first
// ": ", trimmed ("[ 0] RxErr", "device [10de:2684] error status/mask=...").
std::string_view aer_detail_of(std::string_view t) {
  size_t colon = t.find(": ");
  return colon == std::string_view::npos ? "" : trim(t.substr(colon + 2));
}

}  // namespace

bool may_be_aer_detail(std::string_view message) {
  std::string_view detail = aer_detail_of(trim(message));
  return aer_error_index_end(detail) > 0 || detail.starts_with("device [");
}

namespace {

// Whether an AER group's "device [vvvv:dddd]" line (`ids` is what follows
// "device [") names an NVIDIA function (vendor 10de, docs/nvidia-facts.md
// §9) or comes from the PCIe port driver.
bool is_nvidia_or_port(std::string_view line, std::string_view ids) {
  if (line.starts_with("pcieport ")) return true;
  return ids.size() < 5 || ids[4] != ':' || iequals(ids.substr(0, 4), "10de");
}

// NVRM continuation lines start lower-case or with one of these (the
// driver's multi-line messages, open-gpu-kernel-modules osapi.c and nv.c).
bool is_nvrm_continuation(std::string_view body) {
  if (body.empty()) return false;
  char c = body[0];
  if ((c >= 'a' && c <= 'z') || c == '(') return true;
  for (std::string_view p : {"NVIDIA ", "Please", "This can", "Try ", "Make sure", "See "}) {
    if (body.starts_with(p)) return true;
  }
  return false;
}

// Messages the driver spreads over several lines: their first line.
bool opens_multiline(std::string_view body) {
  // "The NVIDIA GPU 0000:..", "The NVIDIA GeForce GT 710 GPU installed ...",
  // "The NVIDIA probe routine ..."
  return body.starts_with("API mismatch") || body.starts_with("The NVIDIA ");
}

// The lines of one multi-line message are logged together; a line logged
// later is never its continuation, whatever it starts with.
bool same_burst(const Occurrence& a, const Occurrence& b) {
  if (a.boot_s && b.boot_s) return std::abs(*a.boot_s - *b.boot_s) <= 1.0;
  if (a.unix_s && b.unix_s) return std::abs(*a.unix_s - *b.unix_s) <= 1;
  return true;  // no times (pasted lines): trust the order
}

void classify(KernelEvent* e, std::string_view text) {
  if (const LogPattern* p = match_log_pattern(text)) {
    e->kind = p->kind;
    e->type = p->type;
  }
}

}  // namespace

std::string normalize_pci_address(std::string_view s) {
  if (s.starts_with("PCI:")) s.remove_prefix(4);
  size_t i = 0;
  unsigned dom, bus, dev, fn = 0;
  int nd = read_hex(s, &i, 8, &dom);
  if (nd < 4 || i >= s.size() || s[i++] != ':') return "";
  if (read_hex(s, &i, 2, &bus) != 2 || i >= s.size() || s[i++] != ':') return "";
  if (read_hex(s, &i, 2, &dev) != 2) return "";
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (read_hex(s, &i, 1, &fn) != 1 || fn > 7) return "";
  }
  if (i != s.size() || dev > 0x1f) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
  return buf;
}

void KernelMessageDecoder::flush(std::vector<DecodedEvent>* out) {
  if (open_ && !open_->event.type.empty()) out->push_back(std::move(*open_));
  open_.reset();
}

void KernelMessageDecoder::feed(std::string_view message, const Occurrence& when,
                                std::string_view raw, std::vector<DecodedEvent>* out) {
  // An AER group's detail lines follow it directly (the kernel prints the
  // group at once, drivers/pci/pcie/aer.c); any other line ends the group.
  const bool aer_detail_expected = aer_details_;
  aer_details_ = false;
  std::string_view t = trim(message);
  if (size_t nvrm = t.find("NVRM: "); nvrm != std::string_view::npos && nvrm > 0) {
    t.remove_prefix(nvrm);  // "kernel: NVRM: ...", pasted with a prefix we do not know
  }
  auto emit = [&](KernelEvent e) {
    flush(out);
    out->push_back({std::move(e), when});
  };

  if (t.starts_with("NVRM: ")) {
    std::string_view body = trim(t.substr(6));
    if (body.starts_with("Xid (")) {
      if (auto e = parse_xid(body.substr(5), raw)) {
        if (e->code == 79) lost_ = DecodedEvent{*e, when};
        emit(std::move(*e));
      }
      return;
    }
    // NVRM: GPU at PCI:0000:17:00: GPU-3b2a6c52-2d2e-4c5e-8d4f-1a2b3c4d5e6f
    if (body.starts_with("GPU at PCI:")) {
      std::string_view a = body.substr(11);
      size_t n = pci_address_length(a);
      size_t uuid = body.find("GPU-", 11);
      std::string pci = n > 0 ? normalize_pci_address(a.substr(0, n)) : "";
      if (!pci.empty() && uuid != std::string_view::npos) {
        uuids_[pci] = std::string(trim(body.substr(uuid)));
      }
      return;
    }
    if (open_ && open_->event.kind == "nvrm" && same_burst(open_->when, when) &&
        is_nvrm_continuation(body)) {
      KernelEvent& e = open_->event;
      e.message += " ";
      e.message += body;
      cut(&e.message);
      classify(&e, "NVRM: " + e.message);
      return;
    }
    KernelEvent e = make_event("nvrm", "", raw);
    e.message = std::string(body.substr(0, kMaxMessage));
    e.gpu = find_pci_address(body);
    classify(&e, t);
    if (opens_multiline(body)) {
      flush(out);
      open_ = DecodedEvent{std::move(e), when};
      return;
    }
    // "NVRM: GPU 0000:61:00.0: GPU has fallen off the bus." right after the
    // Xid 79 of the same GPU is that Xid's banner, not a second event.
    if (e.type == "fallen-off-bus" && lost_ && lost_->event.gpu == e.gpu &&
        same_burst(lost_->when, when)) {
      lost_.reset();
      return;
    }
    if (!e.type.empty()) emit(std::move(e));
    return;
  }

  // nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress ...
  // (anywhere in the message: a prefix this parser does not know may precede it)
  if (size_t sx = t.find(": SXid ("); sx != std::string_view::npos) {
    std::string_view device = t.substr(0, sx);
    device.remove_prefix(std::min(device.size(), device.rfind(' ') + 1));  // npos + 1 == 0
    if (device.starts_with("nvidia-")) device.remove_prefix(7);
    auto line = parse_sxid(t.substr(sx + 8), device, raw);
    if (!line) return;
    if (line->form == SxidLine::kEvent) {
      // Open: its Severity line follows.
      flush(out);
      open_ = DecodedEvent{std::move(line->event), when};
    } else if (line->form == SxidLine::kSeverity && open_ && open_->event.kind == "sxid" &&
               open_->event.gpu == line->event.gpu && open_->event.code == line->event.code) {
      KernelEvent& e = open_->event;
      e.message += (e.message.empty() ? "" : "; ") + line->severity;
      cut(&e.message);
    }
    return;
  }

  // pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0
  // pcieport 0000:00:01.0: AER: Multiple Uncorrected (Fatal) error received: 0000:01:00.0
  // pcieport 0000:00:01.0: AER: Correctable error message received from 0000:01:00.0
  if (size_t aer = t.find("AER: "); aer != std::string_view::npos && aer < 48) {
    std::string_view s = t.substr(aer + 5);
    size_t from = s.find("received: ");
    size_t skip = 10;
    if (from == std::string_view::npos) {
      from = s.find("received from ");
      skip = 14;
    }
    if (from != std::string_view::npos) {
      KernelEvent e = make_event("aer", aer_severity(s), raw);
      std::string_view src = trim(s.substr(from + skip));
      size_t n = pci_address_length(src);
      e.gpu = n ? normalize_pci_address(src.substr(0, n)) : line_device(t);
      e.message = std::string(s.substr(0, kMaxMessage));
      flush(out);
      open_ = DecodedEvent{std::move(e), when};
      aer_details_ = true;
      return;
    }
  }
  // nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
  // nvidia 0000:01:00.0:   device [10de:2684] error status/mask=00000001/0000e000
  // nvidia 0000:01:00.0:    [ 0] RxErr                  (First)
  if (size_t be = t.find("Bus Error: severity="); be != std::string_view::npos && be < 64) {
    std::string dev = line_device(t);
    std::string_view text = t.substr(be >= 5 && t.substr(be - 5, 5) == "PCIe " ? be - 5 : be);
    if (open_ && open_->event.kind == "aer" && (open_->event.gpu == dev || dev.empty())) {
      open_->event.type = aer_severity(text);
      open_->event.message = std::string(text.substr(0, kMaxMessage));
      open_->event.line = std::string(raw.substr(0, kMaxMessage));
      aer_details_ = true;
      return;
    }
    KernelEvent e = make_event("aer", aer_severity(text), raw);
    e.gpu = dev;
    e.message = std::string(text.substr(0, kMaxMessage));
    flush(out);
    open_ = DecodedEvent{std::move(e), when};
    aer_details_ = true;
    return;
  }
  if (aer_detail_expected && open_ && open_->event.kind == "aer") {
    std::string dev = line_device(t);
    std::string_view detail = aer_detail_of(t);
    if (size_t close = aer_error_index_end(detail); !dev.empty() && close > 0) {
      // "[ 0] RxErr  (First)": the error's name.
      std::string_view name = trim(detail.substr(close));
      name = name.substr(0, name.find(' '));
      if (!name.empty()) {
        open_->event.message += " ";
        open_->event.message += name;
        cut(&open_->event.message);
      }
      aer_details_ = true;
      return;
    }
    if (!dev.empty() && detail.starts_with("device [")) {
      // "nvme 0000:41:00.0:   device [144d:a80a] error status/mask=...": the
      // vendor id says whose error it is. Another vendor's endpoint (a disk,
      // a NIC) is no GPU event; a port ("pcieport", any vendor) may be the
      // GPU's own link, and stays.
      if (!is_nvidia_or_port(t, detail.substr(8))) open_->event.type.clear();  // flush drops it
      aer_details_ = true;
      return;
    }
  }

  // Everything else: the pattern table (uvm, nouveau, module signing, fabric manager, ...).
  if (const LogPattern* p = match_log_pattern(t)) {
    KernelEvent e = make_event(p->kind, p->type, raw);
    e.message = std::string(t.substr(0, kMaxMessage));
    e.gpu = find_pci_address(t);
    emit(std::move(e));
  }
}

std::optional<RmInitCodes> rm_init_codes(const std::string& message) {
  size_t open = message.find("(0x");
  if (open == std::string::npos) return std::nullopt;
  char* end = nullptr;
  long stage = std::strtol(message.c_str() + open + 1, &end, 16);
  if (end == nullptr || *end != ':') return std::nullopt;
  long status = std::strtol(end + 1, nullptr, 16);
  return RmInitCodes{static_cast<int>(stage), static_cast<int>(status)};
}

int xid154_recovery_action(const std::string& message) {
  size_t to = message.rfind("to 0x");
  if (to == std::string::npos) return -1;
  return static_cast<int>(std::strtol(message.c_str() + to + 5, nullptr, 16));
}

}  // namespace gd
