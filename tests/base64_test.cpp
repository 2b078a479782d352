// Base64 against the test vectors of RFC 4648 §10.
#include <catch2/catch.hpp>

#include "render/base64.hpp"

using namespace attnviz;

TEST_CASE("base64: encodes the RFC 4648 test vectors", "[render]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foob") == "Zm9vYg==");
  CHECK(base64_encode("fooba") == "Zm9vYmE=");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(base64_encode(std::string("\xff\xfe\x00", 3)) == "//4A");
}
