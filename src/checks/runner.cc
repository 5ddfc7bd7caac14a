#include "checks/runner.h"

#include <fnmatch.h>

#include <algorithm>

#include "catalog/findings.h"
#include "util/suggest.h"

namespace gd {
namespace {

bool is_glob(const std::string& item) { return item.find_first_of("*?[") != std::string::npos; }

// A declared id with a number in it ("xid.NN") stands for each number.
bool matches_template(const std::string& item, const std::string& id) {
  const std::string placeholder = "NN";
  size_t at = id.find(placeholder);
  if (at == std::string::npos || item.size() <= at || item.compare(0, at, id, 0, at) != 0) {
    return false;
  }
  std::string tail = id.substr(at + placeholder.size());
  if (item.size() < at + 1 + tail.size() || !item.ends_with(tail)) return false;
  std::string number = item.substr(at, item.size() - at - tail.size());
  return !number.empty() &&
         std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool item_matches_id(const std::string& item, const std::string& id) {
  if (item == id) return true;
  if (is_glob(item)) return fnmatch(item.c_str(), id.c_str(), 0) == 0;
  // An area: "driver" matches "driver.not-loaded".
  return id.size() > item.size() && id.compare(0, item.size(), item) == 0 && id[item.size()] == '.';
}

bool item_matches_check(const std::string& item, const CheckEntry& c) {
  if (item == c.name) return true;
  return std::any_of(c.ids.begin(), c.ids.end(), [&](const std::string& id) {
    return item_matches_id(item, id) || matches_template(item, id);
  });
}

bool excluded(const std::string& id, const std::vector<std::string>& only,
              const std::vector<std::string>& skip, const std::string& check) {
  auto hits = [&](const std::string& item) { return item == check || item_matches_id(item, id); };
  if (!only.empty() && std::none_of(only.begin(), only.end(), hits)) return true;
  return std::any_of(skip.begin(), skip.end(), hits);
}

// Rank order: fail first, n/a last.
int severity_order(Severity s) { return 4 - severity_weight(s); }

int catalog_rank(const std::string& id) {
  const CatalogEntry* e = find_catalog_entry(id);
  return e == nullptr ? 1000 : e->rank;
}

bool is_problem(const Finding& f) {
  return f.severity == Severity::kFail || f.severity == Severity::kWarn;
}

}  // namespace

Result<std::vector<const CheckEntry*>> select_checks(const std::vector<std::string>& only,
                                                     const std::vector<std::string>& skip) {
  for (const auto* list : {&only, &skip}) {
    for (const auto& item : *list) {
      bool known = std::any_of(all_checks().begin(), all_checks().end(),
                               [&](const CheckEntry& c) { return item_matches_check(item, c); });
      if (!known && is_glob(item)) {
        return Error{"'" + item + "' matches no check or finding id (see --list-checks)"};
      }
      if (!known) {
        std::vector<std::string> names;
        for (const auto& c : all_checks()) {
          names.push_back(c.name);
          names.insert(names.end(), c.ids.begin(), c.ids.end());
        }
        std::string near = nearest_name(item, names);
        return Error{"unknown check or finding id '" + item + "'" +
                     (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                     " (see --list-checks)"};
      }
    }
  }
  std::vector<const CheckEntry*> out;
  for (const auto& c : all_checks()) {
    auto hits = [&](const std::string& item) { return item_matches_check(item, c); };
    if (!only.empty() && std::none_of(only.begin(), only.end(), hits)) continue;
    // A check is skipped whole only when named (or globbed by name); an id
    // skips just that id.
    bool named = std::any_of(skip.begin(), skip.end(), [&](const std::string& item) {
      return item == c.name || (is_glob(item) && fnmatch(item.c_str(), c.name, 0) == 0);
    });
    if (named) continue;
    out.push_back(&c);
  }
  return out;
}

Severity verdict_of(const std::vector<Finding>& findings) {
  Severity worst = Severity::kOk;
  for (const auto& f : findings) {
    if (is_problem(f) && severity_order(f.severity) < severity_order(worst)) worst = f.severity;
  }
  return worst;
}

void rank_findings(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& a, const Finding& b) {
    int sa = severity_order(a.severity), sb = severity_order(b.severity);
    if (sa != sb) return sa < sb;
    int ra = catalog_rank(a.id), rb = catalog_rank(b.id);
    if (ra != rb) return ra < rb;
    return a.id < b.id;
  });
  // A problem follows from the best-ranked failing cause that explains it:
  // every symptom follows from the top cause; a cause follows from another
  // only when the catalog says the first explains the second.
  for (size_t i = 0; i < findings->size(); ++i) {
    Finding& f = (*findings)[i];
    if (!is_problem(f)) continue;
    const CatalogEntry* fe = find_catalog_entry(f.id);
    for (size_t j = 0; j < i; ++j) {
      const Finding& root = (*findings)[j];
      if (root.severity != Severity::kFail || !root.follows_from.empty()) continue;
      const CatalogEntry* re = find_catalog_entry(root.id);
      if (re == nullptr || re->symptom) continue;
      bool explained =
          (fe != nullptr && fe->symptom) ||
          std::find(re->explains.begin(), re->explains.end(), f.id) != re->explains.end();
      if (explained && f.id != root.id) {
        f.follows_from = root.id;
        break;
      }
    }
  }
}

namespace {

// Under WSL the Windows driver serves the GPU: the Linux driver's module,
// /proc and /dev entries are not there to be missing (check `wsl`).
std::vector<Finding> not_the_linux_driver(const CheckEntry& check) {
  std::vector<Finding> out;
  for (const auto& id : check.ids) {
    Finding f;
    f.id = id;
    f.severity = Severity::kNotApplicable;
    f.summary =
        "WSL: the Windows driver serves the GPU; no Linux kernel module is meant to run here";
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Report run_checks(const Snapshot& s, const Config& c, const std::vector<const CheckEntry*>& checks,
                  const std::vector<std::string>& only, const std::vector<std::string>& skip) {
  Report r;
  r.snapshot = &s;
  r.only = only;
  r.skip = skip;
  for (const CheckEntry* check : checks) {
    // A check whose inputs this snapshot did not observe (explain) would
    // answer from empty fields: it does not run.
    bool blind = std::any_of(check->needs.begin(), check->needs.end(), [&](const std::string& n) {
      return std::find(s.unobserved.begin(), s.unobserved.end(), n) != s.unobserved.end();
    });
    if (blind) continue;
    std::vector<Finding> found = check->linux_driver && s.driver.wsl.detected
                                     ? not_the_linux_driver(*check)
                                     : check->fn(s, c);
    for (Finding& f : found) {
      f.check = check->name;
      if (excluded(f.id, only, skip, check->name)) continue;
      r.findings.push_back(std::move(f));
    }
  }
  rank_findings(&r.findings);
  r.verdict = verdict_of(r.findings);
  return r;
}

Result<std::vector<const CheckEntry*>> select_for(const std::vector<std::string>& only,
                                                  const std::vector<std::string>& skip,
                                                  Config* config) {
  // The file's own lists first, so that an error names where it is.
  if (!config->only.empty() || !config->skip.empty()) {
    if (auto c = select_checks(config->only, config->skip); !c.ok()) {
      return Error{config->source + ": [checks]: " + c.error()};
    }
  }
  if (!only.empty()) config->only = only;
  config->skip.insert(config->skip.end(), skip.begin(), skip.end());
  return select_checks(config->only, config->skip);
}

}  // namespace gd
