#include "checks/address_space_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "catalog/address_space.h"
#include "checks/util.h"
#include "facts/cuda_visible.h"
#include "facts/runtime.h"
#include "util/bytes.h"

namespace gd {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A run that measured CUDA: cuInit succeeded and VmSize was read after it.
bool measured_cuda(const CudaRun* r) {
  return r != nullptr && r->child_error.empty() && r->init_rc == 0 && r->vm_init.size_bytes > 0;
}

std::string vm_text(const VmUsage& v) {
  return v.size_bytes == 0 ? std::string("not reached") : format_bytes(v.size_bytes);
}

void add_framework_lines(const AddressSpaceNeed& n, std::vector<std::string>* ev) {
  const CudaReservation& ref = reference_cuda_reservation();
  for (const auto& f : framework_allowances()) {
    ev->push_back(
        fmt::format("{}: about {} here = CUDA's {} + {} it added beyond its CUDA context on {} "
                    "(VmSize {} after its first GPU operation; {})",
                    f.name, format_bytes(n.cuda_bytes + f.beyond_context_bytes()),
                    format_bytes(n.cuda_bytes), format_bytes(f.beyond_context_bytes()), ref.machine,
                    format_bytes(f.after_first_op_bytes), ref.source));
  }
}

AddressSpaceNeed measured_need(const CudaRun& r) {
  AddressSpaceNeed n;
  n.measured = true;
  n.run = &r;
  const VmUsage& at = r.vm_context.size_bytes > 0 ? r.vm_context : r.vm_init;
  // What CUDA added to the probe, on top of a bare process as on the
  // reference: the probe's own start (or a sanitizer's shadow) is not CUDA's.
  const CudaReservation& ref = reference_cuda_reservation();
  uint64_t start = r.vm_start.size_bytes;
  n.cuda_bytes =
      at.size_bytes > start && start > 0 ? at.size_bytes - start + ref.start_bytes : at.size_bytes;
  uint64_t took = n.cuda_bytes > ref.start_bytes ? n.cuda_bytes - ref.start_bytes : 0;
  n.cuda_data_bytes = at.data_bytes;
  std::string how = r.label == kRaisedLimitLabel
                        ? "measured with the soft limits raised to the hard ones"
                        : "measured";
  n.evidence.push_back(fmt::format(
      "address space (VmSize) of the CUDA probe, {}: {} at start, {} after cuInit, {} after "
      "the first context: CUDA took {}, so a bare process with CUDA needs {}",
      how, vm_text(r.vm_start), vm_text(r.vm_init), vm_text(r.vm_context), format_bytes(took),
      bytes_exact(n.cuda_bytes)));
  return n;
}

// No measurement: CUDA did not start in any run, or the snapshot predates
// the measurement. The old formula (every GPU's memory + host memory +
// headroom) over-estimates a real driver's reservation (20x on the recorded
// H200: 274.3 GiB against 12.3 GiB measured), so on its own it only warns:
// a FAIL needs CUDA's own out-of-memory under the limit.
AddressSpaceNeed estimated_need(const Snapshot& s, const Config& c) {
  GpuInventory inv = gpu_inventory(s);
  uint64_t gpu_bytes = 0;
  size_t unknown = 0;
  for (const auto& g : inv.gpus) {
    gpu_bytes += g.memory_total_bytes;
    if (g.memory_total_bytes == 0) ++unknown;
  }
  AddressSpaceNeed n;
  n.estimated = true;
  uint64_t host = s.limits.mem_total_bytes.value_or(0);
  n.cuda_bytes = gpu_bytes + host + c.address_space_headroom_bytes;
  std::string gpus = inv.gpus.empty()
                         ? std::string("GPU memory unknown")
                         : fmt::format("{} GPU{} with {}", inv.gpus.size(),
                                       inv.gpus.size() == 1 ? "" : "s", format_bytes(gpu_bytes));
  if (unknown > 0) gpus += fmt::format(" ({} of unknown size)", unknown);
  std::string host_text = format_bytes(host) + " host memory";
  if (!s.limits.mem_total_bytes) {
    const FieldGap* g = field_gap(s, "limits.mem_total_bytes");
    host_text = "host memory unknown (limits.mem_total_bytes: " +
                (g != nullptr ? g->reason : std::string("not recorded")) + ")";
  }
  const CudaReservation& ref = reference_cuda_reservation();
  n.evidence.push_back(fmt::format(
      "ESTIMATE, not measured (CUDA did not start in this run): CUDA reserves at most about "
      "{} = {} + {} + {} headroom = {}",
      format_bytes(n.cuda_bytes), gpus, host_text, format_bytes(c.address_space_headroom_bytes),
      bytes_exact(n.cuda_bytes)));
  n.evidence.push_back(
      fmt::format("measured for comparison on {}: {} after cuInit, {} after the first context ({})",
                  ref.machine, format_bytes(ref.after_init_bytes),
                  format_bytes(ref.after_context_bytes), ref.source));
  return n;
}

// CUDA started but its address space was not measured (a snapshot from
// before the measurement, or pasted text): the reference machine's
// measurement stands in, labelled as such; the estimate would only mislead
// about a CUDA that demonstrably fit.
AddressSpaceNeed reference_need() {
  const CudaReservation& ref = reference_cuda_reservation();
  AddressSpaceNeed n;
  n.cuda_bytes = ref.after_context_bytes;
  n.evidence.push_back(
      fmt::format("not measured in this snapshot; CUDA took {} after cuInit and {} after the first "
                  "context on {} ({})",
                  format_bytes(ref.after_init_bytes), format_bytes(ref.after_context_bytes),
                  ref.machine, ref.source));
  return n;
}

}  // namespace

AddressSpaceNeed address_space_need(const Snapshot& s, const Config& c) {
  const CudaRun* user = user_cuda_run(s);
  const CudaRun* raised = raised_limit_cuda_run(s);
  AddressSpaceNeed n = measured_cuda(user)                       ? measured_need(*user)
                       : measured_cuda(raised)                   ? measured_need(*raised)
                       : user != nullptr && run_succeeded(*user) ? reference_need()
                                                                 : estimated_need(s, c);
  const FrameworkAllowance& first = framework_allowances().front();
  n.framework = first.name;
  n.framework_bytes = n.cuda_bytes + first.beyond_context_bytes();
  if (!n.estimated) add_framework_lines(n, &n.evidence);
  return n;
}

uint64_t working_address_space_limit(const AddressSpaceNeed& need) {
  uint64_t most = std::max(need.cuda_bytes, need.framework_bytes);
  for (const auto& f : framework_allowances()) {
    most = std::max(most, need.cuda_bytes + f.beyond_context_bytes());
  }
  return (most + kGiB + kGiB - 1) / kGiB * kGiB;
}

}  // namespace gd
