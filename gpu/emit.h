// The helper's answer: one JSON object per line on stdout, flushed at once
// (README.md). Plain C++ so .cu files need no JSON library; emit.cc builds
// the objects with nlohmann::json, which escapes every string it is given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gdgpu {

class Line {
 public:
  explicit Line(const char* type);  // {"type": type}
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  Line& set(const char* key, const std::string& v);
  Line& set(const char* key, const char* v);
  Line& set(const char* key, double v);
  Line& set(const char* key, int v);
  Line& set(const char* key, int64_t v);
  Line& set(const char* key, uint64_t v);
  Line& set(const char* key, bool v);
  Line& set(const char* key, const std::vector<std::string>& v);
  Line& set(const char* key, const std::vector<double>& v);
  // An array of objects under key: add_object(key) starts a new element,
  // the following set_in() calls fill it.
  Line& add_object(const char* key);
  Line& set_in(const char* key, double v);
  Line& set_in(const char* key, uint64_t v);
  Line& set_in(const char* key, const std::string& v);
  // Writes the line and flushes stdout; once.
  void send();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Keeps the answer apart from what libraries print: the lines go to a copy
// of the real stdout, and fd 1 then points at stderr. NCCL writes its log
// (NCCL_DEBUG, which the parent passes through) to stdout; without this it
// would land between the JSON lines. Call before the first CUDA or NCCL
// call. False when the descriptors could not be set up: the lines then go
// to stdout as before.
bool claim_stdout();

// {"type":"start","test":test,"gpu":bus_id}, and key:value when key is
// given ("dtype":"bf16", "direction":"h2d"), so a hang is pinned to the step.
void emit_start(const char* test, const std::string& bus_id, const char* key = nullptr,
                const char* value = nullptr);
// {"type":"error","test":test,"gpu":bus_id,"message":message}
void emit_error(const char* test, const std::string& bus_id, const std::string& message);

}  // namespace gdgpu
