// Which of many fixed strings a line contains, in one pass over the line:
// explain asks this of every pasted line for every error text CUDA has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gd {

class SubstringIndex {
 public:
  // Needles of at least 4 bytes (shorter ones are never found).
  explicit SubstringIndex(std::vector<std::string> needles);

  // The position in the constructor's list of the first needle that occurs
  // anywhere in `hay`; -1 when none does.
  int first_in(std::string_view hay) const;

 private:
  std::vector<std::string> needles_;
  // A needle's first four bytes -> the needles that start so; the bitset
  // answers "none" for most positions without a hash lookup.
  std::unordered_map<uint32_t, std::vector<int>> by_prefix_;
  std::vector<uint64_t> maybe_;  // 4096 bits over a hash of the prefix
  size_t shortest_ = 0;
};

}  // namespace gd
