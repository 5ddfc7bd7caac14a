// `gpudoctor env` output: a job's settings (job/fitness.h) as shell
// exports, fish `set -gx`, `docker run -e` flags or a Kubernetes env block.
#pragma once

#include <optional>
#include <string>

#include "job/fitness.h"

namespace gd {

enum class EnvFormat { kSh, kFish, kDocker, kK8s, kJson };

// "sh", "fish", "docker", "k8s", "json"; nullopt for anything else.
std::optional<EnvFormat> parse_env_format(const std::string& name);

// One setting per line, each after a `#` comment saying why (sh, fish, k8s;
// `header` is the first comment line), or one line of -e flags (docker).
// Settings meant for container creation appear only in docker and k8s.
// json: {"schema": "gpudoctor.env/v1", "summary": header, "settings": [{"name",
// "value", "why", "ids", "container_only"}], "notes": [...]}, every setting.
std::string render_env(const JobEnv& job, EnvFormat format, const std::string& header);

// Values quoted so that the shell reads them back byte for byte.
std::string sh_quote(const std::string& v);
std::string fish_quote(const std::string& v);
std::string yaml_quote(const std::string& v);  // always a double-quoted YAML string

}  // namespace gd
