#include "serve/http_listen.h"

#include <charconv>

#include "util/text.h"

namespace gd {

Result<ListenAddress> parse_listen_address(const std::string& listen) {
  // Errors quote what was given, control characters escaped: one line.
  const std::string shown = printable(listen, 80);
  const std::string want = "expected HOST:PORT, [IPV6]:PORT or :PORT, got '" + shown + "'";
  ListenAddress a;
  std::string port_text;
  if (!listen.empty() && listen[0] == '[') {
    size_t close = listen.find(']');
    if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':') {
      return Error{"--listen: " + want};
    }
    a.host = listen.substr(1, close - 1);
    if (a.host.empty() || a.host.find(':') == std::string::npos) {
      return Error{"--listen: brackets hold an IPv6 address, got '" + shown + "'"};
    }
    port_text = listen.substr(close + 2);
  } else {
    size_t colon = listen.rfind(':');
    if (colon == std::string::npos) return Error{"--listen: " + want};
    a.host = listen.substr(0, colon);
    if (a.host.find(':') != std::string::npos) {
      return Error{"--listen: write an IPv6 address in brackets, as [::1]:9835, got '" + shown +
                   "'"};
    }
    port_text = listen.substr(colon + 1);
    if (a.host.empty()) {
      a.host = "::";  // dual-stack: IPv4 and IPv6 (IPV6_V6ONLY off, see http.cc)
      a.all_interfaces = true;
    }
  }
  for (char c : a.host) {
    if (c == ' ' || c == '/' || c == '\t' || static_cast<unsigned char>(c) < 0x20) {
      return Error{"--listen: bad host in '" + shown + "'"};
    }
  }
  int port = -1;
  const char* end = port_text.data() + port_text.size();
  auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || ptr != end || port < 0 || port > 65535) {
    return Error{"--listen: port must be a number from 0 to 65535, got '" +
                 printable(port_text, 80) + "'"};
  }
  a.port = port;
  return a;
}

std::string url_host_port(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

}  // namespace gd
