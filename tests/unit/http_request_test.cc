// The exporter's request-head parser (serve/http_request.h): RFC 9112's
// request line and fields, strictly, with the exporter's limits.
#include "serve/http_request.h"

#include <gtest/gtest.h>

namespace gd {
namespace {

ParsedHead parse(const std::string& head) {
  size_t end = find_head_end(head);
  EXPECT_NE(end, std::string::npos) << head;
  return parse_request_head(std::string_view(head).substr(0, end));
}

int status(const std::string& head) {
  ParsedHead p = parse(head);
  return p.head ? 0 : p.error.status;
}

TEST(HttpRequest, FindsTheEndOfAHeadWithCrlfOrBareLf) {
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r\nnext"), 27u);
  EXPECT_EQ(find_head_end("GET / HTTP/1.0\n\n"), 16u);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nHost: x\r\n"), std::string::npos);
  EXPECT_EQ(find_head_end(""), std::string::npos);
}

TEST(HttpRequest, ParsesAGoodHead) {
  ParsedHead p = parse("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept:  text/plain \r\n\r\n");
  ASSERT_TRUE(p.head);
  EXPECT_EQ(p.head->method, "GET");
  EXPECT_EQ(p.head->target, "/metrics?x=1");
  EXPECT_EQ(p.head->path, "/metrics");
  EXPECT_EQ(p.head->minor, 1);
  ASSERT_NE(p.head->header("accept"), nullptr);
  EXPECT_EQ(*p.head->header("ACCEPT"), "text/plain");
  EXPECT_TRUE(p.head->keep_alive);
  EXPECT_FALSE(p.head->has_body);
  // absolute-form targets route by their path
  p = parse("GET http://host:9835/healthz HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(p.head);
  EXPECT_EQ(p.head->path, "/healthz");
}

TEST(HttpRequest, ConnectionAndBodies) {
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").head->keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").head->keep_alive);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").head->keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n")
                   .head->keep_alive);
  EXPECT_TRUE(parse("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").head->has_body);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").head->has_body);
  EXPECT_TRUE(parse("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").head->has_body);
}

TEST(HttpRequest, RefusesBadHeads) {
  EXPECT_EQ(status("BREW / HTTP/1.1\r\n\r\n"), 400);       // unknown method
  EXPECT_EQ(status("get / HTTP/1.1\r\n\r\n"), 400);        // methods are case-sensitive
  EXPECT_EQ(status("GET  / HTTP/1.1\r\n\r\n"), 400);       // two spaces
  EXPECT_EQ(status("GET / HTTP/1.1 x\r\n\r\n"), 400);      // three parts only
  EXPECT_EQ(status("GET metrics HTTP/1.1\r\n\r\n"), 400);  // not a path
  EXPECT_EQ(status("GET /\x01 HTTP/1.1\r\n\r\n"), 400);    // a control byte
  EXPECT_EQ(status("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(status("GET / HTTX/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nNo colon\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nBad name: v\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), 400);  // a bare CR
  EXPECT_EQ(status("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nContent-Length: 5x\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(status("GET /" + std::string(kMaxRequestLineBytes, 'a') + " HTTP/1.1\r\n\r\n"), 414);
}

TEST(HttpRequest, FieldLimits) {
  std::string head = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i < kMaxHeaderCount; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(status(head + "\r\n"), 0);
  ParsedHead p = parse(head + "X-One-More: v\r\n\r\n");
  ASSERT_FALSE(p.head);
  EXPECT_EQ(p.error.status, 431);
  EXPECT_EQ(p.error.message, "request header fields too large (at most 100 fields, 16 KiB)\n");
  EXPECT_EQ(status("GET / HTTP/1.1\r\nX: " + std::string(kMaxHeaderLineBytes, 'v') + "\r\n\r\n"),
            431);
  std::string wide = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 5; ++i)
    wide += "X-" + std::to_string(i) + ": " + std::string(4000, 'v') + "\r\n";
  EXPECT_EQ(status(wide + "\r\n"), 431);  // 20 KB of fields
}

}  // namespace
}  // namespace gd
