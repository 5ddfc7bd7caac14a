// The helper's JSON lines (gpu/README.md) into a DiagRun. Input, one object
// per line:
//   {"type":"hello","schema":"gpudoctor.diag-helper/v1","cuda_runtime":13000,"cublas":130100}
//   {"type":"device","gpu":"00000000:17:00.0","cuda_index":0,"name":"NVIDIA H200",...}
//   {"type":"start","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16"}
//   {"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"pass",...}
//   {"type":"error","test":"gemm","gpu":"0000:17:00.0","message":"cublasGemmEx: ..."}
//   {"type":"done"}
// The helper may be broken or hostile (a driver bug scribbling on its
// stdout): every line is parsed on its own, every string is made printable
// and capped, and every list has a ceiling, so what the parent keeps is
// bounded by the input and far below it for repetitive input.
#include "diag/protocol.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "diag/fields.h"
#include "kernlog/decode.h"
#include "util/text.h"

namespace gd {
namespace {

using nlohmann::json;

// The test a "start" line began and its result has not yet ended.
struct Pending {
  bool active = false;
  std::string test;
  std::string gpu;     // "" for node-wide tests
  std::string detail;  // "bf16", "h2d": one step of a test that reports several
};

// The first `json::exception` text without its "[json.exception.x.y] " tag.
std::string json_error_text(const std::exception& e) {
  std::string_view s = e.what();
  if (s.starts_with("[json.exception.")) {
    size_t close = s.find("] ");
    if (close != std::string_view::npos) s.remove_prefix(close + 2);
  }
  return std::string(s);
}

// JSON nesting deeper than any helper line has (a result's "failures"
// entries sit at depth 3): refused before nlohmann builds it, so a line of
// 500,000 '[' costs a scan, not a tree.
bool too_deep(std::string_view line) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kDiagMaxJsonDepth) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

bool parse_status(const std::string& s, DiagStatus* out) {
  for (DiagStatus st :
       {DiagStatus::kPass, DiagStatus::kFail, DiagStatus::kError, DiagStatus::kSkip}) {
    if (s == diag_status_name(st)) {
      *out = st;
      return true;
    }
  }
  return false;
}

class Parser {
 public:
  explicit Parser(DiagRun* run) : run_(run) {}

  void line(std::string_view text, size_t no, bool cut_off);
  void finish();
  bool done() const { return done_; }

 private:
  void error(size_t no, const std::string& what);
  void handle(const json& j, size_t no);
  bool room_for_result(size_t no);

  // A bus id field: normalized; `required` fails the line when absent.
  void bus(JsonFields& f, const char* key, std::string* out, bool required);
  void buses(JsonFields& f, const char* key, std::vector<std::string>* out);
  void status(JsonFields& f, DiagStatus* out, std::string* message);

  void hello(JsonFields& f);
  void device(JsonFields& f, size_t no);
  void start(JsonFields& f);
  void result(JsonFields& f, size_t no);
  void error_line(JsonFields& f);
  void end_pending(const std::string& test, const std::string& gpu, const std::string& detail);

  DiagRun* run_;
  bool done_ = false;
  Pending pending_;
  size_t results_ = 0;
  size_t dropped_results_ = 0;
  size_t dropped_errors_ = 0;
};

void Parser::error(size_t no, const std::string& what) {
  if (run_->errors.size() >= kDiagMaxErrors) {
    ++dropped_errors_;
    return;
  }
  run_->errors.push_back(
      {"", "", printable("helper line " + std::to_string(no) + ": " + what, kDiagMaxMessage)});
}

void Parser::line(std::string_view text, size_t no, bool cut_off) {
  if (text.size() > kDiagMaxLineBytes) {
    error(no, "longer than " + std::to_string(kDiagMaxLineBytes) + " bytes, ignored");
    return;
  }
  std::string_view t = trim(text);
  if (t.empty()) return;
  if (t.front() != '{') {
    error(no, std::string(cut_off ? "cut off, " : "") + "not a JSON object: \"" + printable(t, 80) +
                  "\"");
    return;
  }
  if (too_deep(t)) {
    error(no, "JSON nested deeper than " + std::to_string(kDiagMaxJsonDepth) + " levels");
    return;
  }
  json j;
  try {
    j = json::parse(t);
  } catch (const json::exception& e) {
    error(no, std::string(cut_off ? "cut off (the output ended mid-line): " : "not JSON: ") +
                  json_error_text(e));
    return;
  }
  handle(j, no);
}

void Parser::handle(const json& j, size_t no) {
  JsonFields f(j);
  std::string type;
  f.require("type").str("type", &type, 64);
  if (!f.ok()) return error(no, f.error());
  if (type == "hello") {
    hello(f);
  } else if (type == "device") {
    device(f, no);
  } else if (type == "start") {
    start(f);
  } else if (type == "result") {
    result(f, no);
  } else if (type == "error") {
    error_line(f);
  } else if (type == "done") {
    done_ = true;
  } else {
    return error(no, "unknown type \"" + type + "\"");
  }
  if (!f.ok()) error(no, type + ": " + f.error());
}

void Parser::bus(JsonFields& f, const char* key, std::string* out, bool required) {
  if (required) f.require(key);
  std::string raw;
  f.str(key, &raw);
  if (!f.ok()) return;
  if (raw.empty()) {
    if (required) f.fail("\"" + std::string(key) + "\" is empty");
    return;
  }
  std::string id = normalize_pci_address(raw);
  if (id.empty()) {
    f.fail("\"" + std::string(key) + "\" is \"" + printable(raw, 64) + "\", not a PCI bus id");
    return;
  }
  *out = id;
}

void Parser::buses(JsonFields& f, const char* key, std::vector<std::string>* out) {
  std::vector<std::string> raw;
  f.strings(key, &raw, kDiagMaxDevices);
  if (!f.ok()) return;
  out->clear();
  for (const std::string& r : raw) {
    std::string id = normalize_pci_address(r);
    if (id.empty()) {
      f.fail("\"" + std::string(key) + "\" has \"" + printable(r, 64) + "\", not a PCI bus id");
      return;
    }
    out->push_back(id);
  }
}

void Parser::status(JsonFields& f, DiagStatus* out, std::string* message) {
  std::string s;
  f.require("status").str("status", &s, 64).str("message", message, kDiagMaxMessage);
  if (f.ok() && !parse_status(s, out)) f.fail("unknown status \"" + s + "\"");
}

void Parser::hello(JsonFields& f) {
  std::string schema;
  f.str("schema", &schema, 64)
      .integer("cuda_runtime", &run_->cuda_runtime_version)
      .integer("cuda_driver", &run_->cuda_driver_version)
      .integer("cublas", &run_->cublas_version)
      .integer("nccl", &run_->nccl_version);
  // A helper of another protocol version: its lines are read as far as
  // they fit this one, and the mismatch is said.
  if (f.ok() && schema != kDiagHelperSchema) {
    f.fail("schema \"" + schema + "\", expected " + kDiagHelperSchema);
  }
}

void Parser::device(JsonFields& f, size_t no) {
  DiagDevice d;
  bus(f, "gpu", &d.bus_id, true);
  f.integer("cuda_index", &d.cuda_index)
      .str("name", &d.name, kDiagMaxName)
      .integer("cc_major", &d.cc_major)
      .integer("cc_minor", &d.cc_minor)
      .integer("multiprocessors", &d.multiprocessors)
      .integer("memory_bytes", &d.memory_bytes)
      .integer("free_bytes", &d.free_bytes)
      .integer("clock_khz", &d.clock_khz)
      .integer("mem_clock_khz", &d.mem_clock_khz)
      .integer("mem_bus_width_bits", &d.mem_bus_width_bits);
  if (!f.ok()) return;
  for (DiagDevice& old : run_->devices) {
    if (old.bus_id == d.bus_id) {  // said twice: the later line wins
      old = d;
      return;
    }
  }
  if (run_->devices.size() >= kDiagMaxDevices) {
    return error(
        no, "more than " + std::to_string(kDiagMaxDevices) + " devices, " + d.bus_id + " ignored");
  }
  run_->devices.push_back(std::move(d));
}

void Parser::start(JsonFields& f) {
  Pending p;
  std::string src, dst, dtype, direction;
  f.require("test").str("test", &p.test, kDiagMaxName);
  bus(f, "gpu", &p.gpu, false);
  bus(f, "src", &src, false);
  bus(f, "dst", &dst, false);
  f.str("dtype", &dtype, kDiagMaxName).str("direction", &direction, kDiagMaxName);
  if (!f.ok()) return;
  if (p.gpu.empty() && !src.empty()) p.gpu = src + "->" + dst;
  p.detail = !dtype.empty() ? dtype : direction;
  p.active = true;
  pending_ = std::move(p);
}

void Parser::end_pending(const std::string& test, const std::string& gpu,
                         const std::string& detail) {
  if (!pending_.active || pending_.test != test) return;
  if (!pending_.gpu.empty() && !gpu.empty() && pending_.gpu != gpu) return;
  if (!pending_.detail.empty() && !detail.empty() && pending_.detail != detail) return;
  pending_.active = false;
}

bool Parser::room_for_result(size_t no) {
  if (results_ < kDiagMaxResults) {
    ++results_;
    return true;
  }
  if (dropped_results_++ == 0) {
    error(no, "more than " + std::to_string(kDiagMaxResults) + " results, the rest ignored");
  }
  return false;
}

void Parser::result(JsonFields& f, size_t no) {
  std::string test;
  f.require("test").str("test", &test, kDiagMaxName);
  if (!f.ok()) return;
  if (test == "copy") {
    DiagCopyResult r;
    bus(f, "gpu", &r.bus_id, true);
    status(f, &r.status, &r.message);
    f.require("direction")
        .str("direction", &r.direction, kDiagMaxName)
        .integer("bytes", &r.bytes)
        .number("bytes_per_s", &r.bytes_per_s)
        .boolean("verified", &r.verified)
        .integer("mismatches", &r.mismatches)
        .number("duration_ms", &r.duration_ms);
    if (!f.ok()) return;
    end_pending(test, r.bus_id, r.direction);
    if (room_for_result(no)) run_->copies.push_back(std::move(r));
  } else if (test == "memtest") {
    DiagMemtestResult r;
    bus(f, "gpu", &r.bus_id, true);
    status(f, &r.status, &r.message);
    f.integer("bytes", &r.bytes)
        .integer("passes", &r.passes)
        .strings("patterns", &r.patterns, kDiagMaxPatterns, kDiagMaxName)
        .integer("seed", &r.seed)
        .integer("errors", &r.errors)
        .number("duration_ms", &r.duration_ms);
    // Only the first few are kept; `errors` still counts them all.
    f.objects("failures", &r.failures, kDiagMaxFailures, [](JsonFields& e, DiagMemFailure* m) {
      e.integer("offset", &m->offset)
          .integer("address", &m->address)
          .integer("expected", &m->expected)
          .integer("actual", &m->actual)
          .str("pattern", &m->pattern, kDiagMaxName);
    });
    if (!f.ok()) return;
    end_pending(test, r.bus_id, "");
    if (room_for_result(no)) run_->memtests.push_back(std::move(r));
  } else if (test == "gemm") {
    DiagGemmResult r;
    bus(f, "gpu", &r.bus_id, true);
    status(f, &r.status, &r.message);
    f.require("dtype")
        .str("dtype", &r.dtype, kDiagMaxName)
        .integer("m", &r.m)
        .integer("n", &r.n)
        .integer("k", &r.k)
        .integer("iterations", &r.iterations)
        .number("flops_per_s", &r.flops_per_s)
        .integer("checked", &r.checked)
        .integer("mismatches", &r.mismatches)
        .number("max_rel_error", &r.max_rel_error)
        .number("duration_ms", &r.duration_ms);
    if (!f.ok()) return;
    end_pending(test, r.bus_id, r.dtype);
    if (room_for_result(no)) run_->gemms.push_back(std::move(r));
  } else if (test == "p2p") {
    DiagP2pResult r;
    status(f, &r.status, &r.message);
    // A skip ("one GPU") names no pair; every other result names both ends.
    const bool pair = r.status != DiagStatus::kSkip;
    bus(f, "src", &r.src, pair);
    bus(f, "dst", &r.dst, pair);
    f.boolean("access", &r.access)
        .number("bytes_per_s", &r.bytes_per_s)
        .number("latency_us", &r.latency_us)
        .boolean("verified", &r.verified)
        .integer("mismatches", &r.mismatches);
    if (!f.ok()) return;
    end_pending(test, r.src + "->" + r.dst, "");
    if (room_for_result(no)) run_->p2p.push_back(std::move(r));
  } else if (test == "nccl") {
    DiagNcclResult r;
    buses(f, "gpus", &r.bus_ids);
    status(f, &r.status, &r.message);
    f.integer("nccl_version", &r.nccl_version).integer("mismatches", &r.mismatches);
    f.objects("points", &r.points, kDiagMaxNcclPoints, [](JsonFields& e, DiagNcclPoint* p) {
      e.integer("bytes", &p->bytes)
          .number("time_us", &p->time_us)
          .number("algbw_bytes_per_s", &p->algbw_bytes_per_s)
          .number("busbw_bytes_per_s", &p->busbw_bytes_per_s);
    });
    if (!f.ok()) return;
    end_pending(test, "", "");
    if (room_for_result(no)) run_->nccl = std::move(r);
  } else if (test == "scaling") {
    DiagScalingResult r;
    buses(f, "gpus", &r.bus_ids);
    status(f, &r.status, &r.message);
    f.number("one_gpu_step_ms", &r.one_gpu_step_ms)
        .number("all_gpu_step_ms", &r.all_gpu_step_ms)
        .numbers("per_gpu_compute_ms", &r.per_gpu_compute_ms, kDiagMaxDevices)
        .integer("gradient_bytes", &r.gradient_bytes)
        .number("speedup", &r.speedup)
        .number("efficiency", &r.efficiency);
    if (!f.ok()) return;
    end_pending(test, "", "");
    if (room_for_result(no)) run_->scaling = std::move(r);
  } else {
    // "context", "kernel", and tests a newer helper may add: the common fields.
    DiagTestResult r;
    r.test = test;
    bus(f, "gpu", &r.bus_id, false);
    status(f, &r.status, &r.message);
    f.number("duration_ms", &r.duration_ms);
    if (!f.ok()) return;
    end_pending(test, r.bus_id, "");
    if (room_for_result(no)) run_->tests.push_back(std::move(r));
  }
}

void Parser::error_line(JsonFields& f) {
  DiagError e;
  f.str("test", &e.test, kDiagMaxName);
  bus(f, "gpu", &e.bus_id, false);
  f.require("message").str("message", &e.message, kDiagMaxMessage);
  if (!f.ok()) return;
  // A test that failed to run ends with its error line, not a result.
  if (!e.test.empty()) end_pending(e.test, e.bus_id, "");
  if (run_->errors.size() >= kDiagMaxErrors) {
    ++dropped_errors_;
    return;
  }
  run_->errors.push_back(std::move(e));
}

void Parser::finish() {
  if (dropped_errors_ > 0) {
    run_->errors.push_back(
        {"", "", std::to_string(dropped_errors_) + " more helper errors not kept"});
  }
  if (pending_.active) {
    std::string what = pending_.test;
    if (!pending_.detail.empty()) what += " " + pending_.detail;
    if (!pending_.gpu.empty()) what += " " + pending_.gpu;
    run_->last_started = what;
  } else {
    run_->last_started.clear();
  }
}

}  // namespace

bool parse_helper_output(std::string_view out, DiagRun* run) {
  Parser p(run);
  size_t no = 0;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    bool cut_off = nl == std::string_view::npos;
    size_t end = cut_off ? out.size() : nl;
    p.line(out.substr(pos, end - pos), ++no, cut_off);
    pos = cut_off ? out.size() : nl + 1;
  }
  p.finish();
  return p.done();
}

}  // namespace gd
