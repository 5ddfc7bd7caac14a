#include "diag/fields.h"

#include <cmath>

#include "util/text.h"

namespace gd {

const char* json_type_phrase(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "an integer";
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "a binary value";
  }
}

JsonFields::JsonFields(const nlohmann::json& obj, std::string prefix)
    : obj_(obj), prefix_(std::move(prefix)) {}

void JsonFields::fail(const std::string& message) {
  if (error_.empty()) error_ = printable(message, 300);
}

const nlohmann::json* JsonFields::get(const char* key) const {
  if (!obj_.is_object()) return nullptr;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonFields::has(const char* key) const { return get(key) != nullptr; }

JsonFields& JsonFields::require(const char* key) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) {
    fail("\"" + prefix_ + key + "\" is missing");
  } else if (v->is_string() && v->get_ref<const std::string&>().empty()) {
    fail("\"" + prefix_ + key + "\" is empty");
  }
  return *this;
}

void JsonFields::type_error(const std::string& key, const nlohmann::json& v, const char* expected) {
  fail("\"" + prefix_ + key + "\" is " + json_type_phrase(v) + ", expected " + expected);
}

void JsonFields::range_error(const std::string& key, const nlohmann::json& v, const std::string& lo,
                             const std::string& hi) {
  std::string value = v.is_number_float() && !std::isfinite(v.get<double>()) ? "huge" : v.dump();
  fail("\"" + prefix_ + key + "\" is " + value + ", expected an integer from " + lo + " to " + hi);
}

JsonFields& JsonFields::str(const char* key, std::string* out, size_t max_len) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return *this;
  if (!v->is_string()) {
    type_error(key, *v, "a string");
    return *this;
  }
  const std::string& s = v->get_ref<const std::string&>();
  *out = max_len > 0 ? printable(s, max_len) : s;
  return *this;
}

JsonFields& JsonFields::boolean(const char* key, bool* out) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return *this;
  if (!v->is_boolean()) {
    type_error(key, *v, "true or false");
    return *this;
  }
  *out = v->get<bool>();
  return *this;
}

JsonFields& JsonFields::number(const char* key, double* out) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return *this;
  if (!v->is_number()) {
    type_error(key, *v, "a number");
    return *this;
  }
  double d = v->get<double>();
  // 1e999 parses as infinity, which has no JSON form to be stored in.
  if (!std::isfinite(d)) {
    fail("\"" + prefix_ + key + "\" is out of range, expected a finite number");
    return *this;
  }
  *out = d;
  return *this;
}

JsonFields& JsonFields::strings(const char* key, std::vector<std::string>* out, size_t max,
                                size_t max_len) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return *this;
  if (!v->is_array()) {
    type_error(key, *v, "an array of strings");
    return *this;
  }
  std::vector<std::string> got;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    if (!e.is_string()) {
      type_error(std::string(key) + "[" + std::to_string(i) + "]", e, "a string");
      return *this;
    }
    if (got.size() >= max) continue;
    const std::string& s = e.get_ref<const std::string&>();
    got.push_back(max_len > 0 ? printable(s, max_len) : s);
  }
  *out = std::move(got);
  return *this;
}

JsonFields& JsonFields::numbers(const char* key, std::vector<double>* out, size_t max) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return *this;
  if (!v->is_array()) {
    type_error(key, *v, "an array of numbers");
    return *this;
  }
  std::vector<double> got;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    if (e.is_null()) {  // a non-finite figure: not measured
      if (got.size() < max) got.push_back(0);
      continue;
    }
    if (!e.is_number()) {
      type_error(std::string(key) + "[" + std::to_string(i) + "]", e, "a number");
      return *this;
    }
    if (!std::isfinite(e.get<double>())) {
      fail("\"" + prefix_ + key + "[" + std::to_string(i) +
           "]\" is out of range, expected a finite number");
      return *this;
    }
    if (got.size() < max) got.push_back(e.get<double>());
  }
  *out = std::move(got);
  return *this;
}

}  // namespace gd
