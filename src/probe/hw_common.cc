#include "probe/hw_common.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "util/ascii.h"
#include "util/dl.h"
#include "util/time.h"

namespace gd {
namespace {

// Each item starts on a fresh line even if a library wrote to stdout
// without a newline before it; lines not in the protocol are ignored.
void write_line(char tag, const std::string& body) {
  std::string line;
  line.reserve(body.size() + 3);
  line += '\n';
  if (tag != 0) line += tag;
  line += body;
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = write(STDOUT_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing to do about it
    p += n;
    left -= static_cast<size_t>(n);
  }
}

std::string dump(const nlohmann::json& j) {
  // A broken driver may return invalid UTF-8 in a name: replace, never throw.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void ChildOutput::call(const std::string& what) { write_line('@', what); }
void ChildOutput::checkpoint(const nlohmann::json& partial) { write_line('#', dump(partial)); }
void ChildOutput::result(const nlohmann::json& final_result) { write_line(0, dump(final_result)); }

void disable_core_dumps() {
  rlimit rl{0, 0};
  setrlimit(RLIMIT_CORE, &rl);
}

LoadedLibrary load_library(const std::string& name) {
  LoadedLibrary lib;
  lib.handle = dl_open(name.c_str(), &lib.error);
  if (lib.handle == nullptr) return lib;
  link_map* map = nullptr;
  std::string loaded = name;
  if (dlinfo(lib.handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    loaded = map->l_name;
  }
  char real[PATH_MAX];
  lib.path = realpath(loaded.c_str(), real) ? std::string(real) : loaded;
  return lib;
}

void* find_symbol(void* handle, std::initializer_list<const char*> names, const char** used) {
  for (const char* n : names) {
    if (void* p = dlsym(handle, n)) {
      if (used != nullptr) *used = n;
      return p;
    }
  }
  return nullptr;
}

std::string buffer_string(const char* buf, size_t size) {
  size_t n = 0;
  while (n < size && buf[n] != '\0') ++n;
  return std::string(buf, n);
}

// Input examples: "00000000:17:00.0" (NVML busId), "0000:17:00.0",
// "0000:3B:00.0" (CUDA), "0001:00:1e.0".
std::string normalize_bus_id(const std::string& id) {
  unsigned long domain = 0;
  unsigned bus = 0, dev = 0, fn = 0;
  int used = 0;
  if (std::sscanf(id.c_str(), "%lx:%x:%x.%x%n", &domain, &bus, &dev, &fn, &used) != 4 ||
      static_cast<size_t>(used) != id.size() || bus > 0xff || dev > 0x1f || fn > 7) {
    return ascii_lower(id);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lx:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

std::string format_uuid(const unsigned char b[16]) {
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

// Only the last checkpoint counts: it is parsed once, after the scan (the
// NVML child writes one per GPU, each repeating the ones before it, and
// parsing them all cost more than the probe itself).
ParsedChildOutput parse_child_output(const std::string& out) {
  ParsedChildOutput p;
  std::string_view last_checkpoint;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    bool complete = nl != std::string::npos;
    std::string_view line(out.data() + pos, (complete ? nl : out.size()) - pos);
    pos = complete ? nl + 1 : out.size();
    if (line.empty()) continue;
    if (line[0] == '@') {
      p.last_call = std::string(line.substr(1));
    } else if (line[0] == '#' && complete) {
      last_checkpoint = line.substr(1);
    } else if (line[0] == '{') {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object() && complete) {
        p.result = std::move(j);
        p.has_result = true;
        p.error.clear();
      } else {
        p.error = "result line is not complete JSON: " + std::string(line.substr(0, 60));
      }
    }
  }
  if (!last_checkpoint.empty()) {
    auto j = nlohmann::json::parse(last_checkpoint, nullptr, false);
    if (!j.is_discarded() && j.is_object()) {
      p.checkpoint = std::move(j);
      p.has_checkpoint = true;
    }
  }
  return p;
}

static std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  size_t begin = text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, std::min<size_t>(end - begin + 1, 200));
}

std::string child_failure(const ChildResult& r, const ParsedChildOutput& p) {
  std::string in = p.last_call.empty() ? "" : " in " + p.last_call;
  if (!r.started) return "could not start: " + r.start_error;
  if (r.timed_out) {
    std::string s = "timeout after " + seconds_1dp(r.duration_ms / 1000.0) + " s" + in;
    if (!r.reaped) s += " (still stuck in the kernel after SIGKILL)";
    return s;
  }
  if (r.signal != 0) return "crashed: " + signal_name(r.signal) + in;
  if (p.has_result) return "";
  if (r.exited && r.exit_code != 0) {
    std::string s = "exited with code " + std::to_string(r.exit_code);
    std::string why = last_line(r.err_tail);
    if (!why.empty()) s += ": " + why;
    return s;
  }
  if (r.out_truncated) return "bad output: more than the output limit";
  return "bad output: " + (p.error.empty() ? std::string("no result") : p.error);
}

}  // namespace gd
