// The corrected container command (docs/containers.md "The corrected
// command"): when `check` runs inside a container and finds why its GPUs
// are unusable there, the flags that fix each cause, gathered into one
// `docker run`, `podman run` or pod spec for the engine it runs under.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/finding.h"

namespace gd {

struct ContainerCommand {
  std::string engine;              // "docker", "podman", "kubernetes"
  std::vector<std::string> fixes;  // the finding ids it answers, in report order
  std::vector<std::string> lines;  // the command, or the pod spec's YAML
};

// nullopt outside a container, or when no warn or fail finding has a fix
// in the container's own options.
std::optional<ContainerCommand> container_command(const Report& r);

}  // namespace gd
