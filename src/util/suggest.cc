#include "util/suggest.h"

#include <algorithm>

namespace gd {
namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated
// edits of one substring): "chekc" -> "check" is one edit, a swap.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  // A typed word is short; a pasted paragraph gets no suggestion (and no
  // quadratic table).
  constexpr size_t kLongest = 128;
  if (word.empty() || word.size() > kLongest) return "";
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_d = allowed + 1;
  for (const auto& c : candidates) {
    if (c.size() > kLongest) continue;
    size_t dist = edit_distance(word, c);
    if (dist < best_d) best_d = dist, best = c;
  }
  return best;
}

}  // namespace gd
