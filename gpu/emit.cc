#include "emit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

namespace gdgpu {

namespace {
FILE* g_answer = nullptr;  // the real stdout once claim_stdout() ran
}  // namespace

bool claim_stdout() {
  std::fflush(stdout);
  const int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return false;
  FILE* answer = fdopen(fd, "w");
  if (answer == nullptr) {
    close(fd);
    return false;
  }
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::fclose(answer);
    return false;
  }
  g_answer = answer;
  return true;
}

struct Line::Impl {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json* current = nullptr;  // the object add_object() started
  bool sent = false;
};

Line::Line(const char* type) : impl_(std::make_unique<Impl>()) { impl_->j["type"] = type; }
Line::~Line() = default;

Line& Line::set(const char* key, const std::string& v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, const char* v) { return set(key, std::string(v)); }
Line& Line::set(const char* key, double v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, int v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, int64_t v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, uint64_t v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, bool v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, const std::vector<std::string>& v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::set(const char* key, const std::vector<double>& v) {
  impl_->j[key] = v;
  return *this;
}
Line& Line::add_object(const char* key) {
  auto& arr = impl_->j[key];
  if (!arr.is_array()) arr = nlohmann::json::array();
  arr.push_back(nlohmann::json::object());
  impl_->current = &arr.back();
  return *this;
}
Line& Line::set_in(const char* key, double v) {
  if (impl_->current) (*impl_->current)[key] = v;
  return *this;
}
Line& Line::set_in(const char* key, uint64_t v) {
  if (impl_->current) (*impl_->current)[key] = v;
  return *this;
}
Line& Line::set_in(const char* key, const std::string& v) {
  if (impl_->current) (*impl_->current)[key] = v;
  return *this;
}

void Line::send() {
  if (impl_->sent) return;
  impl_->sent = true;
  // Non-finite numbers have no JSON form; dump() writes them as null, which
  // the parent reads as "not measured".
  const std::string s = impl_->j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  FILE* out = g_answer != nullptr ? g_answer : stdout;
  std::fwrite(s.data(), 1, s.size(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

void emit_start(const char* test, const std::string& bus_id, const char* key, const char* value) {
  Line line("start");
  line.set("test", test).set("gpu", bus_id);
  if (key != nullptr && value != nullptr) line.set(key, value);
  line.send();
}

void emit_error(const char* test, const std::string& bus_id, const std::string& message) {
  Line("error").set("test", test).set("gpu", bus_id).set("message", message).send();
}

}  // namespace gdgpu
