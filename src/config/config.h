// The health-threshold config file (TOML, docs/config.md) -> Config.
//
// Only the file named by --config (or $GPUDOCTOR_CONFIG) is read: no file in
// /etc is picked up behind the user's back, so a report never depends on a
// file the user did not name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace gd {

// Severity a config file may give a condition (docs/config.md).
enum class ConfigSeverity { kInfo, kWarn, kFail };

// The health thresholds of thermal.high, power.throttled, clocks.throttled,
// ecc.uncorrectable, ecc.rows-pending and gpu.reset-required: the config
// file's [thermal], [power], [clocks] and [ecc] tables, overridable per GPU
// model ([model."RTX 4090"]). docs/config.md is the user's reference; the
// defaults are relative to each GPU's own limits, so one set fits a GeForce
// workstation and an HGX server alike.
struct HealthThresholds {
  // thermal.high, GPU die. Fail at or above the GPU's own slowdown
  // temperature (NVML threshold SLOWDOWN: the hardware is then halving its
  // clocks), warn within gpu_margin_c below it. gpu_warn_c / gpu_fail_c,
  // when > 0, replace the warn / fail level with an absolute temperature.
  // A GPU that reports no slowdown threshold is judged against
  // kFallbackSlowdownC.
  int gpu_margin_c = 5;  // °C
  int gpu_warn_c = 0;    // °C; 0 = relative rule
  int gpu_fail_c = 0;    // °C; 0 = the GPU's slowdown threshold
  // thermal.high, memory (HBM GPUs report it; GeForce cards do not). Same
  // rule against the GPU's MEM_MAX threshold (kFallbackMemMaxC without one).
  int memory_margin_c = 5;  // °C
  int memory_warn_c = 0;    // °C; 0 = relative rule
  int memory_fail_c = 0;    // °C; 0 = the GPU's memory max threshold
  // power.throttled: an enforced power limit below this share of the
  // board's maximum limit is reported (info): someone lowered it. 70 keeps
  // quiet for GeForce boards, whose default limit is ~75 % of their max
  // (RTX 4090: 450 of 600 W).
  int power_limit_info_pct = 70;  // percent
  // Clock-event reasons (facts §4.5) and what they are worth.
  ConfigSeverity power_brake = ConfigSeverity::kFail;  // 0x80 HW power brake
  ConfigSeverity hw_thermal = ConfigSeverity::kFail;   // 0x40 HW thermal slowdown
  ConfigSeverity hw_slowdown = ConfigSeverity::kWarn;  // 0x08 alone (no 0x40/0x80)
  ConfigSeverity sw_thermal = ConfigSeverity::kWarn;   // 0x20 SW thermal slowdown
  // ecc.uncorrectable: this many uncorrectable errors since the driver
  // loaded fail the GPU.
  uint64_t ecc_uncorrected_fail = 1;  // count
  // Corrected (single-bit) errors since the driver loaded that warn: a
  // storm of them foretells uncorrectable ones. 0 = never.
  uint64_t ecc_corrected_warn = 0;  // count
  // Retired pages (single- plus double-bit causes) at which the GPU is out
  // of spare memory: replace it. 63 is DCGM's DCGM_LIMIT_MAX_RETIRED_PAGES
  // (dcgm_gpu_hardware_limits.h, "updated to match the field diag"; read
  // 2026-12, not in the fact sheet).
  uint32_t retired_pages_fail = 63;  // pages
  // ecc.rows-pending and gpu.reset-required: a row remap or page retirement
  // waiting for a GPU reset. The failing row is already fenced off by the
  // driver until then, so by default it is a warning (drain and reset when
  // convenient), as DCGM rates the contained Xid 94 that leads to it.
  ConfigSeverity pending = ConfigSeverity::kWarn;
};

// Used when the GPU reports no threshold of its own (NOT_SUPPORTED).
inline constexpr int kFallbackSlowdownC = 90;  // °C
inline constexpr int kFallbackMemMaxC = 95;    // °C, HBM2e/HBM3 parts' usual MEM_MAX

// Thresholds for GPUs whose NVML name contains `match` (ASCII
// case-insensitive): [model."RTX 4090"] in the config file.
struct ModelThresholds {
  std::string match;  // "RTX 4090"
  HealthThresholds thresholds;
};

// Thresholds and knobs the checks read. Defaults suit datacenter and
// consumer machines alike.
struct Config {
  // A periodic health check on a node that runs jobs (serve, check --slurm,
  // labels, --format npd), not a person asking why their CUDA fails: a live
  // job's processes on its GPUs are normal there and only orphans are
  // faults (docs/check.md "What gpudoctor does to your GPUs"). Set by the
  // command, never by the config file.
  bool fleet = false;
  // memory.held-by-other-process: warn when other processes hold more than
  // this share of a GPU's memory.
  double memory_held_fraction = 0.9;
  // memory.address-space-limit: CUDA reserves virtual address space for
  // every GPU's memory plus host memory (unified addressing); below this many
  // bytes over that sum an RLIMIT_AS is suspicious even before a failure.
  uint64_t address_space_headroom_bytes = 8ULL << 30;
  // Kernel-log events whose last occurrence is older than this many seconds
  // no longer fail a node: an Xid handled hours ago must not keep a healthy
  // node drained forever. 2 h, as the Azure HPC node health checks use.
  double kernel_log_window_s = 2 * 3600;
  // pcie.errors: this many corrected AER errors on one link within the
  // window are a warning (a poor link), fewer are info.
  int pcie_corrected_warn_count = 10;
  // pcie.link-degraded: GPUs lower their link speed when idle to save
  // power, so a low speed only counts while the GPU's utilization is at
  // least this (a narrower width always counts).
  int pcie_load_utilization_pct = 50;  // percent
  // Health thresholds for every GPU, and per-model overrides (each a full
  // set: the file's top-level values with the model's own keys on top).
  HealthThresholds health;
  std::vector<ModelThresholds> models;
  std::string source;  // the config file read; "" = built-in defaults
  // [checks] only / skip: as --only / --skip (check names, finding ids,
  // areas, globs); --skip adds to skip, --only replaces only.
  std::vector<std::string> only;
  std::vector<std::string> skip;
};

// The thresholds for a GPU with this NVML name: the model section whose
// text the name contains, the longest such text winning (ties: the first in
// byte order); the top-level ones when none matches or the name is unknown.
const HealthThresholds& thresholds_for(const Config& c, std::string_view gpu_name);
const char* config_severity_name(ConfigSeverity s);  // "info", "warn", "fail"

// The defaults when path is "", else the defaults overridden by the file.
// Error: one line naming the file, the line, the key and what is wrong
// ("gpudoctor.toml:4: thermal.gpu_margn_c: unknown key (known: ...)").
Result<Config> load_config(const std::string& path);

// The same for TOML text; `name` stands for the file in errors.
Result<Config> parse_config(std::string_view text, const std::string& name);

// The config file to read: the --config value, else $GPUDOCTOR_CONFIG (pass
// getenv's result, nullptr when unset), else "" (built-in defaults).
std::string config_path(const std::string& flag, const char* env_value);

}  // namespace gd
