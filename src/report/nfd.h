// Node labels for Node Feature Discovery (`gpudoctor labels`): what a
// scheduler needs to place GPU jobs on compatible, healthy nodes, written as
// a feature file for NFD's local source (docs/kubernetes.md).
//
// The feature file, as nfd-worker's local source reads it from
// /etc/kubernetes/node-feature-discovery/features.d/ (source/local/local.go):
// one `name=value` per line; lines starting with `#` are comments, except
// `# +expiry-time=<RFC 3339>`, after which the features are dropped once that
// time has passed; files whose names start with "." are ignored (so a temp
// file can be renamed into place); at most 64 KiB. Example:
//
//   # gpudoctor labels for Node Feature Discovery (docs/kubernetes.md)
//   # +expiry-time=2024-05-02T10:15:00Z
//   gpudoctor.io/gpu.count=8
//   gpudoctor.io/gpu.model=NVIDIA-H100-80GB-HBM3
//   gpudoctor.io/health=ok
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checks/finding.h"
#include "snapshot/snapshot.h"

namespace gd {

// Our own label namespace: nfd-master accepts any namespace outside
// *.kubernetes.io by default (-deny-label-ns); older NFD releases need
// `-extra-label-ns=gpudoctor.io`.
inline constexpr std::string_view kNfdLabelPrefix = "gpudoctor.io/";
inline constexpr std::string_view kNfdFileName = "gpudoctor";  // in features.d

struct NfdLabel {
  std::string name;   // "gpudoctor.io/gpu.count"
  std::string value;  // a valid label value, never empty
};

// The labels of one node, in a fixed order (docs/kubernetes.md lists them). A
// label whose value is unknown on this machine (NVML did not answer) is left
// out, so NFD removes a stale one rather than keeping a wrong value.
std::vector<NfdLabel> nfd_labels(const Snapshot& s, const Report& r);

struct NfdFileOptions {
  std::string expiry_time;  // RFC 3339 UTC, "2024-05-02T10:15:00Z"; "" = never expires
};

// The feature file: a comment naming this tool, the expiry directive when
// set, then one `name=value` line per label.
std::string render_nfd(const Snapshot& s, const std::vector<NfdLabel>& labels,
                       const NfdFileOptions& opt);

// Any text -> a Kubernetes label value: at most 63 characters of
// [A-Za-z0-9._-], beginning and ending alphanumeric; every run of other
// characters becomes one "-" ("NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3").
// "" when nothing usable is left.
std::string nfd_label_value(std::string_view raw);

// Kubernetes' rules (apimachinery validation): a value is empty or matches
// (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])? within 63 characters; a
// name is [DNS-subdomain prefix "/"] then such a value, non-empty.
bool valid_label_value(std::string_view v);
bool valid_label_name(std::string_view n);

}  // namespace gd
