// Strict typed reads out of a JSON object, shared by the helper-line parser
// (diag/protocol.cc) and the stored-run reader (diag/json.cc). A field that
// is absent or null keeps its default (the helper writes a non-finite number
// as null: "not measured"); a field that is present with another type is an
// error, and the first one is kept as one printable line naming the field:
//   "failures[2].offset" is a string, expected an unsigned integer
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace gd {

class JsonFields {
 public:
  // `obj` must outlive this reader; `prefix` names it in errors ("failures[2].").
  explicit JsonFields(const nlohmann::json& obj, std::string prefix = "");

  bool ok() const { return error_.empty(); }
  // How errors name this object ("memtests[0]."): a nested reader's prefix
  // starts with it.
  const std::string& prefix() const { return prefix_; }
  const std::string& error() const { return error_; }
  // Records a problem of the caller's own (an unknown enum value), if none yet.
  void fail(const std::string& message);

  bool has(const char* key) const;  // present and not null
  // Error when the key is absent, null or an empty string.
  JsonFields& require(const char* key);

  // Strings are kept as given unless max_len > 0: then passed through
  // printable() (control bytes escaped, at most max_len bytes).
  JsonFields& str(const char* key, std::string* out, size_t max_len = 0);
  JsonFields& boolean(const char* key, bool* out);
  JsonFields& number(const char* key, double* out);
  // At most max elements are kept; the rest are dropped silently.
  JsonFields& strings(const char* key, std::vector<std::string>* out, size_t max,
                      size_t max_len = 0);
  JsonFields& numbers(const char* key, std::vector<double>* out, size_t max);
  // An array of objects, each read by read(JsonFields& element, T* item);
  // elements' errors name them ("failures[2].offset"). At most max items are
  // kept, every element is still checked.
  template <class T, class Read>
  JsonFields& objects(const char* key, std::vector<T>* out, size_t max, Read read) {
    const nlohmann::json* v = get(key);
    if (v == nullptr || !ok()) return *this;
    if (!v->is_array()) {
      type_error(key, *v, "an array of objects");
      return *this;
    }
    std::vector<T> got;
    for (size_t i = 0; i < v->size(); ++i) {
      std::string name = std::string(key) + "[" + std::to_string(i) + "]";
      const nlohmann::json& e = (*v)[i];
      if (!e.is_object()) {
        type_error(name, e, "an object");
        return *this;
      }
      JsonFields element(e, prefix_ + name + ".");
      T item{};
      read(element, &item);
      if (!element.ok()) {
        fail(element.error());
        return *this;
      }
      if (got.size() < max) got.push_back(std::move(item));
    }
    *out = std::move(got);
    return *this;
  }

  // Integers: a JSON integer in T's range, or a float with an integral value
  // in range (1e9 is a fine byte count).
  template <class T>
  JsonFields& integer(const char* key, T* out) {
    const nlohmann::json* v = get(key);
    if (v == nullptr) return *this;
    std::optional<T> got = to_integer<T>(*v);
    if (got) {
      *out = *got;
    } else if (v->is_number()) {
      range_error(key, *v, std::to_string(std::numeric_limits<T>::min()),
                  std::to_string(std::numeric_limits<T>::max()));
    } else {
      type_error(key, *v, std::is_signed_v<T> ? "an integer" : "an unsigned integer");
    }
    return *this;
  }
  template <class T>
  JsonFields& integer(const char* key, std::optional<T>* out) {
    const nlohmann::json* v = get(key);
    if (v == nullptr) {
      out->reset();
      return *this;
    }
    T value{};
    integer(key, &value);
    if (ok()) *out = value;
    return *this;
  }

  // The value under key when present and not null; nullptr otherwise.
  const nlohmann::json* get(const char* key) const;
  // "is a string, expected an unsigned integer" under key.
  void type_error(const std::string& key, const nlohmann::json& v, const char* expected);
  // "is 1.5, expected an integer from 0 to 18446744073709551615" under key.
  void range_error(const std::string& key, const nlohmann::json& v, const std::string& lo,
                   const std::string& hi);

  template <class T>
  static std::optional<T> to_integer(const nlohmann::json& v) {
    const double kHi = std::ldexp(1.0, std::numeric_limits<T>::digits);
    const double kLo = std::is_signed_v<T> ? -kHi : 0.0;
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {  // negative: nlohmann keeps non-negative ones unsigned
      int64_t i = v.get<int64_t>();
      if constexpr (!std::is_signed_v<T>) {
        return std::nullopt;
      } else {
        if (i < static_cast<int64_t>(std::numeric_limits<T>::min())) return std::nullopt;
        return static_cast<T>(i);
      }
    }
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (!std::isfinite(d) || d != std::floor(d) || d < kLo || d >= kHi) return std::nullopt;
      return static_cast<T>(d);
    }
    return std::nullopt;
  }

 private:
  const nlohmann::json& obj_;
  std::string prefix_;
  std::string error_;
};

// "a string", "an object", ... for errors.
const char* json_type_phrase(const nlohmann::json& v);

}  // namespace gd
