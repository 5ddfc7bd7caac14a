// The causes an observed error points at but the text cannot decide, ranked.
// The data is in the tables ranking.h lists; this file only orders: the
// candidates of every signal (rules.cc), weighed by the other lines
// (weights.cc), then by how many signals point at each, then by its place
// in the rules' order, then by which the text showed first.
#include "explain/suspects.h"

#include <algorithm>

#include "catalog/findings.h"
#include "explain/ranking.h"
#include "util/text.h"

namespace gd {
namespace {

struct Suspect {
  std::string id;
  std::vector<std::string> evidence;
  std::vector<std::string> signals;  // the keys that pointed at it ("cuda:999")
  std::vector<std::string> origins;  // the rows that read them ("cuda:999", "phrase:<case>")
  std::vector<std::string> reasons;  // the weight rows that held
  std::string source;                // where the first signal's order comes from
  int weight = 0;
  int signal_count = 0;
  size_t best_pos = 99;
  size_t first_seen = 0;
};

void add_unique(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

Finding to_finding(const Suspect& sus) {
  const CatalogEntry* e = find_catalog_entry(sus.id);
  Finding f;
  f.id = sus.id;
  f.severity = Severity::kWarn;
  f.summary = std::string("Possible cause: ") + (e != nullptr ? e->title : sus.id);
  f.evidence = sus.evidence;
  f.check = "explain";
  f.signals = sus.origins;
  // Why here: the sort keys, in their order.
  std::vector<std::string> words;
  for (const auto& key : sus.signals) words.push_back(signal_words(key));
  std::string why = "possible cause: the text shows " + join(words, ", ");
  if (sus.weight != 0) {
    why += "; other lines weigh " + std::string(sus.weight > 0 ? "for it (" : "against it (") +
           join(sus.reasons, "; ") + ")";
  }
  why += "; candidate " + std::to_string(sus.best_pos + 1) + " in " + sus.source + " for it";
  f.ranked_by = std::move(why);
  if (const Help* h = help_for(sus.id)) {
    for (const char* fix : h->fix) f.remedy.push_back(fix);
    f.remedy.push_back(std::string("To decide: ") + h->decide);
  } else {
    f.remedy.push_back("To decide: run `gpudoctor check` on that machine");
  }
  return f;
}

}  // namespace

std::vector<Finding> suspect_findings(const Snapshot& s, const std::set<std::string>& decided) {
  std::vector<Suspect> suspects;
  for (const Signal& sig : signals(s)) {
    Rule rule = rule_for(sig.key);
    for (size_t pos = 0; pos < rule.ids.size(); ++pos) {
      const std::string& id = rule.ids[pos];
      if (decided.count(id) != 0) continue;
      auto it = std::find_if(suspects.begin(), suspects.end(),
                             [&](const Suspect& x) { return x.id == id; });
      if (it == suspects.end()) {
        Suspect fresh;
        fresh.id = id;
        fresh.best_pos = pos;
        fresh.first_seen = suspects.size();
        fresh.source = rule.source;
        suspects.push_back(std::move(fresh));
        it = suspects.end() - 1;
      }
      ++it->signal_count;
      it->signals.push_back(sig.key);
      add_unique(&it->origins, sig.origin.empty() ? sig.key : sig.origin);
      if (pos < it->best_pos) {
        it->best_pos = pos;
        it->source = rule.source;
      }
      for (const auto& l : sig.lines) add_unique(&it->evidence, l);
    }
  }
  for (auto& sus : suspects) {
    std::vector<std::string> more;
    sus.weight = weigh(s, sus.id, &more, &sus.reasons);
    for (const auto& l : more) add_unique(&sus.evidence, l);
  }
  std::stable_sort(suspects.begin(), suspects.end(), [](const Suspect& a, const Suspect& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    if (a.signal_count != b.signal_count) return a.signal_count > b.signal_count;
    if (a.best_pos != b.best_pos) return a.best_pos < b.best_pos;
    return a.first_seen < b.first_seen;
  });
  std::vector<Finding> out;
  for (const auto& sus : suspects) out.push_back(to_finding(sus));
  return out;
}

}  // namespace gd
