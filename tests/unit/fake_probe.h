// Shared by the tests that run the real probe children against the fake
// libraries (tests/fakes/): the probe options that point at this build's
// fakes and binary, and a scoped environment variable (the children inherit
// the test's environment as they would a user's).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "probe/probe.h"

namespace gd::testing_fakes {

// Sets (or unsets) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline ProbeOptions fake_options(double deadline_s = 10) {
  ProbeOptions opt;
  opt.nvml_lib = GD_FAKES_DIR "/libnvidia-ml.so.1";
  opt.cuda_lib = GD_FAKES_DIR "/libcuda.so.1";
  opt.cudart_lib = GD_FAKES_DIR "/libcudart.so.13";
  opt.self_exe = GD_BINARY;
  opt.deadline_s = deadline_s;
  return opt;
}

// tests/fakes/scenarios/NAME.json
inline std::string scenario_path(const std::string& name) {
  return GD_SOURCE_DIR "/tests/fakes/scenarios/" + name + ".json";
}

// probe_hardware() with the fake libraries answering from that scenario.
inline Snapshot probe_scenario(const std::string& scenario,
                               const ProbeOptions& opt = fake_options()) {
  ScopedEnv sc("GPUDOCTOR_FAKE_SCENARIO", scenario_path(scenario));
  Snapshot s;
  probe_hardware(opt, &s);
  return s;
}

// A scenario file written for one test, removed with it.
class TempScenario {
 public:
  explicit TempScenario(const std::string& json) {
    char tmpl[] = "/tmp/gd-scenario-XXXXXX";
    int fd = mkstemp(tmpl);
    path_ = tmpl;
    if (fd >= 0) close(fd);
    std::ofstream(path_) << json;
  }
  ~TempScenario() { unlink(path_.c_str()); }
  TempScenario(const TempScenario&) = delete;
  TempScenario& operator=(const TempScenario&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gd::testing_fakes
