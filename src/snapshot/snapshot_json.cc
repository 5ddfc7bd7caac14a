#include "snapshot/snapshot_json.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <string_view>
#include <vector>

#include "util/read_file.h"

namespace nlohmann {
// nlohmann-json 3.11 has no std::optional support: null <-> nullopt.
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) {
    if (o) {
      j = *o;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null()) {
      o.reset();
    } else {
      o = j.get<T>();
    }
  }
};
}  // namespace nlohmann

namespace gd {

NLOHMANN_JSON_SERIALIZE_ENUM(ProbeStatus, {{ProbeStatus::kOk, "ok"},
                                           {ProbeStatus::kUnavailable, "unavailable"},
                                           {ProbeStatus::kFailed, "failed"},
                                           {ProbeStatus::kTimedOut, "timed-out"}})
NLOHMANN_JSON_SERIALIZE_ENUM(PciKind, {{PciKind::kOther, "other"},
                                       {PciKind::kGpu, "gpu"},
                                       {PciKind::kNvSwitch, "nvswitch"},
                                       {PciKind::kAudio, "audio"},
                                       {PciKind::kBridge, "bridge"}})

const char* probe_status_name(ProbeStatus s) {
  switch (s) {
    case ProbeStatus::kOk:
      return "ok";
    case ProbeStatus::kUnavailable:
      return "unavailable";
    case ProbeStatus::kFailed:
      return "failed";
    case ProbeStatus::kTimedOut:
      return "timed-out";
  }
  return "?";
}

const char* pci_kind_name(PciKind k) {
  switch (k) {
    case PciKind::kGpu:
      return "gpu";
    case PciKind::kNvSwitch:
      return "nvswitch";
    case PciKind::kAudio:
      return "audio";
    case PciKind::kBridge:
      return "bridge";
    case PciKind::kOther:
      return "other";
  }
  return "?";
}

template <class T>
void to_json(nlohmann::json& j, const NvmlValue<T>& v) {
  j = nlohmann::json{{"value", v.value}, {"rc", v.rc}};
}
template <class T>
void from_json(const nlohmann::json& j, NvmlValue<T>& v) {
  v.value = j.value("value", T{});
  v.rc = j.value("rc", -1);
}

#define GD_JSON(Type, ...) NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Type, __VA_ARGS__)

GD_JSON(FieldGap, field, reason)
GD_JSON(ProbeRecord, name, status, detail, duration_ms, gaps, unrecognised_lines)
GD_JSON(EnvInfo, vars, job_gpus, job_request)
GD_JSON(LimitsInfo, rlimit_as_bytes, rlimit_data_bytes, rlimit_as_hard_bytes,
        rlimit_data_hard_bytes, overcommit_memory, overcommit_ratio, commit_limit_bytes,
        committed_as_bytes, mem_total_bytes, cgroup_memory_limit_bytes, cgroup_path, uid, euid,
        groups)
GD_JSON(ModuleInfo, name, state, refcount, taint, source, builtin)
GD_JSON(WslInfo, detected, wsl1, dxg, libs, lib_dir_configured)
GD_JSON(DriverInfo, proc_driver_nvidia, version, version_line, open_kernel_module, params, modules,
        uvm_disable_hmm, char_majors, seconds_since_resume, kernel_release, nvidia_module_built,
        kernels_with_nvidia, wsl)
GD_JSON(PciDevice, bdf, vendor_id, device_id, subsystem_vendor_id, subsystem_device_id, class_code,
        kind, driver, numa_node, local_cpulist, current_link_speed_gts, max_link_speed_gts,
        current_link_width, max_link_width, proc_model, proc_uuid, proc_minor, proc_excluded,
        root_bus, parent)
GD_JSON(PciBridge, bdf, vendor_id, device_id, root_bus, parent, numa_node, current_link_speed_gts,
        max_link_speed_gts, current_link_width, max_link_width, acs_known, acs_capable, acs_ctrl,
        acs_error)
GD_JSON(IommuInfo, known, enabled, groups, passthrough, cmdline_flags)
GD_JSON(DevNode, path, exists, is_char_device, major, minor, mode, owner_uid, owner_gid, can_open,
        error, kernel_refused, char_link)
GD_JSON(SecurityInfo, selinux, label, user_namespace, uid_map)
GD_JSON(CdiSpec, path, kind, devices, device_nodes, host_paths, missing, error)
GD_JSON(Preload, path, from, loadable)
GD_JSON(ContainerInfo, in_container, runtime, evidence, devices_allow, devices_cgroup_known,
        driver_libraries, shm_bytes, shm_mount, host_toolkit, proc_hidepid, toolkit_no_cgroups,
        cdi_specs, preloads)
GD_JSON(ServiceInfo, name, running, pids, version)
GD_JSON(ProcessInfo, pid, comm)
GD_JSON(NvmlProcess, pid, used_memory_bytes)
GD_JSON(GpuProcessUse, bus_id, kind, used_memory_bytes)
GD_JSON(GpuProcess, pid, gpus, visible, comm, uid, user, cgroup, state, age_s, job_kind, job_id,
        job_source, job_state, job_evidence, errors)
GD_JSON(WorkloadInfo, attempted, managers, slurm_jobs, kubelet_pods_known, processes, error)
GD_JSON(NvmlNvLink, link, active, remote_bus_id)
GD_JSON(NvmlHealth, temperature_c, memory_temperature_c, temp_shutdown_c, temp_slowdown_c,
        temp_mem_max_c, temp_gpu_max_c, power_usage_mw, power_limit_mw, power_max_limit_mw,
        sm_clock_mhz, mem_clock_mhz, max_mem_clock_mhz, clock_event_reasons, pstate,
        utilization_gpu_pct, utilization_memory_pct, fan_speed_pct, ecc_mode_current,
        ecc_mode_pending, ecc_corrected_volatile, ecc_uncorrected_volatile, ecc_corrected_aggregate,
        ecc_uncorrected_aggregate, retired_pages_sbe, retired_pages_dbe, retired_pages_pending,
        remapped_rows_correctable, remapped_rows_uncorrectable, remap_pending, remap_failure,
        pcie_link_gen, pcie_link_gen_max, pcie_link_width, pcie_link_width_max, pcie_replay_count,
        nvlinks)
GD_JSON(NvmlGpu, index, handle_rc, name, uuid, vbios_version, pci_bus_id, pci_device_id,
        minor_number, memory_total_bytes, memory_used_bytes, memory_free_bytes, persistence_mode,
        compute_mode, mig_mode_current, mig_mode_pending, cc_major, cc_minor, architecture,
        max_sm_clock_mhz, processes, graphics_processes, fabric_state, fabric_status,
        fabric_clique_id, fabric_cluster_uuid, fabric_health_mask, fabric_health_summary,
        mig_instance_count, health)
GD_JSON(NvmlTopoPair, a, b, level)
GD_JSON(NvmlInfo, attempted, library_requested, library_loaded, dlopen_error, init_rc, init_symbol,
        driver_version, nvml_version, cuda_driver_version, device_count, gpus, topology,
        child_error, duration_ms)
GD_JSON(CudaDevice, ordinal, get_rc, name, pci_bus_id, uuid, total_memory_bytes, cc_major, cc_minor,
        multiprocessors, clock_khz, ctx_rc, ctx_skipped)
GD_JSON(VmUsage, size_bytes, data_bytes)
GD_JSON(CudaRun, label, env_changes, library_requested, library_loaded, dlopen_error,
        driver_version_rc, driver_version, init_rc, device_count_rc, device_count, devices,
        cudart_loaded, cudart_error, cudart_runtime_version, cudart_rc, cudart_device_count,
        child_error, duration_ms, vm_start, vm_init, vm_context, rlimit_as_bytes)
GD_JSON(CudaInfo, attempted, runs)
GD_JSON(KernelEvent, kind, type, code, gpu, device, link, pid, process, message, line, count, first,
        last, age_s, first_unix_s, last_unix_s)
GD_JSON(KernelLogInfo, attempted, source, unreadable, dmesg_restrict, bytes, events, unfolded,
        ages_to_log_end, gpu_uuids)
GD_JSON(IbPort, port, state, link_layer, sm_disabled)
GD_JSON(NvlinkBridge, bdf, driver, switch_management, vpd_error, ib_device, ports)
GD_JSON(FabricInfo, fm_binary, fm_unit, fm_unit_enabled, fm_exe, nvlsm_binary, umad, bridges,
        imex_dir, imex_channels, imex_configured, log_path, log_error, log_events)
GD_JSON(ReportedError, kind, code, text, line, line_no)
GD_JSON(Snapshot, schema, tool_version, hostname, taken_at, root, deadline_s, env, limits, driver,
        pci, pci_bridges, iommu, devnodes, security, container, services, processes, fabric, nvml,
        cuda, workload, kernel_log, reported, probes, unobserved)

#undef GD_JSON

nlohmann::json snapshot_to_json(const Snapshot& s) { return s; }

nlohmann::json nvml_info_to_json(const NvmlInfo& info) { return info; }
nlohmann::json cuda_run_to_json(const CudaRun& run) { return run; }

Result<NvmlInfo> nvml_info_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Error{"NVML probe result is not a JSON object"};
  try {
    return j.get<NvmlInfo>();
  } catch (const nlohmann::json::exception& e) {
    return Error{std::string("malformed NVML probe result: ") + e.what()};
  }
}

Result<CudaRun> cuda_run_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Error{"CUDA probe result is not a JSON object"};
  try {
    return j.get<CudaRun>();
  } catch (const nlohmann::json::exception& e) {
    return Error{std::string("malformed CUDA probe result: ") + e.what()};
  }
}

std::string snapshot_to_string(const Snapshot& s) {
  // Replace invalid UTF-8 (a garbled proc file) instead of throwing.
  return snapshot_to_json(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Error{"not a gpudoctor snapshot: top level is not an object"};
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    return Error{"not a gpudoctor snapshot: no \"schema\" field"};
  }
  if (*schema != kSnapshotSchema) {
    return Error{"unsupported snapshot schema \"" + schema->get<std::string>() +
                 "\" (this gpudoctor reads " + kSnapshotSchema + ")"};
  }
  try {
    return j.get<Snapshot>();
  } catch (const nlohmann::json::exception& e) {
    return Error{std::string("malformed snapshot: ") + e.what()};
  }
}

namespace {

// What a snapshot may hold (docs/check.md). Its DOM costs several times the
// text for small values, and the Snapshot more again: a 63 MiB file of
// 79,192 GPUs (four copied again and again) took 749 MB and 41 s to check,
// 77 MB and 1.4 s with these bounds (tests/reliability/hostile_inputs.py). A node has at most a few
// dozen GPUs (16 on the largest boards, 4 on a GB200 tray), so 1024 is
// generous; the rest of such a list is dropped as it is read, and the
// gpu-count check says the counts disagree (a gpu.missing warning).
constexpr size_t kMaxSnapshotGpus = 1024;
// Values of any kind: a 1024-GPU snapshot holds about 250,000. More is no
// snapshot of one node, and refused before it costs more memory.
constexpr size_t kMaxSnapshotValues = 2'000'000;

// The arrays that hold GPUs, by their path of keys (an array's elements
// share its path).
size_t cap_of(const std::string& path) {
  return path == "nvml.gpus" || path == "cuda.runs.devices" ? kMaxSnapshotGpus : SIZE_MAX;
}

// Builds the DOM as nlohmann::json::parse does, within the bounds above:
// the elements of a capped array past its cap are counted and dropped as
// they are read (never built), and a document of more than
// kMaxSnapshotValues values stops the parse.
class SnapshotDom final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit SnapshotDom(nlohmann::json* root) : root_(root) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t&) override { return false; }  // not in JSON text
  bool start_object(std::size_t) override { return open(nlohmann::json::object()); }
  bool start_array(std::size_t) override { return open(nlohmann::json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (skipping_ == 0) key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception&) override {
    return false;
  }

  std::string refused;                      // why the document is too big; "" when not
  std::map<std::string, uint64_t> listed;   // path of a capped array -> elements it listed
  std::map<std::string, uint64_t> dropped;  // of those, dropped past the cap

 private:
  struct Open {
    nlohmann::json* node;
    std::string path;
    uint64_t count = 0;  // elements, if an array
  };

  // Whether the value about to be added is an element of a capped array past its cap.
  bool drop_next() {
    if (stack_.empty() || !stack_.back().node->is_array()) return false;
    Open& top = stack_.back();
    const size_t cap = cap_of(top.path);
    if (cap == SIZE_MAX) return false;
    ++listed[top.path];
    if (++top.count <= cap) return false;
    ++dropped[top.path];
    return true;
  }
  bool counted() {
    if (++values_ <= kMaxSnapshotValues) return true;
    refused = "more than " + std::to_string(kMaxSnapshotValues) +
              " JSON values (one node's snapshot holds a few thousand)";
    return false;
  }
  bool add(nlohmann::json&& v) {
    if (skipping_ > 0 || drop_next()) return true;
    if (!counted()) return false;
    place(std::move(v));
    return true;
  }
  bool open(nlohmann::json&& v) {
    if (skipping_ > 0 || drop_next()) {
      ++skipping_;
      return true;
    }
    if (!counted()) return false;
    std::string path;
    if (!stack_.empty()) {
      path = stack_.back().path;
      // Only the first levels' paths matter: no cost that grows with depth.
      if (stack_.back().node->is_object() && path.size() < 64) {
        path += (path.empty() ? "" : ".") + key_;
      }
    }
    nlohmann::json* node = place(std::move(v));
    stack_.push_back({node, std::move(path)});
    return true;
  }
  bool close() {
    if (skipping_ > 0) {
      --skipping_;
    } else {
      stack_.pop_back();
    }
    return true;
  }
  // A pointer to an open array's last element stays valid: nothing is added
  // to the array until that element is closed.
  nlohmann::json* place(nlohmann::json&& v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    nlohmann::json& top = *stack_.back().node;
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    nlohmann::json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }

  nlohmann::json* root_;
  std::vector<Open> stack_;
  std::string key_;
  uint64_t skipping_ = 0;  // depth inside a dropped element
  uint64_t values_ = 0;
};

// The GPUs dropped past kMaxSnapshotGpus, as gaps of the probe that found
// them: the snapshot has no field for them, and the checks read gaps.
void record_dropped(const SnapshotDom& dom, Snapshot* s) {
  for (const auto& [path, n] : dom.dropped) {
    const std::string probe = path.substr(0, path.find('.'));  // "nvml", "cuda"
    auto it = std::find_if(s->probes.begin(), s->probes.end(),
                           [&](const ProbeRecord& p) { return p.name == probe; });
    if (it == s->probes.end()) {
      s->probes.push_back(ProbeRecord{});
      it = std::prev(s->probes.end());
      it->name = probe;
    }
    it->gaps.push_back({path, "the snapshot lists " + std::to_string(dom.listed.at(path)) +
                                  " GPUs in " + path + "; gpudoctor reads the first " +
                                  std::to_string(kMaxSnapshotGpus) + " and " + "dropped " +
                                  std::to_string(n)});
  }
}

// text -> Snapshot; `release` is called once the text is no longer needed
// (snapshot_from_file frees it before the Snapshot is built).
Result<Snapshot> parse_snapshot(std::string_view text, const std::function<void()>& release) {
  nlohmann::json j;
  SnapshotDom dom(&j);
  const bool parsed = nlohmann::json::sax_parse(text, &dom);
  release();
  if (!dom.refused.empty()) return Error{"not a gpudoctor snapshot: " + dom.refused};
  if (!parsed) return Error{"malformed snapshot: not valid JSON"};
  auto r = snapshot_from_json(j);
  if (r.ok()) record_dropped(dom, &*r);
  return r;
}

}  // namespace

Result<Snapshot> snapshot_from_string(const std::string& text) {
  return parse_snapshot(text, [] {});
}

Result<Snapshot> snapshot_from_file(const std::string& path) {
  auto text = read_file_capped(path, kSnapshotCapBytes);
  if (!text.ok()) return Error{"cannot read snapshot " + path + ": " + text.error()};
  auto r = parse_snapshot(*text, [&] { std::string().swap(*text); });
  if (!r.ok()) return Error{path + ": " + r.error()};
  return r;
}

}  // namespace gd
