// Fleet drift: compare snapshots of nodes that should be identical and name
// what differs and which node is the odd one out (`gpudoctor diff`,
// docs/diff.md).
//
// Three kinds of field are compared, each grouped by value across nodes:
//  - node fields: drift_fields() of each node's identity (driver, CUDA, ...);
//  - GPU fields: per GPU (matched by PCI bus id) its model, VBIOS, memory,
//    PCIe maximum link and width, ECC, MIG and compute mode, power limit;
//  - report fields: each node's verdict and every finding id raised (info,
//    warn or fail) on any node, from the checks run on its snapshot.
// Pure functions: no I/O, no clock.
#pragma once

#include <string>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "snapshot/snapshot.h"

namespace gd {

inline constexpr const char* kDiffSchema = "gpudoctor.diff/v1";

// Node names, one per snapshot: its hostname, else the file name without
// ".json"; a name several nodes share gets its file name appended
// ("gpu-node-01 (a.json)"), then the path as given, then "#2", "#3".
std::vector<std::string> node_names(const std::vector<std::string>& hostnames,
                                    const std::vector<std::string>& files);

struct ValueGroup {
  std::string value;
  std::vector<std::string> nodes;  // in input order
};

struct FieldDiff {
  std::string field;  // "driver", "nvidia.EnableGpuFirmware", "vbios", "verdict", "finding xid.79"
  std::string scope;  // "node", "gpu" or "report"
  std::string gpu;    // scope "gpu": "0000:18:00.0", or "#0" when GPUs are matched by bus order
  std::vector<ValueGroup> groups;  // most nodes first; equal sizes by value
  // Index into groups of the value more than half of the nodes hold; -1:
  // none does (a tie, or every value a minority).
  int majority = -1;
  // Report fields: the healthy value ("ok", "not raised"). Where some node
  // has a problem (a warn or fail value), the nodes with it are the odd ones,
  // however many: a healthy node is never the odd one out, even among sick
  // ones. A difference in notes (info) alone is drift like any other.
  std::string healthy;

  bool same() const { return groups.size() <= 1; }
  // A report field where some node has a warn or fail value.
  bool problems() const;
  std::string label() const;  // "driver", "gpu 0000:18:00.0 vbios"
  // The nodes outside the majority (empty when there is none); where
  // problems(), the nodes with a warn or fail value.
  std::vector<std::string> odd_nodes() const;
};

// Groups values[i] (the value of nodes[i]) by value and finds the majority.
FieldDiff compare_field(std::string field, const std::vector<std::string>& nodes,
                        const std::vector<std::string>& values);

struct DiffNode {
  std::string name;
  std::string file;
  const Snapshot* snapshot = nullptr;
  Report report;  // the checks' report on the snapshot, or the one read (a report file)
};

struct DiffResult {
  std::vector<DiffNode> nodes;
  std::vector<FieldDiff> fields;  // node fields, then GPU fields, then report fields
  bool drift() const;             // a field differs
};

// Compares the snapshots, named by node_names(); runs `checks` with
// `config` on each for the report fields, except where `reports[i]` gives
// the node's report already (a /report.json read back; empty: none do).
DiffResult diff_snapshots(const std::vector<const Snapshot*>& snapshots,
                          const std::vector<std::string>& files, const Config& config,
                          const std::vector<const CheckEntry*>& checks,
                          const std::vector<const Report*>& reports = {});

struct DiffRenderOptions {
  bool verbose = false;  // also list the fields every node agrees on
};
std::string render_diff_text(const DiffResult& d, const DiffRenderOptions& opt);
std::string render_diff_json(const DiffResult& d);  // gpudoctor.diff/v1, trailing newline

}  // namespace gd
