// `--listen` addresses of the exporter, in the forms Prometheus exporters
// take (node_exporter's --web.listen-address):
//   127.0.0.1:9835    one IPv4 address
//   [::1]:9835        one IPv6 address (brackets required)
//   localhost:9835    a name, resolved when binding
//   :9835             every interface (IPv4 and IPv6): explicit, never a default
// Port 0 asks the kernel for a free port.
#pragma once

#include <string>

#include "util/result.h"

namespace gd {

struct ListenAddress {
  std::string host;  // without brackets; "::" for every interface
  int port = 0;
  bool all_interfaces = false;  // the ":PORT" form
};

Result<ListenAddress> parse_listen_address(const std::string& listen);

// How a URL names the bound address: "127.0.0.1:8080", "[::1]:8080".
std::string url_host_port(const std::string& host, int port);

}  // namespace gd
