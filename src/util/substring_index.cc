#include "util/substring_index.h"

#include <algorithm>
#include <cstring>

namespace gd {
namespace {

constexpr size_t kBits = 4096;

uint32_t prefix_at(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

size_t bit_of(uint32_t prefix) { return (prefix * 2654435761u) >> 20; }  // 12 bits

}  // namespace

SubstringIndex::SubstringIndex(std::vector<std::string> needles)
    : needles_(std::move(needles)), maybe_(kBits / 64, 0) {
  for (size_t i = 0; i < needles_.size(); ++i) {
    const std::string& n = needles_[i];
    if (n.size() < 4) continue;
    uint32_t key = prefix_at(n.data());
    by_prefix_[key].push_back(static_cast<int>(i));
    maybe_[bit_of(key) / 64] |= uint64_t{1} << (bit_of(key) % 64);
    shortest_ = shortest_ == 0 ? n.size() : std::min(shortest_, n.size());
  }
}

int SubstringIndex::first_in(std::string_view hay) const {
  if (shortest_ == 0 || hay.size() < shortest_) return -1;
  int best = -1;
  for (size_t i = 0; i + shortest_ <= hay.size(); ++i) {
    uint32_t key = prefix_at(hay.data() + i);
    size_t bit = bit_of(key);
    if ((maybe_[bit / 64] & (uint64_t{1} << (bit % 64))) == 0) continue;
    auto it = by_prefix_.find(key);
    if (it == by_prefix_.end()) continue;
    for (int idx : it->second) {
      if (best != -1 && idx >= best) break;  // listed in order: no earlier one left here
      const std::string& n = needles_[static_cast<size_t>(idx)];
      if (hay.substr(i, n.size()) == n) best = idx;
    }
    if (best == 0) break;
  }
  return best;
}

}  // namespace gd
