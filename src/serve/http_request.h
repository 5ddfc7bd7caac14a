// A request head as the exporter's HTTP server reads it (http.cc): the
// request line and header fields of RFC 9112, strictly, with the limits an
// exporter needs. Pure: bytes in, a parsed head or the error answer out
// (fuzz/fuzz_http_request.cc drives it through the server).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gd {

// Limits on a request head (docs/serve.md, "Limits").
constexpr size_t kMaxRequestLineBytes = 8 * 1024;  // longer: 414
constexpr size_t kMaxHeaderLineBytes = 8 * 1024;   // one field line longer: 431
constexpr size_t kMaxHeaderBytes = 16 * 1024;      // all field lines together: 431
constexpr size_t kMaxHeaderCount = 100;            // more fields: 431
constexpr size_t kMaxHeadBytes = 64 * 1024;        // a head not ended by then: 431, then cut

struct RequestHead {
  std::string method;  // as sent; a method we do not know is a 400
  std::string target;  // as sent
  std::string path;    // target up to '?'
  int minor = 1;       // HTTP/1.<minor>
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent, values trimmed
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive
  bool has_body = false;   // Content-Length > 0 or Transfer-Encoding: not read by us

  // The first field named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

struct HeadError {
  int status = 400;     // 400, 414, 431 or 505
  std::string message;  // the answer's one-line body, with its newline
};

// Where the head in `buf` ends (the index just past its empty line), or
// npos while it has not ended. Lines end in CRLF or a bare LF.
size_t find_head_end(std::string_view buf);

// Parses a whole head (what find_head_end measured).
struct ParsedHead {
  std::optional<RequestHead> head;  // set when the head is good
  HeadError error;                  // otherwise
};
ParsedHead parse_request_head(std::string_view head);

// HTTP methods RFC 9110 defines: any other is a bad request line (400);
// these, but for GET and HEAD, are refused with 405.
bool is_known_method(std::string_view method);

}  // namespace gd
