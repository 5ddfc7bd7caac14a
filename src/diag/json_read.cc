// Reading a stored DiagRun ("gpudoctor.diag/v1") back: strict about types
// (a row of another version must not turn into a plausible wrong run),
// lenient about presence (a missing field keeps its default, an unknown one
// is ignored). The writer and the format are in json.cc.
#include <string>

#include "diag/fields.h"
#include "diag/json.h"
#include "util/text.h"

namespace gd {
namespace {

using nlohmann::json;

// Declared first: read_list() and read_optional() call them by overload.
void read(JsonFields& f, DiagDevice* d);
void read(JsonFields& f, DiagTestResult* t);
void read(JsonFields& f, DiagCopyResult* c);
void read(JsonFields& f, DiagMemFailure* m);
void read(JsonFields& f, DiagMemtestResult* m);
void read(JsonFields& f, DiagGemmResult* g);
void read(JsonFields& f, DiagP2pResult* p);
void read(JsonFields& f, DiagNcclPoint* p);
void read(JsonFields& f, DiagNcclResult* n);
void read(JsonFields& f, DiagScalingResult* s);
void read(JsonFields& f, DiagSample* s);
void read(JsonFields& f, DiagError* e);
void read(JsonFields& f, DiagFigure* d);

void read_status(JsonFields& f, DiagStatus* out) {
  std::string s;
  f.str("status", &s);
  if (!f.ok() || s.empty()) return;
  for (DiagStatus st :
       {DiagStatus::kPass, DiagStatus::kFail, DiagStatus::kError, DiagStatus::kSkip}) {
    if (s == diag_status_name(st)) {
      *out = st;
      return;
    }
  }
  f.fail("unknown status \"" + s + "\"");
}

void read(JsonFields& f, DiagDevice* d) {
  f.str("bus_id", &d->bus_id)
      .integer("cuda_index", &d->cuda_index)
      .str("name", &d->name)
      .integer("cc_major", &d->cc_major)
      .integer("cc_minor", &d->cc_minor)
      .integer("multiprocessors", &d->multiprocessors)
      .integer("memory_bytes", &d->memory_bytes)
      .integer("free_bytes", &d->free_bytes)
      .integer("clock_khz", &d->clock_khz)
      .integer("mem_clock_khz", &d->mem_clock_khz)
      .integer("mem_bus_width_bits", &d->mem_bus_width_bits);
}

void read(JsonFields& f, DiagTestResult* t) {
  f.str("test", &t->test).str("bus_id", &t->bus_id).str("message", &t->message);
  f.number("duration_ms", &t->duration_ms);
  read_status(f, &t->status);
}

void read(JsonFields& f, DiagCopyResult* c) {
  f.str("bus_id", &c->bus_id)
      .str("direction", &c->direction)
      .str("message", &c->message)
      .integer("bytes", &c->bytes)
      .number("bytes_per_s", &c->bytes_per_s)
      .boolean("verified", &c->verified)
      .integer("mismatches", &c->mismatches)
      .number("duration_ms", &c->duration_ms);
  read_status(f, &c->status);
}

void read(JsonFields& f, DiagMemFailure* m) {
  f.integer("offset", &m->offset)
      .integer("address", &m->address)
      .integer("expected", &m->expected)
      .integer("actual", &m->actual)
      .str("pattern", &m->pattern);
}

void read(JsonFields& f, DiagNcclPoint* p) {
  f.integer("bytes", &p->bytes)
      .number("time_us", &p->time_us)
      .number("algbw_bytes_per_s", &p->algbw_bytes_per_s)
      .number("busbw_bytes_per_s", &p->busbw_bytes_per_s);
}

// A list of objects under key, each read by read(JsonFields&, T*).
template <class T>
void read_list(JsonFields& f, const char* key, std::vector<T>* out) {
  f.objects(key, out, SIZE_MAX, [](JsonFields& e, T* item) { read(e, item); });
}

void read(JsonFields& f, DiagMemtestResult* m) {
  f.str("bus_id", &m->bus_id)
      .str("message", &m->message)
      .integer("bytes", &m->bytes)
      .integer("passes", &m->passes)
      .strings("patterns", &m->patterns, SIZE_MAX)
      .integer("seed", &m->seed)
      .integer("errors", &m->errors)
      .number("duration_ms", &m->duration_ms);
  read_status(f, &m->status);
  read_list(f, "failures", &m->failures);
}

void read(JsonFields& f, DiagGemmResult* g) {
  f.str("bus_id", &g->bus_id)
      .str("dtype", &g->dtype)
      .str("message", &g->message)
      .integer("m", &g->m)
      .integer("n", &g->n)
      .integer("k", &g->k)
      .integer("iterations", &g->iterations)
      .number("flops_per_s", &g->flops_per_s)
      .integer("checked", &g->checked)
      .integer("mismatches", &g->mismatches)
      .number("max_rel_error", &g->max_rel_error)
      .number("duration_ms", &g->duration_ms);
  read_status(f, &g->status);
}

void read(JsonFields& f, DiagP2pResult* p) {
  f.str("src", &p->src)
      .str("dst", &p->dst)
      .str("message", &p->message)
      .boolean("access", &p->access)
      .number("bytes_per_s", &p->bytes_per_s)
      .number("latency_us", &p->latency_us)
      .boolean("verified", &p->verified)
      .integer("mismatches", &p->mismatches);
  read_status(f, &p->status);
}

void read(JsonFields& f, DiagNcclResult* n) {
  f.strings("bus_ids", &n->bus_ids, SIZE_MAX)
      .str("message", &n->message)
      .integer("mismatches", &n->mismatches)
      .integer("nccl_version", &n->nccl_version);
  read_status(f, &n->status);
  read_list(f, "points", &n->points);
}

void read(JsonFields& f, DiagScalingResult* s) {
  f.strings("bus_ids", &s->bus_ids, SIZE_MAX)
      .str("message", &s->message)
      .number("one_gpu_step_ms", &s->one_gpu_step_ms)
      .number("all_gpu_step_ms", &s->all_gpu_step_ms)
      .numbers("per_gpu_compute_ms", &s->per_gpu_compute_ms, SIZE_MAX)
      .integer("gradient_bytes", &s->gradient_bytes)
      .number("speedup", &s->speedup)
      .number("efficiency", &s->efficiency);
  read_status(f, &s->status);
}

void read(JsonFields& f, DiagSample* s) {
  f.number("t_ms", &s->t_ms)
      .str("bus_id", &s->bus_id)
      .integer("temperature_c", &s->temperature_c)
      .integer("power_mw", &s->power_mw)
      .integer("sm_clock_mhz", &s->sm_clock_mhz)
      .integer("clock_event_reasons", &s->clock_event_reasons)
      .integer("utilization_pct", &s->utilization_pct);
}

void read(JsonFields& f, DiagError* e) {
  f.str("test", &e->test).str("bus_id", &e->bus_id).str("message", &e->message);
}

// An optional object under key (null or absent: none).
template <class T>
void read_optional(JsonFields& f, const char* key, std::optional<T>* out) {
  const json* v = f.get(key);
  if (v == nullptr || !f.ok()) return;
  if (!v->is_object()) return f.type_error(key, *v, "an object");
  JsonFields ef(*v, f.prefix() + key + ".");
  T item;
  read(ef, &item);
  if (!ef.ok()) return f.fail(ef.error());
  *out = std::move(item);
}

void read(JsonFields& f, DiagFigure* d) {
  f.str("bus_id", &d->bus_id)
      .str("metric", &d->metric)
      .number("value", &d->value)
      .str("unit", &d->unit)
      .number("expected", &d->expected)
      .str("basis", &d->basis)
      .number("peer_median", &d->peer_median)
      .str("judgement", &d->judgement);
}

}  // namespace

Result<DiagRun> diag_run_from_json(const json& j) {
  if (!j.is_object()) {
    return Error{std::string("diag run: ") + json_type_phrase(j) + ", expected an object"};
  }
  DiagRun run;
  JsonFields f(j);
  std::string schema;
  f.require("schema").str("schema", &schema);
  if (!f.ok()) return Error{"diag run: " + f.error()};
  if (schema != kDiagRunSchema) {
    return Error{"diag run: schema \"" + printable(schema, 64) + "\", expected " + kDiagRunSchema};
  }
  run.schema = schema;
  f.integer("level", &run.level)
      .number("duration_s", &run.duration_s)
      .integer("seed", &run.seed)
      .str("helper", &run.helper)
      .str("started_at", &run.started_at)
      .number("wall_ms", &run.wall_ms)
      .integer("cuda_runtime_version", &run.cuda_runtime_version)
      .integer("cuda_driver_version", &run.cuda_driver_version)
      .integer("cublas_version", &run.cublas_version)
      .integer("nccl_version", &run.nccl_version)
      .str("incomplete", &run.incomplete)
      .str("last_started", &run.last_started)
      .str("stderr_tail", &run.stderr_tail);
  read_list(f, "devices", &run.devices);
  read_list(f, "tests", &run.tests);
  read_list(f, "copies", &run.copies);
  read_list(f, "memtests", &run.memtests);
  read_list(f, "gemms", &run.gemms);
  read_list(f, "p2p", &run.p2p);
  read_optional(f, "nccl", &run.nccl);
  read_optional(f, "scaling", &run.scaling);
  read_list(f, "samples", &run.samples);
  read_list(f, "errors", &run.errors);
  if (!f.ok()) return Error{"diag run: " + f.error()};
  return run;
}

Result<std::vector<DiagFigure>> diag_figures_from_json(const json& j) {
  json wrapper = {{"figures", j}};
  JsonFields f(wrapper);
  if (!j.is_array()) {
    return Error{std::string("diag figures: ") + json_type_phrase(j) + ", expected an array"};
  }
  std::vector<DiagFigure> out;
  read_list(f, "figures", &out);
  if (!f.ok()) return Error{"diag figures: " + f.error()};
  return out;
}

}  // namespace gd
