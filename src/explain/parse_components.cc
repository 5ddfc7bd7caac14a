// A report that is only a sentence still names the part that broke: a
// component of the stack (catalog/components.h) on a line that also says
// something failed gives the signal "component:<key>", whose candidate
// causes come from the component's row. Real lines this file reads:
//
//   nvidia-fabricmanager is not installed, and torch.cuda.is_available() fails with error 802
//   [WARN] Kernel module nvidia_uvm is not loaded. Make sure the NVIDIA device driver is installed
//   Error! Could not locate dkms.conf file.
//   it shows that the device plugin is registered succeessfully, isn't it?
//
// and lines it leaves alone: a component without a failure word ("$ dkms
// status"), one named as an example ("another driver, such as nouveau, is
// present"), "mig" inside another word ("migrate", "might").
#include <algorithm>
#include <string>
#include <vector>

#include "catalog/components.h"
#include "explain/parse.h"
#include "util/substring_index.h"

namespace gd {
namespace {

// Words that say something did not work, in any program's or person's words.
constexpr const char* kFailureWords[] = {
    "fail",      "error",       "not running", "not installed", "not found", "missing",
    "denied",    "cannot",      "can't",       "can not",       "unable",    "not loaded",
    "disabled",  "no such",     "is not",      "isn't",         "doesn't",   "does not",
    "didn't",    "did not",     "won't",       "crash",         "stopped",   "inactive",
    "refused",   "rejected",    "timeout",     "timed out",     "fatal",     "broken",
    "not work",  "not start",   "mismatch",    "don't match",   "not match", "no longer",
    "not exist", "not present", "not enabled", "not available"};

// Words before a name that make it an example, not the thing at hand:
// nvidia-installer's "another driver, such as nouveau, is present".
constexpr std::string_view kExampleLeads[] = {
    "such as", "e.g.", "e.g.,", "for example", "for example,", "for instance", "for instance,"};

// The lower-cased line's word characters.
bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// Words of fewer than 4 characters match whole (components.h): the index
// takes only longer ones.
bool short_word(std::string_view w) { return w.size() < 4; }

// Every long component word, and every short one, for the first pass.
struct Words {
  SubstringIndex long_words;
  std::vector<std::string_view> short_words;
};

const Words& component_words() {
  static const Words kWords = [] {
    std::vector<std::string> long_words;
    std::vector<std::string_view> short_words;
    for (const Component& c : components()) {
      for (std::string_view w : c.words) {
        if (short_word(w)) {
          short_words.push_back(w);
        } else {
          long_words.emplace_back(w);
        }
      }
    }
    return Words{SubstringIndex(std::move(long_words)), std::move(short_words)};
  }();
  return kWords;
}

// One pass over the line's words for the short component words.
bool has_short_word(std::string_view lowered, const std::vector<std::string_view>& shorts) {
  size_t i = 0;
  while (i < lowered.size()) {
    while (i < lowered.size() && !word_char(lowered[i])) ++i;
    size_t start = i;
    while (i < lowered.size() && word_char(lowered[i])) ++i;
    std::string_view token = lowered.substr(start, i - start);
    if (short_word(token) && std::find(shorts.begin(), shorts.end(), token) != shorts.end()) {
      return true;
    }
  }
  return false;
}

bool has_failure_word(std::string_view lowered) {
  static const SubstringIndex kWords({std::begin(kFailureWords), std::end(kFailureWords)});
  return kWords.first_in(lowered) >= 0;
}

// What comes before `at` ends with an example lead ("such as", "e.g."),
// after an article ("such as the fabric manager").
bool example_before(std::string_view lowered, size_t at) {
  std::string_view before = trim(lowered.substr(0, at));
  for (std::string_view article : {"the", "a", "an"}) {
    if (before.ends_with(article) && (before.size() == article.size() ||
                                      !word_char(before[before.size() - article.size() - 1]))) {
      before = trim(before.substr(0, before.size() - article.size()));
      break;
    }
  }
  return std::any_of(std::begin(kExampleLeads), std::end(kExampleLeads),
                     [&](std::string_view lead) { return before.ends_with(lead); });
}

// `word` occurs in the line as a name: whole when short, and not as an example.
bool names(std::string_view lowered, std::string_view word) {
  for (size_t at = lowered.find(word); at != std::string_view::npos;
       at = lowered.find(word, at + 1)) {
    size_t end = at + word.size();
    bool whole = (at == 0 || !word_char(lowered[at - 1])) &&
                 (end == lowered.size() || !word_char(lowered[end]));
    if (short_word(word) && !whole) continue;
    if (!example_before(lowered, at)) return true;
  }
  return false;
}

}  // namespace

bool parse_component_line(std::string_view line, std::string_view lowered, int line_no,
                          TextParse* p) {
  const Words& words = component_words();
  // Most lines name no component: one pass over them decides that.
  if (words.long_words.first_in(lowered) < 0 && !has_short_word(lowered, words.short_words)) {
    return false;
  }
  if (!has_failure_word(lowered)) return false;
  bool hit = false;
  for (const Component& c : components()) {
    auto in_line = [&](const char* w) { return lowered.find(w) != std::string_view::npos; };
    if (std::any_of(c.unless.begin(), c.unless.end(), in_line)) continue;
    if (std::none_of(c.words.begin(), c.words.end(),
                     [&](const char* w) { return names(lowered, w); })) {
      continue;
    }
    add_reported(p, std::string(kComponentKindPrefix) + c.key, -1,
                 std::string(c.name) + " named beside a failure", line, line_no);
    hit = true;
  }
  return hit;
}

}  // namespace gd
