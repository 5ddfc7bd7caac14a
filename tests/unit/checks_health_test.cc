// Tests of the health checks: thermal.high, power.throttled,
// clocks.throttled, ecc.uncorrectable, ecc.rows-pending and the NVML side of
// gpu.reset-required, on hand-built snapshots of the test machines with
// their NVML health readings filled in.
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "checks/health_util.h"
#include "checks/runner.h"
#include "config/config.h"
#include "kernlog/scanner.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

// Readings of an idle, cool GPU as NVML gives them on a GeForce card: no
// ECC, no row remapping, no memory temperature.
void idle_geforce(NvmlGpu* g) {
  NvmlHealth& h = g->health;
  h.temperature_c = nv_ok(41);
  h.memory_temperature_c = nv_rc<int>(kNvmlNotSupported);
  h.temp_shutdown_c = nv_ok<uint32_t>(95);
  h.temp_slowdown_c = nv_ok<uint32_t>(90);
  h.temp_mem_max_c = nv_rc<uint32_t>(kNvmlNotSupported);
  h.temp_gpu_max_c = nv_ok<uint32_t>(88);
  h.power_usage_mw = nv_ok<uint32_t>(30000);
  h.power_limit_mw = nv_ok<uint32_t>(450000);
  h.power_max_limit_mw = nv_ok<uint32_t>(600000);
  h.sm_clock_mhz = nv_ok<uint32_t>(210);
  h.mem_clock_mhz = nv_ok<uint32_t>(405);
  h.clock_event_reasons = nv_ok<uint64_t>(kReasonGpuIdle);
  h.pstate = nv_ok(8);
  h.utilization_gpu_pct = nv_ok<uint32_t>(0);
  h.fan_speed_pct = nv_ok<uint32_t>(30);
  h.ecc_mode_current = nv_rc<int>(kNvmlNotSupported);
  h.ecc_mode_pending = nv_rc<int>(kNvmlNotSupported);
  h.ecc_uncorrected_volatile = nv_rc<uint64_t>(kNvmlNotSupported);
  h.retired_pages_sbe = nv_rc<uint32_t>(kNvmlNotSupported);
  h.retired_pages_dbe = nv_rc<uint32_t>(kNvmlNotSupported);
  h.retired_pages_pending = nv_rc<int>(kNvmlNotSupported);
  h.remapped_rows_correctable = nv_rc<uint32_t>(kNvmlNotSupported);
  h.remapped_rows_uncorrectable = nv_rc<uint32_t>(kNvmlNotSupported);
  h.remap_pending = nv_rc<int>(kNvmlNotSupported);
  h.remap_failure = nv_rc<int>(kNvmlNotSupported);
}

// An H100 SXM: ECC on and clean, row remapping, HBM temperature.
void idle_h100(NvmlGpu* g) {
  idle_geforce(g);
  NvmlHealth& h = g->health;
  h.memory_temperature_c = nv_ok(45);
  h.temp_shutdown_c = nv_ok<uint32_t>(92);
  h.temp_slowdown_c = nv_ok<uint32_t>(89);
  h.temp_mem_max_c = nv_ok<uint32_t>(95);
  h.temp_gpu_max_c = nv_ok<uint32_t>(87);
  h.power_usage_mw = nv_ok<uint32_t>(70000);
  h.power_limit_mw = nv_ok<uint32_t>(700000);
  h.power_max_limit_mw = nv_ok<uint32_t>(700000);
  h.fan_speed_pct = nv_rc<uint32_t>(kNvmlNotSupported);
  h.ecc_mode_current = nv_ok(1);
  h.ecc_mode_pending = nv_ok(1);
  h.ecc_corrected_volatile = nv_ok<uint64_t>(0);
  h.ecc_uncorrected_volatile = nv_ok<uint64_t>(0);
  h.ecc_corrected_aggregate = nv_ok<uint64_t>(0);
  h.ecc_uncorrected_aggregate = nv_ok<uint64_t>(0);
  h.retired_pages_sbe = nv_rc<uint32_t>(kNvmlNotSupported);  // Hopper remaps rows instead
  h.retired_pages_dbe = nv_rc<uint32_t>(kNvmlNotSupported);
  h.retired_pages_pending = nv_rc<int>(kNvmlNotSupported);
  h.remapped_rows_correctable = nv_ok<uint32_t>(0);
  h.remapped_rows_uncorrectable = nv_ok<uint32_t>(0);
  h.remap_pending = nv_ok(0);
  h.remap_failure = nv_ok(0);
}

Snapshot ws() {
  Snapshot s = ws_4x4090();
  for (auto& g : s.nvml.gpus) idle_geforce(&g);
  return s;
}

Snapshot hgx() {
  Snapshot s = hgx_8xh100();
  for (auto& g : s.nvml.gpus) idle_h100(&g);
  return s;
}

NvmlHealth& health_of(Snapshot& s, std::string_view bdf) {
  for (auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.value == bdf) return g.health;
  }
  ADD_FAILURE() << "no NVML GPU " << bdf;
  return s.nvml.gpus.front().health;
}

Config config_from(std::string_view toml) {
  auto c = parse_config(toml, "test.toml");
  EXPECT_TRUE(c.ok()) << c.error();
  return c.ok() ? *c : Config{};
}

// Every health check says n/a, never ok, when NVML did not answer.
TEST(HealthChecks, NotApplicableWithoutNvml) {
  Snapshot s = no_nvidia_machine();
  for (CheckFn fn : {check_thermal, check_power, check_clocks, check_ecc, check_rows_pending}) {
    auto fs = fn(s, kConfig);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].severity, Severity::kNotApplicable) << describe(fs);
    EXPECT_NE(fs[0].summary.find("libnvidia-ml.so.1 could not be loaded"), std::string::npos)
        << describe(fs);
  }
}

// The registry runs them by the ids it lists.
TEST(HealthChecks, RegistryRowsEmitTheirIds) {
  Snapshot s = hgx();
  for (const CheckEntry* e :
       registry_entries({"thermal", "power", "clocks", "ecc", "rows-pending", "reset-required"})) {
    auto fs = e->fn(s, kConfig);
    ASSERT_EQ(fs.size(), 1u) << e->name;
    EXPECT_EQ(fs[0].id, e->ids.front());
    EXPECT_EQ(fs[0].severity, Severity::kOk) << describe(fs);
  }
}

// --- thermal.high ------------------------------------------------------------

TEST(Thermal, NotSupportedEverywhereIsNotApplicable) {
  Snapshot s = ws_4x4090();  // no health readings: rc -1 (never asked)
  EXPECT_EQ(only(check_thermal(s, kConfig), "thermal.high").severity, Severity::kNotApplicable);
  for (auto& g : s.nvml.gpus) g.health.temperature_c = nv_rc<int>(kNvmlNotSupported);
  EXPECT_EQ(only(check_thermal(s, kConfig), "thermal.high").severity, Severity::kNotApplicable);
}

TEST(Thermal, CoolGpusAreOkWithTheirReadings) {
  Snapshot s = ws();
  health_of(s, "0000:41:00.0").temperature_c = nv_ok(48);
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_NE(f.summary.find("hottest 48 °C, 0000:41:00.0"), std::string::npos) << f.summary;
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:01:00.0 (NVIDIA GeForce RTX 4090): 41 °C; slowdown at 90 "
                           "°C, shutdown at 95 °C; warn at 85 °C, fail at 90 °C; fan 30 %"))
      << describe(f);
}

TEST(Thermal, WithinMarginOfSlowdownWarns) {
  Snapshot s = ws();
  health_of(s, "0000:41:00.0").temperature_c = nv_ok(87);
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_TRUE(evidence_has(f, "GPU 0000:41:00.0 (NVIDIA GeForce RTX 4090): 87 °C; slowdown at 90"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "nvidia-smi -q -d TEMPERATURE,PERFORMANCE -i 0000:41:00.0"));
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -i 0000:41:00.0 -pl <watts>"));
  // One degree cooler than the warning level: ok.
  health_of(s, "0000:41:00.0").temperature_c = nv_ok(84);
  EXPECT_EQ(only(check_thermal(s, kConfig), "thermal.high").severity, Severity::kOk);
}

TEST(Thermal, AtSlowdownFails) {
  Snapshot s = ws();
  health_of(s, "0000:21:00.0").temperature_c = nv_ok(90);
  health_of(s, "0000:61:00.0").temperature_c = nv_ok(86);
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, (std::vector<std::string>{"0000:21:00.0", "0000:61:00.0"}));
  EXPECT_NE(
      f.summary.find("1 at or above the fail temperature, 1 at or above the warning temperature"),
      std::string::npos)
      << f.summary;
  EXPECT_TRUE(remedy_has(f,
                         "for g in 0000:21:00.0 0000:61:00.0; do sudo nvidia-smi -i $g -pl "
                         "<watts>; done"))
      << describe(f);
}

TEST(Thermal, NoSlowdownThresholdUsesTheFallback) {
  Snapshot s = ws();
  NvmlHealth& h = health_of(s, "0000:01:00.0");
  h.temp_slowdown_c = nv_rc<uint32_t>(kNvmlNotSupported);
  h.temperature_c = nv_ok(86);
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f, "no slowdown threshold reported (90 °C assumed)")) << describe(f);
}

TEST(Thermal, MemoryTemperatureAgainstMemMax) {
  Snapshot s = hgx();
  health_of(s, "0000:3a:00.0").memory_temperature_c = nv_ok(91);
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:3a:00.0 (NVIDIA H100 80GB HBM3): memory 91 °C; memory max "
                           "95 °C; warn at 90 °C, fail at 95 °C"))
      << describe(f);
  health_of(s, "0000:3a:00.0").memory_temperature_c = nv_ok(95);
  f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:3a:00.0"});
}

TEST(Thermal, AbsoluteOverrideReplacesTheRelativeLevels) {
  Snapshot s = hgx();
  health_of(s, "0000:18:00.0").temperature_c = nv_ok(81);
  EXPECT_EQ(only(check_thermal(s, kConfig), "thermal.high").severity, Severity::kOk);
  Config c = config_from("[thermal]\ngpu_warn_c = 80\ngpu_fail_c = 85\n");
  Finding f = only(check_thermal(s, c), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f, "warn at 80 °C, fail at 85 °C")) << describe(f);
  health_of(s, "0000:18:00.0").temperature_c = nv_ok(85);
  EXPECT_EQ(only(check_thermal(s, c), "thermal.high").severity, Severity::kFail);
}

TEST(Thermal, PerModelSectionAppliesOnlyToThatModel) {
  // A mixed box: two 4090s and, pretend, two H100s.
  Snapshot s = ws();
  for (int i : {2, 3}) {
    s.nvml.gpus[i].name = nv_ok(std::string("NVIDIA H100 PCIe"));
    idle_h100(&s.nvml.gpus[i]);
  }
  health_of(s, "0000:01:00.0").temperature_c = nv_ok(87);  // 4090
  health_of(s, "0000:41:00.0").temperature_c = nv_ok(87);  // H100: slowdown 89 -> warn at 84
  Config c = config_from("[model.\"rtx 4090\"]\nthermal.gpu_warn_c = 88\n");
  Finding f = only(check_thermal(s, c), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"}) << describe(f);
}

// A GPU NVML cannot open is noted, never called healthy, and left to
// gpu.fallen-off-bus: one lost GPU is not five health problems.
TEST(Thermal, UnopenedGpuIsNotedNotJudged) {
  constexpr int kNvmlNoPermission = 4;
  Snapshot s = ws();
  s.nvml.gpus[2].handle_rc = kNvmlNoPermission;
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kInfo) << describe(f);
  EXPECT_EQ(f.summary, "1 GPU not checked: NVML could not open it");
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:41:00.0 (NVIDIA GeForce RTX 4090): not checked: "
                           "nvmlDeviceGetHandleByIndex_v2 returned NVML_ERROR_NO_PERMISSION (4)"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "gpu.fallen-off-bus"));
  // An unopened GPU on a hot machine: the hot GPU decides the severity, and
  // the remedy commands name only the hot one.
  health_of(s, "0000:61:00.0").temperature_c = nv_ok(95);
  f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_EQ(f.gpus, (std::vector<std::string>{"0000:61:00.0", "0000:41:00.0"}));
  EXPECT_TRUE(remedy_has(f, "-i 0000:61:00.0 -pl")) << describe(f);
  EXPECT_NE(f.summary.find("; 1 GPU not checked"), std::string::npos) << f.summary;
  // Every health check notes it the same way.
  s = hgx();
  s.nvml.gpus[7].handle_rc = kNvmlNoPermission;
  for (CheckFn fn : {check_thermal, check_power, check_clocks, check_ecc, check_rows_pending}) {
    auto fs = fn(s, kConfig);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].severity, Severity::kInfo) << describe(fs);
    EXPECT_EQ(fs[0].gpus, std::vector<std::string>{"0000:db:00.0"}) << describe(fs);
  }
}

// A lost GPU is gpu.fallen-off-bus's alone: the health checks judge the rest
// and say nothing of it, so one lost GPU is not five findings.
TEST(Thermal, LostGpuIsLeftToFallenOffBus) {
  Snapshot s = hgx();
  s.nvml.gpus[7].handle_rc = kNvmlGpuLost;
  for (CheckFn fn : {check_thermal, check_power, check_clocks, check_ecc, check_rows_pending}) {
    auto fs = fn(s, kConfig);
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].severity, Severity::kOk) << describe(fs);
    EXPECT_TRUE(fs[0].gpus.empty()) << describe(fs);
  }
}

// A reading that fails on a GPU NVML did open is a warning: unknown, not fine.
TEST(Thermal, FailedReadingWarns) {
  Snapshot s = ws();
  health_of(s, "0000:21:00.0").temperature_c = nv_rc<int>(kNvmlGpuLost);
  Finding f = only(check_thermal(s, kConfig), "thermal.high");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.summary, "the temperature of 1 GPU could not be read");
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:21:00.0 (NVIDIA GeForce RTX 4090): "
                           "nvmlDeviceGetTemperature returned NVML_ERROR_GPU_IS_LOST (15), so "
                           "its temperature is unknown"))
      << describe(f);
}

// --- power.throttled -----------------------------------------------------------

TEST(Power, PowerBrakeFails) {
  Snapshot s = hgx();
  NvmlHealth& h = health_of(s, "0000:5d:00.0");
  h.clock_event_reasons = nv_ok<uint64_t>(kReasonHwPowerBrake | kReasonHwSlowdown);
  h.power_usage_mw = nv_ok<uint32_t>(250500);
  h.sm_clock_mhz = nv_ok<uint32_t>(705);
  Finding f = only(check_power(s, kConfig), "power.throttled");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:5d:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:5d:00.0 (NVIDIA H100 80GB HBM3): clock-event reasons 0x88 "
                           "(HW slowdown, HW power brake); drawing 250.5 W of its 700.0 W "
                           "limit (board max 700.0 W); SM 705 MHz: the hardware power brake "
                           "is on"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "nvidia-smi -q -d PERFORMANCE,POWER -i 0000:5d:00.0"));
  EXPECT_TRUE(remedy_has(f, "ipmitool sdr type 'Power Supply'"));
  // The config can make it a warning.
  Config c = config_from("[power]\nbrake = \"warn\"\n");
  EXPECT_EQ(only(check_power(s, c), "power.throttled").severity, Severity::kWarn);
}

TEST(Power, SoftwarePowerCapUnderLoadIsNormal) {
  Snapshot s = hgx();
  NvmlHealth& h = health_of(s, "0000:18:00.0");
  h.clock_event_reasons = nv_ok<uint64_t>(kReasonSwPowerCap);
  h.power_usage_mw = nv_ok<uint32_t>(699000);
  h.utilization_gpu_pct = nv_ok<uint32_t>(100);
  Finding f = only(check_power(s, kConfig), "power.throttled");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_NE(f.summary.find("1 of 8 at its power limit under load (SW power cap), which is normal"),
            std::string::npos)
      << f.summary;
  EXPECT_TRUE(evidence_has(f, "at its power limit (SW power cap), normal under load"));
}

TEST(Power, LoweredLimitIsInfo) {
  Snapshot s = ws();
  NvmlHealth& h = health_of(s, "0000:21:00.0");
  h.power_limit_mw = nv_ok<uint32_t>(300000);  // 50 % of 600 W
  h.clock_event_reasons = nv_ok<uint64_t>(kReasonSwPowerCap);
  Finding f = only(check_power(s, kConfig), "power.throttled");
  EXPECT_EQ(f.severity, Severity::kInfo) << describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "the enforced limit is 50 % of the board's maximum, and the GPU is "
                           "capped at it now (SW power cap)"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -i 0000:21:00.0 -pl <watts>"));
  // The GeForce default (450 of 600 W, 75 %) says nothing.
  h.power_limit_mw = nv_ok<uint32_t>(450000);
  EXPECT_EQ(only(check_power(s, kConfig), "power.throttled").severity, Severity::kOk);
}

TEST(Power, UnreadableReasonsWarnAndNotSupportedIsNotApplicable) {
  Snapshot s = ws();
  for (auto& g : s.nvml.gpus) {
    g.health.clock_event_reasons = nv_rc<uint64_t>(kNvmlNotSupported);
    g.health.power_max_limit_mw = nv_rc<uint32_t>(kNvmlNotSupported);
  }
  EXPECT_EQ(only(check_power(s, kConfig), "power.throttled").severity, Severity::kNotApplicable);
  s.nvml.gpus[1].health.clock_event_reasons = nv_rc<uint64_t>(999);
  Finding f = only(check_power(s, kConfig), "power.throttled");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f, "nvmlDeviceGetCurrentClocksEventReasons returned"));
}

// --- clocks.throttled -----------------------------------------------------------

TEST(Clocks, NormalReasonsAreOk) {
  Snapshot s = ws();
  uint64_t normal[] = {0,
                       kReasonGpuIdle,
                       kReasonAppClocks,
                       kReasonSyncBoost,
                       kReasonDisplayClock,
                       kReasonSwPowerCap};
  for (uint64_t bits : normal) {
    for (auto& g : s.nvml.gpus) g.health.clock_event_reasons = nv_ok(bits);
    Finding f = only(check_clocks(s, kConfig), "clocks.throttled");
    EXPECT_EQ(f.severity, Severity::kOk) << bits << "\n" << describe(f);
  }
}

TEST(Clocks, HwThermalSlowdownFails) {
  Snapshot s = ws();
  NvmlHealth& h = health_of(s, "0000:41:00.0");
  h.clock_event_reasons = nv_ok<uint64_t>(kReasonHwThermal | kReasonHwSlowdown);
  h.sm_clock_mhz = nv_ok<uint32_t>(1005);
  h.temperature_c = nv_ok(91);
  Finding f = only(check_clocks(s, kConfig), "clocks.throttled");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:41:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:41:00.0 (NVIDIA GeForce RTX 4090): clock-event reasons "
                           "0x48 (HW slowdown, HW thermal slowdown); SM 1005 of max 2640 MHz; "
                           "91 °C"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "thermal.high"));
  Config c = config_from("[clocks]\nhw_thermal = \"warn\"\n");
  EXPECT_EQ(only(check_clocks(s, c), "clocks.throttled").severity, Severity::kWarn);
}

TEST(Clocks, HwSlowdownAloneWarnsWithResetRemedy) {
  Snapshot s = hgx();
  health_of(s, "0000:ab:00.0").clock_event_reasons = nv_ok<uint64_t>(kReasonHwSlowdown);
  Finding f = only(check_clocks(s, kConfig), "clocks.throttled");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -r -i 0000:ab:00.0")) << describe(f);
}

TEST(Clocks, SwThermalWarnsAboutCooling) {
  Snapshot s = ws();
  health_of(s, "0000:61:00.0").clock_event_reasons =
      nv_ok<uint64_t>(kReasonSwThermal | kReasonSwPowerCap);
  Finding f = only(check_clocks(s, kConfig), "clocks.throttled");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_NE(f.summary.find("SW thermal slowdown (cooling falls short)"), std::string::npos)
      << f.summary;
  EXPECT_TRUE(evidence_has(f, "0x24 (SW power cap, SW thermal slowdown)")) << describe(f);
}

TEST(Clocks, PowerBrakeSlowdownIsLeftToPowerThrottled) {
  Snapshot s = ws();
  health_of(s, "0000:01:00.0").clock_event_reasons =
      nv_ok<uint64_t>(kReasonHwPowerBrake | kReasonHwSlowdown);
  Finding f = only(check_clocks(s, kConfig), "clocks.throttled");
  EXPECT_EQ(f.severity, Severity::kInfo) << describe(f);
  EXPECT_TRUE(evidence_has(f, "see power.throttled"));
  EXPECT_EQ(only(check_power(s, kConfig), "power.throttled").severity, Severity::kFail);
}

// --- ecc.uncorrectable -------------------------------------------------------------

TEST(Ecc, GeForceHasNoEcc) {
  Finding f = only(check_ecc(ws(), kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kNotApplicable) << describe(f);
}

TEST(Ecc, CleanH100IsOk) {
  Finding f = only(check_ecc(hgx(), kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kOk) << describe(f);
  EXPECT_EQ(f.evidence.size(), 8u);
  EXPECT_TRUE(evidence_has(f,
                           "ECC on; uncorrectable 0 since the driver loaded (lifetime 0), "
                           "correctable 0 (lifetime 0); remapped rows 0 correctable, 0 "
                           "uncorrectable, pending no, failed no"))
      << describe(f);
}

TEST(Ecc, VolatileUncorrectableFails) {
  Snapshot s = hgx();
  NvmlHealth& h = health_of(s, "0000:9a:00.0");
  h.ecc_uncorrected_volatile = nv_ok<uint64_t>(2);
  h.ecc_uncorrected_aggregate = nv_ok<uint64_t>(2);
  Finding f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:9a:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:9a:00.0 (NVIDIA H100 80GB HBM3): 2 uncorrectable ECC "
                           "errors since the driver loaded"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -r -i 0000:9a:00.0")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "--query-compute-apps=pid,process_name"));
}

TEST(Ecc, AggregateOnlyIsHistory) {
  Snapshot s = hgx();
  health_of(s, "0000:9a:00.0").ecc_uncorrected_aggregate = nv_ok<uint64_t>(3);
  Finding f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kInfo) << describe(f);
  EXPECT_TRUE(evidence_has(f, "3 uncorrectable ECC errors in its lifetime, none now"));
  EXPECT_TRUE(remedy_has(f, "History only"));
}

TEST(Ecc, FailedRemapSaysReplace) {
  Snapshot s = hgx();
  health_of(s, "0000:db:00.0").remap_failure = nv_ok(1);
  Finding f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "a row remap failed: no spare rows left"));
  EXPECT_TRUE(remedy_has(f, "Replace the GPU (RMA)"));
  EXPECT_TRUE(remedy_has(f, "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER -i 0000:db:00.0"));
}

TEST(Ecc, RetiredPageLimit) {
  Snapshot s = hgx();
  NvmlHealth& h = health_of(s, "0000:18:00.0");
  h.retired_pages_sbe = nv_ok<uint32_t>(40);
  h.retired_pages_dbe = nv_ok<uint32_t>(22);
  EXPECT_EQ(only(check_ecc(s, kConfig), "ecc.uncorrectable").severity, Severity::kOk);
  h.retired_pages_dbe = nv_ok<uint32_t>(23);
  Finding f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "63 retired pages, at or above the limit of 63"));
  EXPECT_TRUE(evidence_has(f, "retired pages 40 single-bit, 23 double-bit"));
}

TEST(Ecc, PendingModeChangeAndEccOffAreInfo) {
  Snapshot s = hgx();
  health_of(s, "0000:18:00.0").ecc_mode_pending = nv_ok(0);
  Finding f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kInfo) << describe(f);
  EXPECT_TRUE(evidence_has(f, "an ECC mode change waits for a reboot or GPU reset"));
  EXPECT_TRUE(evidence_has(f, "ECC on (off after the next reboot)"));
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -r -i 0000:18:00.0"));

  s = hgx();
  health_of(s, "0000:2a:00.0").ecc_mode_current = nv_ok(0);
  health_of(s, "0000:2a:00.0").ecc_mode_pending = nv_ok(0);
  f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kInfo) << describe(f);
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -i 0000:2a:00.0 -e 1"));
}

TEST(Ecc, CorrectedStormWarnsOnlyWhenConfigured) {
  Snapshot s = hgx();
  health_of(s, "0000:18:00.0").ecc_corrected_volatile = nv_ok<uint64_t>(50000);
  EXPECT_EQ(only(check_ecc(s, kConfig), "ecc.uncorrectable").severity, Severity::kOk);
  Config c = config_from("[ecc]\ncorrected_warn = 10000\n");
  Finding f = only(check_ecc(s, c), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "50000 correctable ECC errors since the driver loaded (warn at "
                           "10000)"));
}

TEST(Ecc, UnreadableModeWarns) {
  Snapshot s = hgx();
  health_of(s, "0000:18:00.0").ecc_mode_current = nv_rc<int>(kNvmlGpuLost);
  Finding f = only(check_ecc(s, kConfig), "ecc.uncorrectable");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f, "nvmlDeviceGetEccMode returned NVML_ERROR_GPU_IS_LOST (15)"));
}

// --- ecc.rows-pending ------------------------------------------------------------------

TEST(RowsPending, NothingPendingIsOkAndGeForceIsNotApplicable) {
  EXPECT_EQ(only(check_rows_pending(hgx(), kConfig), "ecc.rows-pending").severity, Severity::kOk);
  EXPECT_EQ(only(check_rows_pending(ws(), kConfig), "ecc.rows-pending").severity,
            Severity::kNotApplicable);
}

TEST(RowsPending, PendingRemapWarnsWithResetCommands) {
  Snapshot s = hgx();
  NvmlHealth& h = health_of(s, "0000:ba:00.0");
  h.remap_pending = nv_ok(1);
  h.remapped_rows_uncorrectable = nv_ok<uint32_t>(1);
  Finding f = only(check_rows_pending(s, kConfig), "ecc.rows-pending");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:ba:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:ba:00.0 (NVIDIA H100 80GB HBM3): a row remap is pending "
                           "(remapped rows: 0 correctable, 1 uncorrectable)"))
      << describe(f);
  EXPECT_TRUE(remedy_has(f,
                         "nvidia-smi --query-compute-apps=pid,process_name --format=csv -i "
                         "0000:ba:00.0"));
  EXPECT_TRUE(remedy_has(f, "Reset it: sudo nvidia-smi -r -i 0000:ba:00.0")) << describe(f);
  EXPECT_TRUE(remedy_has(f, "reboot"));
  Config c = config_from("[ecc]\npending = \"fail\"\n");
  EXPECT_EQ(only(check_rows_pending(s, c), "ecc.rows-pending").severity, Severity::kFail);
}

TEST(RowsPending, PendingRetirementOnTwoGpus) {
  Snapshot s = hgx();
  for (const char* bdf : {"0000:18:00.0", "0000:2a:00.0"}) {
    NvmlHealth& h = health_of(s, bdf);
    h.retired_pages_sbe = nv_ok<uint32_t>(0);
    h.retired_pages_dbe = nv_ok<uint32_t>(1);
    h.retired_pages_pending = nv_ok(1);
  }
  Finding f = only(check_rows_pending(s, kConfig), "ecc.rows-pending");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.gpus.size(), 2u);
  EXPECT_TRUE(evidence_has(f,
                           "a page retirement is pending (retired pages: 0 single-bit, 1 "
                           "double-bit)"));
  EXPECT_TRUE(remedy_has(f,
                         "for g in 0000:18:00.0 0000:2a:00.0; do sudo nvidia-smi -r -i $g; "
                         "done"))
      << describe(f);
}

TEST(RowsPending, UnreadableRemapStateWarns) {
  Snapshot s = hgx();
  health_of(s, "0000:18:00.0").remap_pending = nv_rc<int>(kNvmlGpuLost);
  Finding f = only(check_rows_pending(s, kConfig), "ecc.rows-pending");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f, "nvmlDeviceGetRemappedRows returned NVML_ERROR_GPU_IS_LOST (15)"));
}

// --- gpu.reset-required (NVML side) ------------------------------------------------------

Snapshot with_log(Snapshot s, const std::vector<std::string>& lines) {
  KernelLogScanner scanner(2026);
  for (const auto& l : lines) scanner.add_line(l);
  s.kernel_log = scanner.finish({.now_boot_s = 100, .now_unix_s = {}});
  s.kernel_log.source = "/dev/kmsg";
  return s;
}

TEST(ResetRequired, PendingRemapCountsWithoutTheKernelLog) {
  Snapshot s = hgx();  // kernel log not read
  health_of(s, "0000:ba:00.0").remap_pending = nv_ok(1);
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:ba:00.0"});
  EXPECT_TRUE(evidence_has(f, "a row remap is pending; the reset activates it (NVML)"));
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-smi -r -i 0000:ba:00.0"));
  Config c = config_from("[ecc]\npending = \"fail\"\n");
  EXPECT_EQ(only(check_reset_required(s, c), "gpu.reset-required").severity, Severity::kFail);
}

TEST(ResetRequired, PendingRetirementCounts) {
  Snapshot s = hgx();
  health_of(s, "0000:18:00.0").retired_pages_pending = nv_ok(1);
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kWarn) << describe(f);
  EXPECT_TRUE(evidence_has(f, "a page retirement is pending"));
}

TEST(ResetRequired, NvmlResetRequiredCodeFails) {
  Snapshot s = hgx();
  health_of(s, "0000:2a:00.0").temperature_c = nv_rc<int>(kNvmlResetRequired);
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:2a:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:2a:00.0 (NVIDIA H100 80GB HBM3): nvmlDeviceGetTemperature "
                           "returned NVML_ERROR_RESET_REQUIRED (16)"))
      << describe(f);
  // On the handle: the whole GPU.
  s = hgx();
  s.nvml.gpus[0].handle_rc = kNvmlResetRequired;
  f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(f, "nvmlDeviceGetHandleByIndex_v2 returned NVML_ERROR_RESET_REQUIRED"));
}

TEST(ResetRequired, NvmlInitResetRequiredFails) {
  Snapshot s = hgx();
  s.nvml.init_rc = kNvmlResetRequired;
  s.nvml.gpus.clear();
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "nvmlInit_v2 returned NVML_ERROR_RESET_REQUIRED (16)"));
}

TEST(ResetRequired, NotApplicableOnlyWhenNeitherSourceSpeaks) {
  Snapshot s = no_nvidia_machine();
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kNotApplicable) << describe(f);
  EXPECT_NE(f.summary.find("libnvidia-ml.so.1 could not be loaded"), std::string::npos);
  // NVML alone: ok, and it says the log was not read.
  f = only(check_reset_required(hgx(), kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_NE(f.summary.find("according to NVML (the kernel log could not be read"),
            std::string::npos)
      << f.summary;
  // The log alone (explain: NVML unobserved, its fields empty).
  s = with_log(no_nvidia_machine(), {"[   4.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module"});
  f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_EQ(f.summary, "No GPU needs a reset according to the kernel log.");
  s = with_log(hgx(), {"[   4.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module"});
  EXPECT_EQ(only(check_reset_required(s, kConfig), "gpu.reset-required").summary,
            "No GPU needs a reset according to the kernel log and NVML.");
}

TEST(ResetRequired, KernelLogAndNvmlCombine) {
  Snapshot s = with_log(
      hgx(), {"[  10.0] NVRM: Xid (PCI:0000:18:00): 48, pid='<unknown>', name=<unknown>, DBE",
              // Xid 154 back to None: 0000:2a was reset, its Xid is history...
              "[  11.0] NVRM: Xid (PCI:0000:2a:00): 48, pid='<unknown>', name=<unknown>, DBE",
              "[  30.0] NVRM: Xid (PCI:0000:2a:00): 154, GPU recovery action changed from 0x1 (GPU "
              "Reset Required) to 0x0 (None)"});
  // ...but NVML's present state is not.
  health_of(s, "0000:2a:00.0").remap_pending = nv_ok(1);
  Finding f = only(check_reset_required(s, kConfig), "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, (std::vector<std::string>{"0000:18:00.0", "0000:2a:00.0"})) << describe(f);
  EXPECT_TRUE(evidence_has(f, "Xid 48"));
  EXPECT_TRUE(evidence_has(f, "GPU 0000:2a:00.0 (NVIDIA H100 80GB HBM3): a row remap is pending"));
}

// In explain, a snapshot that never observed NVML runs the check from the log.
TEST(ResetRequired, ExplainWithoutNvmlRunsFromTheLog) {
  Snapshot s =
      with_log(no_nvidia_machine(), {"[  10.0] NVRM: Xid (PCI:0000:18:00): 95, pid='<unknown>', "
                                     "name=<unknown>, Uncontained"});
  s.nvml = NvmlInfo{};
  s.unobserved = {"nvml", "cuda"};
  Report r = run_checks(s, kConfig, registry_entries({"reset-required"}));
  Finding f = only(r.findings, "gpu.reset-required");
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:18:00.0"});
}

}  // namespace
}  // namespace gd
