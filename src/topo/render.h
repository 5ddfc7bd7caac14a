// Rendering of a Topology: the text of `gpudoctor topo` and its
// gpudoctor.topo/v2 JSON (docs/topo.md).
#pragma once

#include <string>

#include "topo/topology.h"

namespace gd {

inline constexpr const char* kTopoSchema = "gpudoctor.topo/v2";

std::string render_topology_text(const Topology& t);
std::string render_topology_json(const Topology& t);

}  // namespace gd
