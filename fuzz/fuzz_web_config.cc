// libFuzzer target: what `gpudoctor serve` reads from its command line and
// web config: the YAML web config (serve/web_config.h, yaml-cpp) and the
// --listen address (serve/http_listen.h). Any text either parses or is
// refused with one printable line; it never crashes or throws.
//
//   tls_server_config:
//     cert_file: server.crt
//     key_file: server.key
//   basic_auth_users:
//     prometheus: $2y$10$...
//
//   127.0.0.1:9835   [::1]:9835   :9835
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "serve/http_listen.h"
#include "serve/web_config.h"

namespace {

void require_one_line(const std::string& error) {
  GD_REQUIRE(!error.empty());
  GD_REQUIRE(error.find('\n') == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto wc = gd::parse_web_config(text, "/etc/gpudoctor");
  if (!wc.ok()) {
    require_one_line(wc.error());
  } else if (wc->tls) {
    GD_REQUIRE(!wc->tls_server.cert_file.empty() && !wc->tls_server.key_file.empty());
  }
  // The first line as a --listen value.
  std::string listen = text.substr(0, text.find('\n'));
  auto addr = gd::parse_listen_address(listen);
  if (!addr.ok()) require_one_line(addr.error());
  return 0;
}
