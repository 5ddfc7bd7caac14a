// Scenario loading and the per-call behaviour (errors, hangs, crashes,
// delays) shared by the three fake libraries. Each fake links its own copy
// (hidden visibility), so each library reads the file once.
#include "scenario.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace fake {
namespace {

using nlohmann::json;

// Accepts 10 and "0x0a" alike: PCI ids read better in hex.
uint64_t get_uint(const json& j, const char* key, uint64_t fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_string()) return std::stoull(it->get<std::string>(), nullptr, 0);
  return it->get<uint64_t>();
}

int get_int(const json& j, const char* key, int fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<int>();
}

std::string get_string(const json& j, const char* key, const std::string& fallback = "") {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<std::string>();
}

// "processes" / "graphics_processes": [{"pid": 4242, "used_memory_bytes": 1}];
// a null or absent used_memory_bytes is NVML's NOT_AVAILABLE.
std::vector<Process> get_processes(const json& j, const char* key) {
  std::vector<Process> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& p : *it) {
    Process proc;
    proc.pid = static_cast<uint32_t>(get_uint(p, "pid", 0));
    auto mem = p.find("used_memory_bytes");
    if (mem != p.end() && !mem->is_null()) proc.used_memory_bytes = mem->get<uint64_t>();
    out.push_back(proc);
  }
  return out;
}

std::map<std::string, int> get_int_map(const json& j, const char* key) {
  std::map<std::string, int> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  for (const auto& [k, v] : it->items()) out[k] = v.get<int>();
  return out;
}

std::map<std::string, std::string> get_string_map(const json& j, const char* key) {
  std::map<std::string, std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  for (const auto& [k, v] : it->items()) out[k] = v.get<std::string>();
  return out;
}

// "0000:01:00.0" -> domain, bus, device, function.
void parse_bus_id(Gpu* g) {
  unsigned d = 0, b = 0, dev = 0, f = 0;
  if (std::sscanf(g->bus_id.c_str(), "%x:%x:%x.%x", &d, &b, &dev, &f) != 4) {
    throw std::runtime_error("bad bus_id \"" + g->bus_id + "\" (want 0000:01:00.0)");
  }
  g->domain = d;
  g->bus = b;
  g->device = dev;
  g->function = f;
}

uint32_t get_u32(const json& j, const char* key, uint32_t fallback) {
  return static_cast<uint32_t>(get_uint(j, key, fallback));
}

// An optional object: nullptr when absent or null.
const json* get_object(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  if (!it->is_object()) throw std::runtime_error(std::string("\"") + key + "\" is not an object");
  return &*it;
}

// The "health" object (shape in scenario.h).
Health parse_health(const json& j) {
  Health h;
  h.temperature_c = get_int(j, "temperature_c", h.temperature_c);
  if (j.contains("memory_temperature_c") && !j["memory_temperature_c"].is_null()) {
    h.memory_temperature_c = get_int(j, "memory_temperature_c", 0);
  }
  if (const json* t = get_object(j, "temp_thresholds")) {
    h.temp_thresholds.clear();
    const char* names[] = {"shutdown", "slowdown", "mem_max", "gpu_max"};
    for (int i = 0; i < 4; ++i) {
      if (t->contains(names[i]) && !(*t)[names[i]].is_null()) {
        h.temp_thresholds[i] = get_u32(*t, names[i], 0);
      }
    }
  }
  h.power_usage_mw = get_u32(j, "power_usage_mw", h.power_usage_mw);
  h.power_limit_mw = get_u32(j, "power_limit_mw", h.power_limit_mw);
  h.power_min_limit_mw = get_u32(j, "power_min_limit_mw", h.power_min_limit_mw);
  h.power_max_limit_mw = get_u32(j, "power_max_limit_mw", h.power_limit_mw);
  h.sm_clock_mhz = get_u32(j, "sm_clock_mhz", h.sm_clock_mhz);
  h.mem_clock_mhz = get_u32(j, "mem_clock_mhz", h.mem_clock_mhz);
  h.clock_event_reasons = get_uint(j, "clock_event_reasons", h.clock_event_reasons);
  h.pstate = get_int(j, "pstate", h.pstate);
  h.utilization_gpu_pct = get_u32(j, "utilization_gpu_pct", h.utilization_gpu_pct);
  h.utilization_memory_pct = get_u32(j, "utilization_memory_pct", h.utilization_memory_pct);
  if (j.contains("fan_speed_pct") && !j["fan_speed_pct"].is_null()) {
    h.fan_speed_pct = get_u32(j, "fan_speed_pct", 0);
  }
  if (const json* e = get_object(j, "ecc")) {
    Ecc ecc;
    ecc.current = get_int(*e, "current", ecc.current);
    ecc.pending = get_int(*e, "pending", ecc.current);
    ecc.corrected_volatile = get_uint(*e, "corrected_volatile", 0);
    ecc.uncorrected_volatile = get_uint(*e, "uncorrected_volatile", 0);
    ecc.corrected_aggregate = get_uint(*e, "corrected_aggregate", 0);
    ecc.uncorrected_aggregate = get_uint(*e, "uncorrected_aggregate", 0);
    h.ecc = ecc;
  }
  if (const json* r = get_object(j, "retired_pages")) {
    h.retired_pages =
        RetiredPages{get_u32(*r, "sbe", 0), get_u32(*r, "dbe", 0), get_int(*r, "pending", 0)};
  }
  if (const json* r = get_object(j, "remapped_rows")) {
    h.remapped_rows = RemappedRows{get_u32(*r, "correctable", 0), get_u32(*r, "uncorrectable", 0),
                                   get_int(*r, "pending", 0), get_int(*r, "failure", 0)};
  }
  if (const json* p = get_object(j, "pcie")) {
    h.pcie.gen = get_u32(*p, "gen", h.pcie.gen);
    h.pcie.gen_max = get_u32(*p, "gen_max", h.pcie.gen_max);
    h.pcie.width = get_u32(*p, "width", h.pcie.width);
    h.pcie.width_max = get_u32(*p, "width_max", h.pcie.width_max);
    h.pcie.replay = get_u32(*p, "replay", h.pcie.replay);
  }
  if (auto it = j.find("nvlinks"); it != j.end() && it->is_array()) {
    std::vector<NvLink> links;
    for (const auto& l : *it)
      links.push_back({l.value("active", false), get_string(l, "remote_bus_id")});
    h.nvlinks = std::move(links);
  }
  return h;
}

Gpu parse_gpu(const json& j) {
  Gpu g;
  g.name = get_string(j, "name");
  g.uuid = get_string(j, "uuid");
  if (j.contains("vbios_version")) g.vbios_version = get_string(j, "vbios_version");
  g.bus_id = get_string(j, "bus_id");
  parse_bus_id(&g);
  g.pci_device_id = static_cast<uint32_t>(get_uint(j, "pci_device_id", 0));
  g.pci_subsystem_id = static_cast<uint32_t>(get_uint(j, "pci_subsystem_id", 0));
  g.minor = static_cast<uint32_t>(get_uint(j, "minor", 0));
  g.memory_total_bytes = get_uint(j, "memory_total_bytes", 0);
  g.memory_used_bytes = get_uint(j, "memory_used_bytes", 0);
  g.cc_major = get_int(j, "cc_major", 0);
  g.cc_minor = get_int(j, "cc_minor", 0);
  g.multiprocessors = get_int(j, "multiprocessors", 0);
  g.max_sm_clock_mhz = static_cast<uint32_t>(get_uint(j, "max_sm_clock_mhz", 0));
  g.max_mem_clock_mhz = static_cast<uint32_t>(get_uint(j, "max_mem_clock_mhz", 0));
  g.architecture = get_int(j, "architecture", 0);
  g.persistence_mode = get_int(j, "persistence_mode", 1);
  g.compute_mode = get_int(j, "compute_mode", 0);
  if (auto it = j.find("mig_mode"); it != j.end() && it->is_object()) {
    g.mig_capable = true;
    g.mig_current = get_int(*it, "current", 0);
    g.mig_pending = get_int(*it, "pending", g.mig_current);
  }
  if (auto it = j.find("mig_instances"); it != j.end() && it->is_array()) {
    for (const auto& m : *it) {
      MigInstance mi;
      mi.uuid = get_string(m, "uuid");
      mi.gi = static_cast<uint32_t>(get_uint(m, "gi", 0));
      mi.ci = static_cast<uint32_t>(get_uint(m, "ci", 0));
      mi.memory_total_bytes = get_uint(m, "memory_total_bytes", 0);
      mi.multiprocessors = get_int(m, "multiprocessors", 0);
      g.mig_instances.push_back(mi);
    }
  }
  g.processes = get_processes(j, "processes");
  g.graphics_processes = get_processes(j, "graphics_processes");
  if (auto it = j.find("fabric"); it != j.end() && it->is_object()) {
    g.fabric_supported = true;
    g.fabric_state = get_int(*it, "state", 0);
    g.fabric_status = get_int(*it, "status", 0);
    g.fabric_clique_id = static_cast<unsigned>(get_int(*it, "clique_id", 0));
    g.fabric_health_mask = static_cast<unsigned>(get_int(*it, "health_mask", 0));
    g.fabric_health_summary = get_int(*it, "health_summary", 0);
    g.fabric_cluster_uuid = get_string(*it, "cluster_uuid", "");
  }
  g.lost = j.value("lost", false);
  g.errors = get_int_map(j, "errors");
  g.numa = get_int(j, "numa", -1);
  if (const json* h = get_object(j, "health")) g.health = parse_health(*h);
  for (const auto& st : j.value("when_file", json::array())) {
    Gpu::Stage stage;
    stage.path = get_string(st, "path", "");
    stage.lost = st.value("lost", false);
    json merged = j.value("health", json::object());
    merged.merge_patch(st.value("health", json::object()));
    stage.health = parse_health(merged);
    g.when_file.push_back(std::move(stage));
  }
  return g;
}

void parse(const json& j, Scenario* s) {
  s->driver_version = get_string(j, "driver_version", s->driver_version);
  s->cuda_driver_version = get_int(j, "cuda_driver_version", s->cuda_driver_version);
  s->libcuda_driver_version = get_int(j, "libcuda_driver_version", s->cuda_driver_version);
  s->cudart_runtime_version = get_int(j, "cudart_runtime_version", s->cuda_driver_version);
  s->nvml_version = get_string(
      j, "nvml_version", std::to_string(s->cuda_driver_version / 1000) + "." + s->driver_version);
  s->context_reserve_bytes = get_uint(j, "context_reserve_bytes", s->context_reserve_bytes);
  json defaults = j.value("gpu_defaults", json::object());
  if (auto it = j.find("gpus"); it != j.end() && it->is_array()) {
    for (const auto& gj : *it) {
      json merged = defaults;
      merged.merge_patch(gj);
      s->gpus.push_back(parse_gpu(merged));
    }
  }
  std::sort(s->gpus.begin(), s->gpus.end(), [](const Gpu& a, const Gpu& b) {
    return std::tie(a.domain, a.bus, a.device, a.function) <
           std::tie(b.domain, b.bus, b.device, b.function);
  });
  // The address space cuInit reserves. The default (every GPU's memory +
  // 16 GiB) is the fakes' own generous figure, not a model: a real driver
  // took 12.3 GiB on 1 x H200 (tests/device/recorded/h200-vm-580.159.04),
  // which the h200-vm scenario sets, with its first context's 719 MiB.
  uint64_t sum = 16ull << 30;
  for (const auto& g : s->gpus) sum += g.memory_total_bytes;
  s->va_reserve_bytes = get_uint(j, "va_reserve_bytes", sum);
  s->context_va_bytes = get_uint(j, "context_va_bytes", 0);
  s->errors = get_int_map(j, "errors");
  for (const auto& h : j.value("hang", json::array())) s->hang.insert(h.get<std::string>());
  for (const auto& c : j.value("crash", json::array())) s->crash.insert(c.get<std::string>());
  s->delay_ms = get_int_map(j, "delay_ms");
  s->hang_when_file = get_string_map(j, "hang_when_file");
  s->crash_when_file = get_string_map(j, "crash_when_file");
  s->fail_once_file = get_string_map(j, "fail_once_file");
  for (const auto& t : j.value("topology", json::array())) {
    s->topology.push_back({get_u32(t, "a", 0), get_u32(t, "b", 0), get_int(t, "level", 0)});
  }
}

Scenario load() {
  Scenario s;
  const char* path = std::getenv("GPUDOCTOR_FAKE_SCENARIO");
  if (path == nullptr || *path == '\0') return s;
  std::ifstream in(path);
  if (!in) {
    s.valid = false;
    s.error = std::string("cannot read ") + path;
  } else {
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      parse(json::parse(ss.str()), &s);
    } catch (const std::exception& e) {
      s = Scenario{};
      s.valid = false;
      s.error = std::string(path) + ": " + e.what();
    }
  }
  if (!s.valid) std::fprintf(stderr, "fake NVIDIA library: bad scenario: %s\n", s.error.c_str());
  return s;
}

// "nvmlInit_v2" and "nvmlInit" share their entries; so do the other
// versioned/unversioned pairs.
std::string family(const std::string& fn) {
  if (fn == "nvmlInitWithFlags") return "nvmlInit";
  auto pos = fn.rfind("_v");
  if (pos != std::string::npos && pos + 2 < fn.size() &&
      std::all_of(fn.begin() + static_cast<long>(pos) + 2, fn.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    return fn.substr(0, pos);
  }
  return fn;
}

const std::string& key_of(const std::string& k) { return k; }
template <class V>
const std::string& key_of(const std::pair<const std::string, V>& kv) {
  return kv.first;
}

template <class Container>
auto find_entry(const Container& c, const std::string& fn) {
  auto it = c.find(fn);
  if (it != c.end()) return it;
  std::string fam = family(fn);
  for (it = c.begin(); it != c.end(); ++it) {
    if (family(key_of(*it)) == fam) return it;
  }
  return c.end();
}

[[noreturn]] void hang_forever() {
  for (;;) pause();
}

[[noreturn]] void crash_now() {
  // Default action even where a sanitizer installed its own handler: the
  // probe must see a process killed by SIGSEGV, as with a real driver crash.
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  std::abort();
}

}  // namespace

const Gpu::Stage* Gpu::stage() const {
  const Stage* now = nullptr;
  for (const Stage& st : when_file) {
    if (!st.path.empty() && access(st.path.c_str(), F_OK) == 0) now = &st;
  }
  return now;
}

const Health& Gpu::current_health() const {
  const Stage* st = stage();
  return st != nullptr ? st->health : health;
}

bool Gpu::is_lost() const {
  const Stage* st = stage();
  return lost || (st != nullptr && st->lost);
}

const Scenario& scenario() {
  static const Scenario s = load();
  return s;
}

int inject(const char* fn_c, const Gpu* gpu) {
  const Scenario& s = scenario();
  std::string fn = fn_c;
  if (find_entry(s.hang, fn) != s.hang.end()) hang_forever();
  if (find_entry(s.crash, fn) != s.crash.end()) crash_now();
  if (auto h = find_entry(s.hang_when_file, fn);
      h != s.hang_when_file.end() && access(h->second.c_str(), F_OK) == 0) {
    hang_forever();
  }
  if (auto c = find_entry(s.crash_when_file, fn);
      c != s.crash_when_file.end() && access(c->second.c_str(), F_OK) == 0) {
    crash_now();
  }
  if (auto d = find_entry(s.delay_ms, fn); d != s.delay_ms.end()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(d->second));
  }
  if (gpu != nullptr) {
    if (auto e = find_entry(gpu->errors, fn); e != gpu->errors.end()) return e->second;
  }
  if (auto o = find_entry(s.fail_once_file, fn); o != s.fail_once_file.end()) {
    // The fault lasts while its file does; this call is its last.
    if (unlink(o->second.c_str()) != 0) return 0;
  }
  if (auto e = find_entry(s.errors, fn); e != s.errors.end()) return e->second;
  return 0;
}

void uuid_bytes(const std::string& uuid, unsigned char out[16]) {
  std::memset(out, 0, 16);
  std::string hex;
  std::string body = uuid.size() > 4 ? uuid.substr(4) : "";
  for (char c : body) {
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
  }
  if (hex.size() != 32) return;
  for (int i = 0; i < 16; ++i) {
    out[i] = static_cast<unsigned char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
}

bool copy_string(const std::string& s, char* buf, unsigned int len) {
  if (buf == nullptr || s.size() + 1 > len) return false;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return true;
}

}  // namespace fake
