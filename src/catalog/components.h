// The parts of a GPU stack that a report in prose names when it has no
// error code to give: "the fabric manager is not installed", "nvidia_uvm
// isn't loaded", "Secure Boot rejects the module". Each names the finding
// ids it points at, most likely first, and the facts section that says so;
// explain/parse_components.cc reads a component beside a failure word as a
// signal, and explain/rules.cc gives these ids for it.
#pragma once

#include <string_view>
#include <vector>

namespace gd {

struct Component {
  const char* key;   // the signal's tail: "component:<key>"
  const char* name;  // in words, for ranked_by: "the fabric manager"
  // Lower-case substrings, any of them names the component. One shorter than
  // 4 characters ("mig", "cdi") names it only as a whole word: no letter,
  // digit or '_' on either side ("migrate", "might" and "mig_mode" do not).
  std::vector<const char*> words;
  std::vector<const char*> ids;  // candidate finding ids, most likely first
  const char* source;            // the facts section or doc the mapping comes from
  // Lower-case substrings that make a line no report of a failure of it:
  // "secure boot disabled" is the state that rules Secure Boot out.
  std::vector<const char*> unless = {};
};

const std::vector<Component>& components();

// The component with this key ("fabric-manager"); nullptr if none.
const Component* find_component(std::string_view key);

}  // namespace gd
