// "Did you mean": the nearest of a list of names to a mistyped one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

// The candidate nearest to `word` by edit distance (insert, delete, replace,
// swap of two neighbours), when it is close enough to be a typo: at most a
// third of the word's length, and at least one edit allowed. "" otherwise.
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gd
