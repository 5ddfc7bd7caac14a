#include "job/env_render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/text.h"

namespace gd {
namespace {

// Characters no shell (sh, bash, zsh, fish) treats specially in a word.
bool plain_word(const std::string& v) {
  if (v.empty()) return false;
  for (unsigned char c : v) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '=' ||
              c == '+' || c == '@' || c == '%';
    if (!ok) return false;
  }
  return true;
}

// "why [finding ids]". A comment (this and the header) must stay one line:
// a value with a newline (a user's CUDA_VISIBLE_DEVICES) must not end the
// comment and become a command.
std::string comment(const EnvSetting& s) {
  std::string ids = join_skip_leading_empty(s.ids, ", ");
  return controls_to_question_mark(s.why + (ids.empty() ? "" : " [" + ids + "]"));
}

bool shown(const EnvSetting& s, EnvFormat format) {
  return !s.container_only || format == EnvFormat::kDocker || format == EnvFormat::kK8s;
}

}  // namespace

std::optional<EnvFormat> parse_env_format(const std::string& name) {
  if (name == "sh") return EnvFormat::kSh;
  if (name == "fish") return EnvFormat::kFish;
  if (name == "docker") return EnvFormat::kDocker;
  if (name == "k8s") return EnvFormat::kK8s;
  if (name == "json") return EnvFormat::kJson;
  return std::nullopt;
}

std::string sh_quote(const std::string& v) {
  if (plain_word(v)) return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// fish: inside single quotes only \\ and \' are escapes.
std::string fish_quote(const std::string& v) {
  if (plain_word(v)) return v;
  std::string out = "'";
  for (char c : v) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string yaml_quote(const std::string& v) {
  std::string out = "\"";
  for (unsigned char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string render_env(const JobEnv& job, EnvFormat format, const std::string& header) {
  std::string out;
  switch (format) {
    case EnvFormat::kSh:
    case EnvFormat::kFish:
      out += "# " + controls_to_question_mark(header) + "\n";
      for (const auto& s : job.settings) {
        if (!shown(s, format)) continue;
        out += "# " + comment(s) + "\n";
        out += format == EnvFormat::kSh ? "export " + s.name + "=" + sh_quote(s.value) + "\n"
                                        : "set -gx " + s.name + " " + fish_quote(s.value) + "\n";
      }
      return out;
    case EnvFormat::kDocker: {
      std::string line;
      for (const auto& s : job.settings) {
        if (!shown(s, format)) continue;
        line += (line.empty() ? "-e " : " -e ") + sh_quote(s.name + "=" + s.value);
      }
      return line + "\n";
    }
    case EnvFormat::kK8s:
      out += "# " + controls_to_question_mark(header) + "\n";
      {
        bool any = false;
        for (const auto& s : job.settings) any = any || shown(s, format);
        out += any ? "env:\n" : "env: []\n";
      }
      for (const auto& s : job.settings) {
        if (!shown(s, format)) continue;
        out += "  # " + comment(s) + "\n";
        out += "  - name: " + s.name + "\n";
        out += "    value: " + yaml_quote(s.value) + "\n";
      }
      return out;
    case EnvFormat::kJson: {
      nlohmann::json settings = nlohmann::json::array();
      for (const auto& s : job.settings) {
        settings.push_back({{"name", s.name},
                            {"value", s.value},
                            {"why", s.why},
                            {"ids", s.ids},
                            {"container_only", s.container_only}});
      }
      nlohmann::json j = {{"schema", "gpudoctor.env/v1"},
                          {"summary", header},
                          {"settings", settings},
                          {"notes", job.notes}};
      return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
  }
  return out;
}

}  // namespace gd
