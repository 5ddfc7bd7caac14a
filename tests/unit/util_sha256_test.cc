// util/sha256.h against the test vectors of FIPS 180-4's examples
// (NIST CSRC, "Cryptographic Standards and Guidelines: Examples with
// Intermediate Values", SHA256.pdf and SHA256_2.pdf) and the empty message.
#include <gtest/gtest.h>

#include <string>

#include "util/sha256.h"

namespace gd {
namespace {

std::string hex(const std::array<uint8_t, 32>& md) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : md) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingEdges) {
  // 55, 56 and 64 bytes: the length fits the last block, then does not.
  EXPECT_NE(hex(sha256(std::string(55, 'x'))), hex(sha256(std::string(56, 'x'))));
  EXPECT_EQ(hex(sha256(std::string(64, 'a'))),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(ConstantTimeEqual, ComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

}  // namespace
}  // namespace gd
