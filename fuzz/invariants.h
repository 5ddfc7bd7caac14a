// Invariants every fuzz target checks on what the kernel-log layer returns.
// A violation is __builtin_trap(): libFuzzer reports it as a crash with the
// input that caused it, so a broken promise fails CI like a segfault does.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string_view>

#include "catalog/nvrm.h"
#include "kernlog/decode.h"
#include "snapshot/snapshot.h"

namespace gd::fuzz {

// kernlog/decode.cc cuts messages and evidence lines here (kMaxMessage).
constexpr size_t kMaxMessageBytes = 600;

// GD_REQUIRE(cond): names the broken invariant on stderr, then traps.
#define GD_REQUIRE(cond) ::gd::fuzz::require_at((cond), #cond, __FILE__, __LINE__)

inline void require_at(bool ok, const char* what, const char* file, int line) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, file, line);
  __builtin_trap();
}

// "" or an address already in the form normalize_pci_address returns.
inline bool normalized_gpu(const std::string& gpu) {
  return gpu.empty() || normalize_pci_address(gpu) == gpu;
}

// (kind, type) is one the decoder can produce: its own xid/sxid/aer, or a
// row of the pattern table (catalog/nvrm.cc) the message was classified by.
inline bool known_kind_and_type(const KernelEvent& e) {
  if (e.kind == "xid") return e.type.empty();
  if (e.kind == "sxid") {
    return e.type == "fatal" || e.type == "non-fatal" || e.type == "correctable" ||
           e.type == "unstated";
  }
  if (e.kind == "aer") {
    return e.type == "corrected" || e.type == "uncorrected-nonfatal" ||
           e.type == "uncorrected-fatal";
  }
  for (const LogPattern& p : log_patterns()) {
    if (e.kind == p.kind && e.type == p.type) return true;
  }
  return false;
}

inline bool finite_non_negative(std::optional<double> v) {
  return !v || (std::isfinite(*v) && *v >= 0);
}

// One event, folded (count >= 1) or not (count == 1). input_bytes bounds
// what any text taken from the input can be.
inline void check_event(const KernelEvent& e, size_t input_bytes) {
  GD_REQUIRE(e.count >= 1);
  GD_REQUIRE(known_kind_and_type(e));
  if (e.kind == "xid") GD_REQUIRE(e.code >= 0 && e.code <= 100000);
  if (e.kind == "sxid") GD_REQUIRE(e.code >= 0);
  if (e.kind != "xid" && e.kind != "sxid") GD_REQUIRE(e.code == 0);
  GD_REQUIRE(normalized_gpu(e.gpu));
  GD_REQUIRE(e.pid >= 0);
  // Only an SXid names an NVSwitch and its port.
  GD_REQUIRE(e.link >= -1 && (e.kind == "sxid" || (e.link == -1 && e.device.empty())));
  GD_REQUIRE(e.device.size() <= 32 && e.device.size() <= input_bytes);
  GD_REQUIRE(e.message.size() <= kMaxMessageBytes);
  GD_REQUIRE(e.line.size() <= kMaxMessageBytes && e.line.size() <= input_bytes);
  GD_REQUIRE(e.process.size() <= input_bytes);
  GD_REQUIRE(finite_non_negative(e.age_s));
}

// What KernelLogScanner::finish returned. max_age_s: the window it was given.
inline void check_info(const KernelLogInfo& info, size_t input_bytes,
                       std::optional<double> max_age_s) {
  GD_REQUIRE(info.attempted);
  for (const KernelEvent& e : info.events) {
    check_event(e, input_bytes);
    if (max_age_s && e.age_s) GD_REQUIRE(*e.age_s <= *max_age_s);
  }
  for (const auto& [pci, uuid] : info.gpu_uuids) {
    GD_REQUIRE(!pci.empty() && normalized_gpu(pci));
    GD_REQUIRE(uuid.rfind("GPU-", 0) == 0 && uuid.size() <= input_bytes);
  }
}

inline int total_count(const KernelLogInfo& info) {
  int n = 0;
  for (const KernelEvent& e : info.events) n += e.count;
  return n;
}

}  // namespace gd::fuzz
