// What `gpudoctor run --watch` learns while the job runs (docs/run.md
// "Watching the job"): each GPU's peak temperature, power, time throttled
// and why, ECC and row-remap deltas, whether it was lost; the kernel's
// Xid, SXid and AER events with their meanings; and the first fatal one.
// Pure: the runner (cli/run_watch.cc) feeds it NVML samples and kernel-log
// events with their times and renders what it holds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

struct WatchGpu {
  std::string bus_id;
  std::string name;
  int index = -1;
  int peak_temperature_c = -1;  // -1: never read
  double peak_power_w = 0;
  double power_sum_w = 0;  // over power_samples, for the mean
  uint64_t power_samples = 0;
  // Time with a clock-event reason that slows a busy GPU, by reason
  // ("HW slowdown"), and with any of them: sample intervals summed.
  std::map<std::string, double> throttled_s;
  double throttled_any_s = 0;
  // First and last reading during the job, for the deltas.
  std::optional<uint64_t> ecc_corrected_first, ecc_corrected_last;
  std::optional<uint64_t> ecc_uncorrected_first, ecc_uncorrected_last;
  std::optional<uint32_t> rows_correctable_first, rows_correctable_last;
  std::optional<uint32_t> rows_uncorrectable_first, rows_uncorrectable_last;
  bool lost = false;
  int64_t lost_at_ms = 0;
};

struct WatchEvent {
  KernelEvent event;
  int64_t at_ms = 0;    // when the follower saw it
  std::string meaning;  // from the Xid or SXid catalog; the AER severity
  std::string action;   // what to do, from the catalog; "" when it has none
  bool fatal = false;
};

// Why a sample failed, as the sampler said it (probe/sampler.h).
struct SampleFailure {
  std::string error;  // "timeout after 2.0 s in nvmlDeviceGetTemperature (GPU 3)", ...
  std::string call;   // the NVML call in progress: "nvmlDeviceGetTemperature (GPU 3)"; "" none
  bool hung = false;  // killed at the deadline
};

// Failed samples of one kind: the same way, in the same call, on the same
// GPU.
struct WatchFailure {
  std::string kind;    // "hung", "crashed" or "failed"
  std::string call;    // the NVML function ("nvmlDeviceGetTemperature"); "" none
  int gpu_index = -1;  // NVML's index of the GPU it was called for; -1 none
  std::string detail;  // the signal when crashed, the sampler's words when failed
  uint64_t samples = 0;
  int64_t first_ms = 0;
  int64_t last_ms = 0;
};

// The first event that ends the GPU's usefulness to the job.
struct WatchFatal {
  int64_t at_ms = 0;
  std::string gpu;                  // PCI bus id; "" when the event names none
  std::string what;                 // "Xid 79 on 0000:41:00.0: GPU has fallen off the bus"
  std::vector<std::string> remedy;  // the catalog's action, then the next steps
};

class JobWatch {
 public:
  explicit JobWatch(int64_t started_ms) : started_ms_(started_ms) {}

  // One NVML sample (ok or not, and why not) at now_ms. The time since the
  // previous good sample is what a throttle reason in this one counts for.
  void on_sample(const NvmlInfo& sample, bool ok, int64_t now_ms,
                 const SampleFailure& failure = {});
  // One kernel-log event the follower decoded during the job.
  void on_event(const KernelEvent& e, int64_t now_ms);
  // The first fatal event, once: set when it was first seen and not yet
  // taken.
  std::optional<WatchFatal> take_new_fatal();

  const std::vector<WatchGpu>& gpus() const { return gpus_; }
  const std::vector<WatchEvent>& events() const { return events_; }
  const std::optional<WatchFatal>& fatal() const { return fatal_; }
  uint64_t samples() const { return samples_; }
  uint64_t failed_samples() const { return failed_samples_; }
  // The failed samples by kind, call and GPU, most frequent first.
  std::vector<WatchFailure> failures() const;
  // The PCI bus id of NVML's GPU `index` as the samples named it;
  // "NVML GPU 3" when no good sample did.
  std::string gpu_name_for_index(int index) const;
  int64_t started_ms() const { return started_ms_; }

 private:
  WatchGpu& gpu_for(const NvmlGpu& g);
  void on_failure(const SampleFailure& f, int64_t now_ms);
  void set_fatal(int64_t at_ms, const std::string& gpu, const std::string& what,
                 std::vector<std::string> remedy);

  int64_t started_ms_;
  int64_t last_good_ms_ = 0;
  uint64_t samples_ = 0;
  uint64_t failed_samples_ = 0;
  std::vector<WatchGpu> gpus_;
  std::vector<WatchEvent> events_;
  std::vector<WatchFailure> failures_;
  std::optional<WatchFatal> fatal_;
  bool fatal_taken_ = false;
};

// After SIGTERM, how long the job's processes have to end before SIGKILL
// (--stop-on-fatal, and those that outlive the main process).
inline constexpr int kJobKillGraceS = 10;

// A process of the job other than its main one, signalled because it was
// still running when the main process ended or when --stop-on-fatal stopped
// the job, and what became of it.
struct JobOtherProcess {
  int pid = 0;
  std::string name;
  bool outlived = false;  // still running when the main process ended
  bool sigkill = false;   // still running at the SIGKILL, and sent it
  bool alive = false;     // still running after the SIGKILL and the wait for it
};

// How the job ended, for the summary.
struct JobEnd {
  std::string command;
  int64_t ended_ms = 0;
  bool exited = false;
  int exit_code = 0;
  int signal = 0;                       // the signal that ended it, when it did not exit
  bool stopped_by_us = false;           // --stop-on-fatal signalled it
  std::vector<JobOtherProcess> others;  // in the order they were found
  std::string others_error;  // why the job's processes could not be listed; "" when they could
};

// The per-job summary, for people: one line per GPU, the events, the fatal
// one. Lines without a trailing newline.
std::vector<std::string> watch_summary_lines(const JobWatch& w, const JobEnd& end);
// One kind of failed sample, for people: "NVML hung in
// nvmlDeviceGetTemperature on 0000:41:00.0".
std::string watch_failure_text(const JobWatch& w, const WatchFailure& f);
// The diagnosis written the moment a fatal event is seen.
std::vector<std::string> watch_fatal_lines(const WatchFatal& f, const std::string& command,
                                           bool stopping);
// gpudoctor.watch/v1: the same as JSON (docs/run.md); `end` null while the
// job still runs (written at a fatal event).
std::string watch_json(const JobWatch& w, const JobEnd* end, const std::string& command);

}  // namespace gd
