// A DiagRun as JSON ("gpudoctor.diag/v1"), written here and read back in
// json_read.cc. Keys are the field names of diag/result.h; optional figures
// are null when unknown.
//   {"schema":"gpudoctor.diag/v1","level":2,"duration_s":20,"seed":1,
//    "devices":[{"bus_id":"0000:17:00.0","name":"NVIDIA H200",...}],
//    "gemms":[{"bus_id":"0000:17:00.0","dtype":"bf16","status":"pass",...}],...}
#include "diag/json.h"

#include <string>

namespace gd {
namespace {

using nlohmann::json;

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json status_json(DiagStatus s) { return diag_status_name(s); }

json device_json(const DiagDevice& d) {
  return {{"bus_id", d.bus_id},
          {"cuda_index", d.cuda_index},
          {"name", d.name},
          {"cc_major", d.cc_major},
          {"cc_minor", d.cc_minor},
          {"multiprocessors", d.multiprocessors},
          {"memory_bytes", d.memory_bytes},
          {"free_bytes", d.free_bytes},
          {"clock_khz", d.clock_khz},
          {"mem_clock_khz", d.mem_clock_khz},
          {"mem_bus_width_bits", d.mem_bus_width_bits}};
}

json test_json(const DiagTestResult& t) {
  return {{"test", t.test},
          {"bus_id", t.bus_id},
          {"status", status_json(t.status)},
          {"message", t.message},
          {"duration_ms", t.duration_ms}};
}

json copy_json(const DiagCopyResult& c) {
  return {{"bus_id", c.bus_id},     {"direction", c.direction},   {"status", status_json(c.status)},
          {"message", c.message},   {"bytes", c.bytes},           {"bytes_per_s", c.bytes_per_s},
          {"verified", c.verified}, {"mismatches", c.mismatches}, {"duration_ms", c.duration_ms}};
}

json memtest_json(const DiagMemtestResult& m) {
  json failures = json::array();
  for (const DiagMemFailure& f : m.failures) {
    failures.push_back({{"offset", f.offset},
                        {"address", f.address},
                        {"expected", f.expected},
                        {"actual", f.actual},
                        {"pattern", f.pattern}});
  }
  return {{"bus_id", m.bus_id},   {"status", status_json(m.status)},
          {"message", m.message}, {"bytes", m.bytes},
          {"passes", m.passes},   {"patterns", m.patterns},
          {"seed", m.seed},       {"errors", m.errors},
          {"failures", failures}, {"duration_ms", m.duration_ms}};
}

json gemm_json(const DiagGemmResult& g) {
  return {{"bus_id", g.bus_id},
          {"dtype", g.dtype},
          {"status", status_json(g.status)},
          {"message", g.message},
          {"m", g.m},
          {"n", g.n},
          {"k", g.k},
          {"iterations", g.iterations},
          {"flops_per_s", g.flops_per_s},
          {"checked", g.checked},
          {"mismatches", g.mismatches},
          {"max_rel_error", g.max_rel_error},
          {"duration_ms", g.duration_ms}};
}

json p2p_json(const DiagP2pResult& p) {
  return {{"src", p.src},
          {"dst", p.dst},
          {"status", status_json(p.status)},
          {"message", p.message},
          {"access", p.access},
          {"bytes_per_s", p.bytes_per_s},
          {"latency_us", p.latency_us},
          {"verified", p.verified},
          {"mismatches", p.mismatches}};
}

json nccl_json(const DiagNcclResult& n) {
  json points = json::array();
  for (const DiagNcclPoint& p : n.points) {
    points.push_back({{"bytes", p.bytes},
                      {"time_us", p.time_us},
                      {"algbw_bytes_per_s", p.algbw_bytes_per_s},
                      {"busbw_bytes_per_s", p.busbw_bytes_per_s}});
  }
  return {{"bus_ids", n.bus_ids},       {"status", status_json(n.status)},
          {"message", n.message},       {"points", points},
          {"mismatches", n.mismatches}, {"nccl_version", n.nccl_version}};
}

json scaling_json(const DiagScalingResult& s) {
  return {{"bus_ids", s.bus_ids},
          {"status", status_json(s.status)},
          {"message", s.message},
          {"one_gpu_step_ms", s.one_gpu_step_ms},
          {"all_gpu_step_ms", s.all_gpu_step_ms},
          {"per_gpu_compute_ms", s.per_gpu_compute_ms},
          {"gradient_bytes", s.gradient_bytes},
          {"speedup", s.speedup},
          {"efficiency", s.efficiency}};
}

json sample_json(const DiagSample& s) {
  return {{"t_ms", s.t_ms},
          {"bus_id", s.bus_id},
          {"temperature_c", opt(s.temperature_c)},
          {"power_mw", opt(s.power_mw)},
          {"sm_clock_mhz", opt(s.sm_clock_mhz)},
          {"clock_event_reasons", opt(s.clock_event_reasons)},
          {"utilization_pct", opt(s.utilization_pct)}};
}

}  // namespace

json diag_run_to_json(const DiagRun& run) {
  json j = {{"schema", run.schema},
            {"level", run.level},
            {"duration_s", run.duration_s},
            {"seed", run.seed},
            {"helper", run.helper},
            {"started_at", run.started_at},
            {"wall_ms", run.wall_ms},
            {"cuda_runtime_version", run.cuda_runtime_version},
            {"cuda_driver_version", run.cuda_driver_version},
            {"cublas_version", run.cublas_version},
            {"nccl_version", run.nccl_version}};
  auto list = [&](const char* key, const auto& items, auto fn) {
    json a = json::array();
    for (const auto& item : items) a.push_back(fn(item));
    j[key] = std::move(a);
  };
  list("devices", run.devices, device_json);
  list("tests", run.tests, test_json);
  list("copies", run.copies, copy_json);
  list("memtests", run.memtests, memtest_json);
  list("gemms", run.gemms, gemm_json);
  list("p2p", run.p2p, p2p_json);
  j["nccl"] = run.nccl ? nccl_json(*run.nccl) : json(nullptr);
  j["scaling"] = run.scaling ? scaling_json(*run.scaling) : json(nullptr);
  list("samples", run.samples, sample_json);
  list("errors", run.errors, [](const DiagError& e) {
    return json{{"test", e.test}, {"bus_id", e.bus_id}, {"message", e.message}};
  });
  j["incomplete"] = run.incomplete;
  j["last_started"] = run.last_started;
  j["stderr_tail"] = run.stderr_tail;
  return j;
}

json diag_figures_to_json(const std::vector<DiagFigure>& figures) {
  json a = json::array();
  for (const DiagFigure& d : figures) {
    a.push_back({{"bus_id", d.bus_id},
                 {"metric", d.metric},
                 {"value", d.value},
                 {"unit", d.unit},
                 {"expected", d.expected},
                 {"basis", d.basis},
                 {"peer_median", d.peer_median},
                 {"judgement", d.judgement}});
  }
  return a;
}

}  // namespace gd
