// Internal to explain: how a "possible cause" is reached, as data.
//
//   signals.cc  the text's signals: an error code, a missing node, a phrase
//               ("cuda:999", "uvm-node-missing", "component:fabric-manager");
//   rules.cc    signal -> candidate finding ids, in the order NVIDIA's
//               documentation and the facts give (each row cites its source);
//               every error code has a row, by code or by its family;
//   weights.cc  other lines of the text that speak for or against a
//               candidate: (id, evidence, weight, reason), each row citing
//               the fact or the measurement it rests on;
//   help.cc     per id: the fix and the command that decides it on the machine;
//   suspects.cc the ranking: weight, then how many signals point at it,
//               then its place in the rules' order.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot/snapshot.h"

namespace gd {

// A signal and the pasted lines that show it. `origin` names the table row
// that read it where one did (a phrase row's case), for the evaluation's
// per-rule accounting; "" otherwise.
struct Signal {
  std::string key;
  std::vector<std::string> lines;
  std::string origin;
};

std::vector<Signal> signals(const Snapshot& s);
// A signal key in words, for ranked_by: "cuda:999" -> "CUDA error 999".
std::string signal_words(const std::string& key);

struct Rule {
  std::vector<std::string> ids;  // most likely first
  std::string source;            // where the order comes from
};
// The candidates a signal points at; empty ids for a signal no rule reads.
Rule rule_for(const std::string& signal);
// Every id the rules can name, for the catalog's test and the docs.
std::vector<std::string> rule_ids();

struct Help {
  const char* id;
  std::vector<const char*> fix;
  const char* decide;  // what to run on the machine to tell this cause from the others
};
const Help* help_for(const std::string& id);

// What else in the text speaks for (+) or against (-) a candidate: the sum
// of the weight rows whose evidence holds, their lines in *lines and their
// reasons in *reasons.
int weigh(const Snapshot& s, const std::string& id, std::vector<std::string>* lines,
          std::vector<std::string>* reasons);

// Shared by the files above.
bool has_reported(const Snapshot& s, std::string_view kind);
// The first few quoted lines of these kinds (code -1: any code).
std::vector<std::string> reported_lines(const Snapshot& s, std::initializer_list<const char*> kinds,
                                        int code);

}  // namespace gd
