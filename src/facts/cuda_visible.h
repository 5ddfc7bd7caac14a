// CUDA's device enumeration as the driver does it, predicted from a snapshot:
// which GPUs CUDA numbers in which order (CUDA_DEVICE_ORDER) and which of them
// a CUDA_VISIBLE_DEVICES value keeps. Pure functions, no I/O.
//
// Sources (transcribed 2026-12, docs/nvidia-facts.md §6.1, §6.2):
//  - CUDA Programming Guide, "CUDA Environment Variables": comma list of
//    indices, GPU UUIDs or any unique UUID prefix, MIG ids; unset = all,
//    empty = none; "an invalid entry stops parsing" (0,2,-1,1 -> 0 and 2);
//    CUDA_DEVICE_ORDER = FASTEST_FIRST (default) or PCI_BUS_ID.
//  - PyTorch torch/cuda/__init__.py `_parse_visible_devices` and
//    `_device_count_nvml`, written against real drivers (R510): indices are
//    read like strtoul (leading blanks skipped, trailing junk ignored, so
//    `1gpu2` is 1); a negative or non-numeric entry stops; an index past the
//    device count stops; an entry of another form than the first (a number in
//    a GPU- list) stops; a repeated device makes the WHOLE list empty.
//  - Whitespace: only the numeric form is known to skip leading blanks
//    (strtoul). Around a GPU-/MIG- id we do not assume CUDA trims, so such an
//    entry is treated as invalid and said so (conservative: never promise a
//    GPU CUDA may not show).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// One GPU as CUDA would enumerate it, with what its order and its
// CUDA_VISIBLE_DEVICES identifiers depend on.
struct GpuIdentity {
  std::string bdf;   // "0000:41:00.0", lower case
  std::string uuid;  // "GPU-1b9a0c7e-..."; "" unknown
  std::string name;  // "NVIDIA GeForce RTX 4090"; "" unknown
  int cc_major = 0;  // compute capability; 0 unknown
  int cc_minor = 0;
  uint32_t max_sm_clock_mhz = 0;    // 0 unknown
  uint64_t memory_total_bytes = 0;  // 0 unknown
  int smi_index = -1;               // nvidia-smi (NVML) index
  std::optional<bool> mig_enabled;  // nullopt unknown
};

// "00000000:41:00.0" (NVML/CUDA's 8-digit domain) and upper case both become
// "0000:41:00.0", the sysfs form every bus id in a finding uses.
std::string normalize_bdf(const std::string& bdf);

enum class GpuSource { kNone, kNvml, kCudaRun, kPci };

// The GPUs CUDA can enumerate, in nvidia-smi order (smi_index ascending).
struct GpuInventory {
  GpuSource source = GpuSource::kNone;
  std::vector<GpuIdentity> gpus;
};

// From NVML when it answered; else from a CUDA run that saw every GPU (the
// clean run, or the user's run without CUDA_VISIBLE_DEVICES); else from the
// PCI bus (GPUs bound to nvidia and not excluded). Missing NVML values are
// filled from CUDA's runs by bus id.
GpuInventory gpu_inventory(const Snapshot& s);
const char* gpu_source_name(GpuSource source);  // "NVML", "CUDA", "the PCI bus"

enum class DeviceOrder { kFastestFirst, kPciBusId };

struct DeviceOrderSetting {
  DeviceOrder order = DeviceOrder::kFastestFirst;
  bool set = false;        // CUDA_DEVICE_ORDER present in the environment
  bool recognized = true;  // value is exactly FASTEST_FIRST or PCI_BUS_ID
  std::string value;       // as set
};

// Any value other than the two documented ones leaves the default
// (FASTEST_FIRST) in place.
DeviceOrderSetting parse_device_order(const std::string* value);
const char* device_order_name(DeviceOrder order);  // "FASTEST_FIRST", "PCI_BUS_ID"

// CUDA ordinal -> position in `gpus`. FASTEST_FIRST: higher compute
// capability first, then higher max SM clock, then lower PCI bus id.
std::vector<size_t> fastest_first_order(const std::vector<GpuIdentity>& gpus);
// Ascending PCI bus id: the order of nvidia-smi and NVML.
std::vector<size_t> pci_bus_order(const std::vector<GpuIdentity>& gpus);
std::vector<size_t> cuda_order(const std::vector<GpuIdentity>& gpus, DeviceOrder order);
// True when every GPU's compute capability and max SM clock are known, so
// fastest_first_order is a prediction and not a guess.
bool fastest_first_predictable(const std::vector<GpuIdentity>& gpus);
// True when the prediction could be wrong: the GPUs differ in compute
// capability or max SM clock (or those are unknown). FASTEST_FIRST is a
// heuristic whose wording is not verified (docs/nvidia-facts.md §6, the
// CUDA_DEVICE_ORDER row); alike GPUs tie on every key and take bus-id order.
bool fastest_first_ambiguous(const std::vector<GpuIdentity>& gpus);

// CUDA's default (FASTEST_FIRST) numbering of every GPU on this machine:
// observed in the user's CUDA run when that run enumerated every GPU in the
// default order (no CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER not PCI_BUS_ID),
// else predicted from the inventory when compute capability and clocks are
// known.
struct DefaultOrder {
  bool known = false;
  bool observed = false;      // from CUDA's own run, not predicted
  std::vector<size_t> order;  // CUDA ordinal -> position in inventory.gpus
  std::string why_unknown;    // when !known
};
DefaultOrder default_cuda_order(const Snapshot& s, const GpuInventory& inv);
// Whether a CUDA run in this snapshot's environment can show the default
// order: neither CUDA_VISIBLE_DEVICES nor CUDA_DEVICE_ORDER=PCI_BUS_ID is set.
bool environment_shows_default_order(const Snapshot& s);

// --- CUDA_VISIBLE_DEVICES -----------------------------------------------------

enum class CvdForm { kIndex, kUuid, kMig, kEmpty };

enum class CvdState {
  kVisible,     // selects a device (CUDA ordinal = its place among visible ones)
  kUnverified,  // accepted but not checkable here (MIG-<uuid>, no inventory)
  kInvalid,     // the entry where CUDA stops reading
  kDuplicate,   // repeats an earlier device: CUDA then shows no device at all
  kIgnored,     // after the stop, or a second MIG instance: never used
};

struct CvdEntry {
  std::string text;  // exactly as written between commas
  CvdForm form = CvdForm::kIndex;
  CvdState state = CvdState::kVisible;
  // Position in `gpus` it selects (visible) or would select on its own
  // (ignored after the stop); nullopt when it names no known GPU.
  std::optional<size_t> gpu;
  std::optional<uint64_t> index;  // the number read, for the index form
  std::string reason;             // why invalid/ignored/unverified, "" when visible
  std::string note;               // a lenient reading: "read as index 1, 'gpu' ignored"
  bool note_is_junk = false;      // the note is about ignored characters, not blanks
};

struct CvdResult {
  bool set = false;  // the variable exists
  std::string value;
  bool inventory_known = false;   // GPUs were known, so entries were resolved
  std::vector<CvdEntry> entries;  // empty when the value is ""
  // Positions in `gpus` of the whole GPUs CUDA shows, CUDA ordinal 0 first.
  std::vector<size_t> visible;
  // kUnverified entries CUDA may show (MIG instances always count here).
  size_t unverified_visible = 0;
  std::optional<size_t> stop;  // entry index of the invalid/duplicate entry
  bool duplicate = false;      // a repeated device emptied the list

  size_t visible_count() const { return visible.size() + unverified_visible; }
  // Entries after the stop that would have named a GPU not already visible.
  std::vector<size_t> hidden_valid_entries() const;
};

// What CUDA makes of `value` (nullptr = unset) on a machine with `gpus`
// (nvidia-smi order; empty = unknown), numbering by `order`.
CvdResult parse_cuda_visible_devices(const std::string* value, const std::vector<GpuIdentity>& gpus,
                                     DeviceOrder order);

}  // namespace gd
