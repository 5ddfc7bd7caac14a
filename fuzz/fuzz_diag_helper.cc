// Arbitrary bytes as the GPU helper's answer (diag/protocol.h): whatever a
// broken or hostile gpudoctor-diag writes, the parent must not crash, must
// keep every error one printable line, must stay under the ceilings of
// protocol.h, and the run it builds must survive the JSON round trip the
// history makes (diag/json.h) unchanged.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "diag/json.h"
#include "diag/progress.h"
#include "diag/protocol.h"
#include "invariants.h"

namespace {

bool printable_line(const std::string& s, size_t max_bytes) {
  if (s.size() > max_bytes) return false;
  for (char c : s) {
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// Strings the parser takes from the input: printable and capped.
constexpr size_t kName = gd::kDiagMaxName + 4;
constexpr size_t kMessage = gd::kDiagMaxMessage + 4;

void check_run(const gd::DiagRun& run) {
  using gd::fuzz::normalized_gpu;
  GD_REQUIRE(run.errors.size() <= gd::kDiagMaxErrors + 1);
  for (const gd::DiagError& e : run.errors) {
    GD_REQUIRE(printable_line(e.message, kMessage));
    GD_REQUIRE(printable_line(e.test, kName));
    GD_REQUIRE(normalized_gpu(e.bus_id));
  }
  GD_REQUIRE(run.devices.size() <= gd::kDiagMaxDevices);
  for (const gd::DiagDevice& d : run.devices) {
    GD_REQUIRE(!d.bus_id.empty() && normalized_gpu(d.bus_id));
    GD_REQUIRE(printable_line(d.name, kName));
  }
  size_t results = run.tests.size() + run.copies.size() + run.memtests.size() + run.gemms.size() +
                   run.p2p.size();
  GD_REQUIRE(results <= gd::kDiagMaxResults);
  for (const gd::DiagTestResult& t : run.tests) {
    GD_REQUIRE(printable_line(t.test, kName) && printable_line(t.message, kMessage));
    GD_REQUIRE(normalized_gpu(t.bus_id));
  }
  for (const gd::DiagCopyResult& c : run.copies) {
    GD_REQUIRE(!c.bus_id.empty() && normalized_gpu(c.bus_id));
    GD_REQUIRE(!c.direction.empty() && printable_line(c.direction, kName));
  }
  for (const gd::DiagMemtestResult& m : run.memtests) {
    GD_REQUIRE(!m.bus_id.empty() && normalized_gpu(m.bus_id));
    GD_REQUIRE(m.failures.size() <= gd::kDiagMaxFailures);
    GD_REQUIRE(m.patterns.size() <= gd::kDiagMaxPatterns);
    for (const gd::DiagMemFailure& f : m.failures) GD_REQUIRE(printable_line(f.pattern, kName));
  }
  for (const gd::DiagGemmResult& g : run.gemms) {
    GD_REQUIRE(!g.bus_id.empty() && normalized_gpu(g.bus_id));
    GD_REQUIRE(!g.dtype.empty() && printable_line(g.dtype, kName));
  }
  for (const gd::DiagP2pResult& p : run.p2p) {
    GD_REQUIRE(!p.src.empty() && normalized_gpu(p.src));
    GD_REQUIRE(!p.dst.empty() && normalized_gpu(p.dst));
  }
  if (run.nccl) {
    GD_REQUIRE(run.nccl->bus_ids.size() <= gd::kDiagMaxDevices);
    GD_REQUIRE(run.nccl->points.size() <= gd::kDiagMaxNcclPoints);
    for (const std::string& b : run.nccl->bus_ids) GD_REQUIRE(normalized_gpu(b));
  }
  if (run.scaling) {
    GD_REQUIRE(run.scaling->bus_ids.size() <= gd::kDiagMaxDevices);
    GD_REQUIRE(run.scaling->per_gpu_compute_ms.size() <= gd::kDiagMaxDevices);
  }
  GD_REQUIRE(printable_line(run.last_started, 4 * kName));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  gd::DiagRun run;
  gd::parse_helper_output(input, &run);
  check_run(run);

  // The progress lines diag prints from the same output as it arrives: one
  // printable line each, whatever a line holds.
  for (size_t pos = 0; pos < input.size();) {
    size_t nl = input.find('\n', pos);
    std::string_view line = input.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    for (const std::string& shown : {gd::diag_progress_line(line), gd::diag_started_test(line)}) {
      GD_REQUIRE(printable_line(shown, 8 * kName));
    }
    pos = nl == std::string_view::npos ? input.size() : nl + 1;
  }

  // The history's round trip: written, read back, written again: the same.
  nlohmann::json j = gd::diag_run_to_json(run);
  gd::Result<gd::DiagRun> back = gd::diag_run_from_json(nlohmann::json::parse(j.dump()));
  GD_REQUIRE(back.ok());
  GD_REQUIRE(gd::diag_run_to_json(*back) == j);
  return 0;
}
