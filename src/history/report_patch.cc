// The history's report changes (report_patch.h).
#include "history/report_patch.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gd::history {

namespace {

using Json = ReportJson;

// "/a~1b" for the key "a/b" (RFC 6901).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

void change_ops(const Json& from, const Json& to, const std::string& path, Json* ops);

// The elements two arrays keep in common, in order (a longest common
// subsequence of equal elements), as (from index, to index) pairs. Over a
// million cells of table, only the common head and tail.
std::vector<std::pair<size_t, size_t>> kept_elements(const Json& from, const Json& to) {
  size_t nf = from.size(), nt = to.size();
  std::vector<std::pair<size_t, size_t>> kept;
  if (nf * nt > (size_t{1} << 20)) {
    size_t head = 0, tail = 0;
    while (head < nf && head < nt && from[head] == to[head]) kept.emplace_back(head, head), ++head;
    while (tail < nf - head && tail < nt - head && from[nf - 1 - tail] == to[nt - 1 - tail]) ++tail;
    for (size_t t = tail; t > 0; --t) kept.emplace_back(nf - t, nt - t);
    return kept;
  }
  std::vector<std::string> f, t;
  for (const Json& e : from) f.push_back(e.dump());
  for (const Json& e : to) t.push_back(e.dump());
  // lcs[i * (nt + 1) + j]: the common length of from[i..] and to[j..].
  std::vector<uint32_t> lcs((nf + 1) * (nt + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (nt + 1) + j]; };
  for (size_t i = nf; i-- > 0;) {
    for (size_t j = nt; j-- > 0;) {
      at(i, j) = f[i] == t[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  for (size_t i = 0, j = 0; i < nf && j < nt;) {
    if (f[i] == t[j]) {
      kept.emplace_back(i++, j++);
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      ++j;
    }
  }
  return kept;
}

// Between two kept elements: the first elements of each side are changed
// in place (a GPU's readings), the rest of `from` removed, the rest of `to`
// added. A finding that moved to the top of a report is then one "remove"
// and one "add", not a replace of every finding in between.
void array_ops(const Json& from, const Json& to, const std::string& path, Json* ops) {
  auto kept = kept_elements(from, to);
  kept.emplace_back(from.size(), to.size());  // the end, kept by no one
  size_t i = 0, j = 0, k = 0;                 // k: the index in the array as patched so far
  for (auto [ki, kj] : kept) {
    size_t mf = ki - i, mt = kj - j, paired = std::min(mf, mt);
    for (size_t p = 0; p < paired; ++p) {
      change_ops(from[i + p], to[j + p], path + '/' + std::to_string(k + p), ops);
    }
    for (size_t p = paired; p < mf; ++p) {
      ops->push_back({{"op", "remove"}, {"path", path + '/' + std::to_string(k + paired)}});
    }
    for (size_t p = paired; p < mt; ++p) {
      ops->push_back(
          {{"op", "add"}, {"path", path + '/' + std::to_string(k + p)}, {"value", to[j + p]}});
    }
    k += mt + 1;
    i = ki + 1;
    j = kj + 1;
  }
}

// The RFC 6902 operations that turn `from` into `to` at `path`. Unlike
// Json::diff, arrays keep what they have in common (array_ops), and an
// object that gains a key is replaced whole, so a rebuilt report keeps its
// keys in their order (an "add" would append the key).
void change_ops(const Json& from, const Json& to, const std::string& path, Json* ops) {
  if (from == to) return;
  auto replace = [&] { ops->push_back({{"op", "replace"}, {"path", path}, {"value", to}}); };
  if (from.type() != to.type()) return replace();
  if (from.is_object()) {
    for (const auto& [key, value] : to.items()) {
      if (!from.contains(key)) return replace();
    }
    for (const auto& [key, value] : from.items()) {
      std::string at = path + '/' + pointer_token(key);
      auto it = to.find(key);
      if (it == to.end()) {
        ops->push_back({{"op", "remove"}, {"path", at}});
      } else {
        change_ops(value, *it, at, ops);
      }
    }
    return;
  }
  if (from.is_array()) return array_ops(from, to, path, ops);
  replace();
}

}  // namespace

std::string report_text(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// The JSON Patch (RFC 6902) that turns `from` into `to`, as compact text.
std::string patch_text(const Json& from, const Json& to) {
  Json ops = Json::array();
  change_ops(from, to, "", &ops);
  return ops.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<Json> patched(const Json& base, const std::string& patch) {
  auto p = Json::parse(patch, nullptr, false);
  if (p.is_discarded() || !p.is_array()) return Error{"the change is not a JSON Patch"};
  try {
    return base.patch(p);
  } catch (const Json::exception& e) {
    return Error{e.what()};
  }
}

}  // namespace gd::history
