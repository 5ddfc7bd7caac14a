// Parsers of the PCI tree: a function's place in it (the sysfs device link)
// and ACS in a bridge's config space.
#include "probe/pci_topology.h"

#include <cctype>
#include <cstdio>

#include "util/ascii.h"
#include "util/text.h"

namespace gd {

namespace {

bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "pci0000:00" (VMD: "pci10000:e0"): a root bus directory in /sys/devices.
bool is_root_bus(std::string_view s) {
  if (!s.starts_with("pci")) return false;
  s.remove_prefix(3);
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view domain = s.substr(0, colon), bus = s.substr(colon + 1);
  return domain.size() >= 4 && domain.size() <= 8 && all_hex(domain) && bus.size() == 2 &&
         all_hex(bus);
}

uint32_t le32(std::string_view b, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}

std::string hex3(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%03x", v);
  return buf;
}

}  // namespace

// "DDDD:BB:DD.F": domain (4+ hex digits), bus, device (< 0x20), function (0-7).
bool is_pci_address(std::string_view s) {
  size_t c2 = s.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return false;
  size_t c1 = s.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) return false;
  std::string_view domain = s.substr(0, c1), bus = s.substr(c1 + 1, c2 - c1 - 1);
  std::string_view devfn = s.substr(c2 + 1);
  if (domain.size() < 4 || domain.size() > 8 || !all_hex(domain)) return false;
  if (bus.size() != 2 || !all_hex(bus)) return false;
  if (devfn.size() != 4 || devfn[2] != '.' || !all_hex(devfn.substr(0, 2))) return false;
  return devfn[3] >= '0' && devfn[3] <= '7' && parse_hex(devfn.substr(0, 2)).value_or(99) < 0x20;
}

// The link as the kernel writes it (relative to /sys/bus/pci/devices):
//   0000:05:00.0 -> ../../../devices/pci0000:00/0000:00:01.1/0000:02:00.0/0000:03:08.0/0000:05:00.0
// Behind a VMD controller the tree nests a second root bus; the function
// belongs to the innermost one:
//   10000:e1:00.0 ->
//   ../../../devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0
Result<PciPath> parse_pci_device_link(std::string_view bdf, std::string_view target) {
  const std::string shown = printable(target, 160);
  std::vector<std::string_view> parts;
  if (!target.starts_with('/')) parts = {"sys", "bus", "pci", "devices"};
  size_t pos = 0;
  while (pos <= target.size()) {
    size_t slash = target.find('/', pos);
    if (slash == std::string_view::npos) slash = target.size();
    std::string_view c = target.substr(pos, slash - pos);
    pos = slash + 1;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (parts.empty()) return Error{"link " + shown + " leaves /"};
      parts.pop_back();
      continue;
    }
    if (parts.size() >= kMaxPciDepth + 8) return Error{"link " + shown + " is too deep"};
    parts.push_back(c);
  }
  if (parts.size() < 3 || parts[0] != "sys" || parts[1] != "devices") {
    return Error{"link " + shown + " does not lead into /sys/devices"};
  }
  size_t root = parts.size();
  for (size_t i = 2; i < parts.size(); ++i) {
    if (is_root_bus(parts[i])) root = i;
  }
  if (root == parts.size()) return Error{"link " + shown + " names no root bus"};
  PciPath p;
  for (size_t i = 0; i < root; ++i) p.root_dir += "/" + printable(parts[i], 64);
  p.root_bus = ascii_lower(parts[root]);
  p.root_dir += "/" + p.root_bus;
  for (size_t i = root + 1; i < parts.size(); ++i) {
    if (!is_pci_address(parts[i]))
      return Error{"link " + shown + ": '" + printable(parts[i], 32) + "' is no PCI address"};
    p.chain.push_back(ascii_lower(parts[i]));
  }
  if (p.chain.empty() || !iequals(p.chain.back(), bdf)) {
    return Error{"link " + shown + " does not end in " + printable(bdf, 32)};
  }
  if (p.chain.size() > kMaxPciDepth) return Error{"link " + shown + " is too deep"};
  return p;
}

// Config space layout (PCIe Base Specification 7.6 and 7.7.11; Linux
// drivers/pci/pci.c pci_find_next_ext_capability):
//   0x000-0x0ff  PCI-compatible space; the first 64 bytes are readable by
//                everyone, the rest of the sysfs file only with CAP_SYS_ADMIN
//   0x100-0xfff  extended capabilities, a list starting at 0x100; each
//                header is 32 bits: ID (15:0), version (19:16), next (31:20)
//   ACS (ID 0x000d): capability register at +4, control register at +6
AcsReading parse_acs_config(std::string_view config) {
  constexpr uint32_t kAcsId = 0x000d;
  constexpr size_t kExtStart = 0x100;
  // Linux bounds the same walk by the most 8-byte capabilities that fit.
  constexpr int kMaxCaps = (4096 - 256) / 8;
  AcsReading a;
  const size_t n = config.size();
  if (n <= 64) {
    a.error = "config space past 64 bytes needs root (read " + std::to_string(n) + " bytes)";
    return a;
  }
  if (n <= kExtStart) {
    a.error = "config space is " + std::to_string(n) +
              " bytes: no PCIe extended capabilities to read (conventional PCI, or no MMCONFIG)";
    return a;
  }
  size_t off = kExtStart;
  bool ended = false;
  for (int i = 0; i < kMaxCaps && !ended; ++i) {
    if (off + 4 > n) {
      a.error = "extended capability at " + hex3(static_cast<uint32_t>(off)) + " past the " +
                std::to_string(n) + " bytes read";
      a.garbled = true;
      return a;
    }
    uint32_t h = le32(config, off);
    if (h == 0xffffffff) {
      a.error = "config space reads all ones (the device does not answer)";
      return a;
    }
    if (h == 0) {  // no extended capabilities at all
      ended = true;
      break;
    }
    if ((h & 0xffff) == kAcsId) {
      if (off + 8 > n) {
        a.error = "ACS capability at " + hex3(static_cast<uint32_t>(off)) + " is cut off";
        a.garbled = true;
        return a;
      }
      a.known = a.capable = true;
      a.ctrl = static_cast<uint16_t>(le32(config, off + 4) >> 16);
      return a;
    }
    uint32_t next = (h >> 20) & 0xffc;
    ended = next < kExtStart;  // 0: the end of the list
    if (!ended) off = next;
  }
  if (ended) {
    a.known = true;  // the list ended without ACS
    return a;
  }
  a.error = "extended capability list does not end (it loops through " +
            hex3(static_cast<uint32_t>(off)) + ")";
  a.garbled = true;
  return a;
}

std::string acs_ctrl_bits(uint16_t ctrl) {
  static const char* const kBits[] = {"SV", "TB", "RR", "CR", "UF", "EC", "DT"};
  std::string out;
  for (int b = 0; b < 7; ++b) {
    if (ctrl & (1u << b)) out += (out.empty() ? "" : " ") + std::string(kBits[b]);
  }
  return out.empty() ? "none" : out;
}

}  // namespace gd
