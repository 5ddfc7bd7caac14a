#include "serve/http_request.h"

#include <algorithm>
#include <array>

#include "util/ascii.h"
#include "util/bytes.h"
#include "util/text.h"

namespace gd {
namespace {

// tchar of RFC 9110 5.6.2: what a method and a field name are made of.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  constexpr std::string_view kOthers = "!#$%&'*+-.^_`|~";
  return kOthers.find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

// A request target: visible ASCII only (no space, no control, no byte >= 0x80).
bool is_target(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// A field value: visible ASCII, spaces, tabs and obs-text (RFC 9110 5.5).
bool is_field_value(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

// Does the comma-separated list `value` hold `token` (case-insensitive)?
bool list_has(std::string_view value, std::string_view token) {
  const std::vector<std::string_view> items = split(value, ',');
  return std::any_of(items.begin(), items.end(),
                     [&](std::string_view item) { return iequals(trim(item), token); });
}

ParsedHead fail(int status, std::string message) {
  return ParsedHead{std::nullopt, HeadError{status, std::move(message)}};
}

ParsedHead bad(const std::string& why) { return fail(400, "bad request: " + why + "\n"); }

ParsedHead fields_too_large() {
  return fail(431, "request header fields too large (at most " + std::to_string(kMaxHeaderCount) +
                       " fields, " + format_bytes_exact(kMaxHeaderBytes) + ")\n");
}

// Splits off the next line of `rest` (without its CRLF or LF). False when a
// bare CR sits inside the line: RFC 9112 2.2 lets a server refuse it.
bool next_line(std::string_view& rest, std::string_view& line) {
  size_t nl = rest.find('\n');
  line = rest.substr(0, nl);
  rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.find('\r') == std::string_view::npos;
}

}  // namespace

const std::string* RequestHead::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return &v;
  }
  return nullptr;
}

bool is_known_method(std::string_view method) {
  static constexpr std::array<std::string_view, 9> kMethods = {
      "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"};
  for (std::string_view m : kMethods) {
    if (m == method) return true;
  }
  return false;
}

size_t find_head_end(std::string_view buf) {
  for (size_t nl = buf.find('\n'); nl != std::string_view::npos; nl = buf.find('\n', nl + 1)) {
    if (nl + 1 < buf.size() && buf[nl + 1] == '\n') return nl + 2;
    if (nl + 2 < buf.size() && buf[nl + 1] == '\r' && buf[nl + 2] == '\n') return nl + 3;
  }
  return std::string_view::npos;
}

ParsedHead parse_request_head(std::string_view head) {
  std::string_view rest = head;
  std::string_view line;
  const bool clean = next_line(rest, line);
  if (line.size() > kMaxRequestLineBytes) return fail(414, "request URI too long\n");
  if (!clean) return bad("a bare CR in the request line");

  // method SP request-target SP HTTP-version (RFC 9112 3), single spaces.
  RequestHead h;
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad("expected METHOD TARGET HTTP/1.1");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method) || !is_known_method(method)) return bad("unknown method");
  if (!is_target(target)) return bad("bad request target");
  if (version.size() == 8 && version.starts_with("HTTP/") && version[6] == '.' &&
      version[5] >= '0' && version[5] <= '9' && version[7] >= '0' && version[7] <= '9') {
    if (version[5] != '1') {
      return fail(505, "HTTP version not supported (this exporter speaks HTTP/1.1)\n");
    }
    h.minor = version[7] - '0';
  } else {
    return bad("expected HTTP/1.1 or HTTP/1.0");
  }
  h.method = std::string(method);
  h.target = std::string(target);
  std::string_view path = target;
  if (path.starts_with("http://") || path.starts_with("https://")) {
    // absolute-form (RFC 9112 3.2.2): the path starts after the authority.
    path.remove_prefix(path.find("//") + 2);
    size_t slash = path.find_first_of("/?");
    path = slash == std::string_view::npos ? std::string_view("/") : path.substr(slash);
    if (path.starts_with('?')) path = "/";
  } else if (path != "*" && !path.starts_with('/')) {
    return bad("bad request target");
  }
  h.path = std::string(path.substr(0, path.find('?')));

  size_t field_bytes = 0;
  bool said_close = false;
  bool said_keep_alive = false;
  std::optional<uint64_t> content_length;
  while (next_line(rest, line)) {
    if (line.empty()) break;  // the head's end
    if (line.size() > kMaxHeaderLineBytes || h.headers.size() == kMaxHeaderCount) {
      return fields_too_large();
    }
    field_bytes += line.size() + 2;
    if (field_bytes > kMaxHeaderBytes) return fields_too_large();
    if (line.front() == ' ' || line.front() == '\t') return bad("folded header line");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
      return bad("bad header line");
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim(line.substr(colon + 1));  // OWS: no CR or LF is left
    if (!is_field_value(value)) return bad("bad header value");
    if (iequals(name, "Content-Length")) {
      const std::optional<uint64_t> n = parse_u64(value);
      if (!n || (content_length && *content_length != *n)) return bad("bad Content-Length");
      content_length = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      h.has_body = true;
    } else if (iequals(name, "Connection")) {
      said_close = said_close || list_has(value, "close");
      said_keep_alive = said_keep_alive || list_has(value, "keep-alive");
    }
    h.headers.emplace_back(name, value);
  }
  if (!line.empty()) return bad("a bare CR in a header line");
  h.has_body = h.has_body || content_length.value_or(0) > 0;
  // HTTP/1.0 closes unless asked not to; "close" wins over "keep-alive".
  h.keep_alive = !said_close && (h.minor >= 1 || said_keep_alive);
  return ParsedHead{std::move(h), {}};
}

}  // namespace gd
