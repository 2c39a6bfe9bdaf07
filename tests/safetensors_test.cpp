// The safetensors layer: SHA-256 against FIPS 180-2 vectors, a bit-exact round trip, the
// on-disk layout byte by byte, one test per refusal the reader must make, and the
// atomic writer leaving the old file intact when a write fails.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "io/safetensors.h"
#include "io/sha256.h"
#include "core/error.h"

namespace fs = std::filesystem;
using namespace mg;

namespace {

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string u64_le(uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
  return out;
}

// A file from a hand-written header and `data_bytes` zero bytes of data.
std::string raw_file(const std::string& header, size_t data_bytes) {
  return u64_le(header.size()) + header + std::string(data_bytes, '\0');
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mg_safetensors_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Expects read_safetensors(path) to throw an InputError that starts with the path and
  // contains every one of `parts`.
  void expect_refused(const fs::path& path, const std::vector<std::string>& parts) {
    try {
      read_safetensors(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
    }
  }
  void expect_header_refused(const std::string& header, size_t data_bytes, const std::vector<std::string>& parts) {
    const fs::path path = dir_ / "bad.safetensors";
    write_bytes(path, raw_file(header, data_bytes));
    expect_refused(path, parts);
  }
  std::vector<std::string> temp_files() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().find(".tmp.") != std::string::npos)
        found.push_back(entry.path().filename().string());
    return found;
  }

  fs::path dir_;
};

}  // namespace

TEST(Sha256Test, MatchesFipsKnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, StreamingInPiecesEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 7 + 3);
  const std::string expected = sha256_hex(text);
  for (size_t piece : {1, 3, 55, 56, 63, 64, 65, 128}) {
    Sha256 hash;
    for (size_t at = 0; at < text.size(); at += piece) hash.update(text.data() + at, std::min(piece, text.size() - at));
    EXPECT_EQ(hash.hex_digest(), expected) << "piece " << piece;
  }
}

TEST_F(SafetensorsTest, RoundTripIsBitExactWithMetadataAndFileOrder) {
  // Special values must survive as bit patterns: -0, a denormal, infinities, a NaN payload.
  float nan_payload;
  const uint32_t nan_bits = 0x7fc12345;
  std::memcpy(&nan_payload, &nan_bits, 4);
  Tensor a = Tensor::from({2, 3}, {-0.0f, 1e-45f, INFINITY, -INFINITY, nan_payload, 3.25f});
  Tensor b = Tensor::from({4}, {1.0f, -2.5f, 1e30f, 0.1f});
  Tensor scalar = Tensor::from({}, {7.0f});
  Tensor empty = Tensor::zeros({0, 5});
  const fs::path path = dir_ / "x.safetensors";
  // "zeta" first: the data order is the given order, not the names' order.
  write_safetensors(path, {{"note", "小丁拿着红色的苹果。"}, {"empty", ""}},
                    {{"zeta", &a}, {"alpha", &b}, {"none", &empty}, {"scalar", &scalar}});

  SafetensorsFile file = read_safetensors(path);
  EXPECT_EQ(file.metadata.at("note"), "小丁拿着红色的苹果。");
  EXPECT_EQ(file.metadata.at("empty"), "");
  ASSERT_EQ(file.metadata.size(), 4u);  // plus data_sha256 and header_sha256
  ASSERT_EQ(file.tensors.size(), 4u);
  EXPECT_EQ(file.tensors[0].first, "zeta");
  EXPECT_EQ(file.tensors[1].first, "alpha");
  EXPECT_EQ(file.tensors[2].first, "none");
  EXPECT_EQ(file.tensors[3].first, "scalar");
  EXPECT_EQ(file.tensors[0].second.shape(), Shape({2, 3}));
  EXPECT_EQ(file.tensors[2].second.shape(), Shape({0, 5}));
  EXPECT_EQ(file.tensors[3].second.shape(), Shape({}));
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(bits(file.tensors[0].second[i]), bits(a[i])) << i;
  for (int64_t i = 0; i < b.numel(); ++i) EXPECT_EQ(bits(file.tensors[1].second[i]), bits(b[i])) << i;
  EXPECT_EQ(file.tensors[3].second[0], 7.0f);
}

TEST_F(SafetensorsTest, LayoutIsPaddedHeaderThenLittleEndianDataWithItsSha256) {
  Tensor a = Tensor::from({3}, {1.0f, -2.0f, 0.5f});  // 1.0f = 0x3f800000
  const fs::path path = dir_ / "layout.safetensors";
  write_safetensors(path, {{"k", "v"}}, {{"a", &a}});
  const std::string bytes = read_bytes(path);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(header_bytes % 8, 0u);
  ASSERT_EQ(bytes.size(), 8 + header_bytes + 12);
  const std::string header = bytes.substr(8, header_bytes);
  EXPECT_EQ(header.rfind("{\"__metadata__\":", 0), 0u) << header;
  EXPECT_NE(header.find("\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}"), std::string::npos)
      << header;
  const std::string data = bytes.substr(8 + header_bytes);
  EXPECT_EQ(data.substr(0, 4), std::string("\x00\x00\x80\x3f", 4));  // 1.0f little-endian
  EXPECT_EQ(data.substr(4, 4), std::string("\x00\x00\x00\xc0", 4));  // -2.0f
  EXPECT_NE(header.find("\"data_sha256\":\"" + sha256_hex(data) + "\""), std::string::npos) << header;
}

TEST_F(SafetensorsTest, AcceptsTensorsInAnyHeaderOrderAndReturnsThemByOffset) {
  // Header lists b before a, and a file without data_sha256 (as the reference writes) is fine.
  const std::string header =
      R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const fs::path path = dir_ / "order.safetensors";
  write_bytes(path, u64_le(header.size()) + header + std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8));
  SafetensorsFile file = read_safetensors(path);
  ASSERT_EQ(file.tensors.size(), 2u);
  EXPECT_EQ(file.tensors[0].first, "a");
  EXPECT_EQ(file.tensors[0].second[0], 1.0f);
  EXPECT_EQ(file.tensors[1].first, "b");
  EXPECT_EQ(file.tensors[1].second[0], 2.0f);
  EXPECT_TRUE(file.metadata.empty());
}

TEST_F(SafetensorsTest, RefusesMissingAndTooShortFiles) {
  expect_refused(dir_ / "absent.safetensors", {"cannot read", "No such file"});
  write_bytes(dir_ / "short.safetensors", "abc");
  expect_refused(dir_ / "short.safetensors", {"3 bytes", "too short"});
  expect_refused(dir_, {"not a regular file"});
}

TEST_F(SafetensorsTest, RefusesHeaderLengthsBeforeReadingThem) {
  write_bytes(dir_ / "huge.safetensors", u64_le(uint64_t(1) << 40) + "{}");
  expect_refused(dir_ / "huge.safetensors", {"header length 1099511627776", "limit of 100000000"});
  write_bytes(dir_ / "long.safetensors", u64_le(17) + std::string(16, ' '));
  expect_refused(dir_ / "long.safetensors", {"header length 17", "exceeds the 16 bytes"});
}

TEST_F(SafetensorsTest, RefusesHeadersThatAreNotJsonObjectsOfTheRightKind) {
  expect_header_refused("{\"a\": ", 0, {"invalid JSON at line 1 column"});
  expect_header_refused("[1,2]", 0, {"not a JSON object"});
  expect_header_refused(R"({"__metadata__":{"step":3}})", 0, {"__metadata__.step must be a string", "3"});
  expect_header_refused(R"({"__metadata__":"x"})", 0, {"__metadata__ must be an object"});
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[1]}})", 4, {"tensor w", "lacks \"data_offsets\""});
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", 4,
                        {"tensor w", "unexpected key \"x\""});
}

TEST_F(SafetensorsTest, RefusesOtherDtypesNamingTensorAndDtype) {
  expect_header_refused(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4,
                        {"tensor w", "dtype \"F16\"", "expected \"F32\""});
}

TEST_F(SafetensorsTest, RefusesShapesThatDoNotMatchTheirBytes) {
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20,
                        {"tensor w", "span 20 bytes", "[2,3] needs 24"});
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[2,-3],"data_offsets":[0,24]}})", 24,
                        {"tensor w", "non-negative integers"});
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8,
                        {"tensor w", "non-negative integers"});
  // 2^62 * 2^62 elements overflow u64 long before the multiply by 4.
  expect_header_refused(
      R"({"w":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})", 0,
      {"tensor w", "overflows"});
  // 2^62 elements fit in u64, but times 4 bytes they do not: wrapped to 0 it would "match".
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", 0,
                        {"tensor w", "overflows"});
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8,
                        {"tensor w", "[8,4] end before they begin"});
  expect_header_refused(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4,
                        {"tensor w", "data_offsets must be two"});
}

TEST_F(SafetensorsTest, RefusesGapsOverlapsTrailingBytesAndTruncation) {
  const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  expect_header_refused("{" + a + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", 20,
                        {"gap", "[8,12]", "tensor b starts at 12, expected 8"});
  expect_header_refused("{" + a + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12,
                        {"tensor b", "overlaps tensor a", "ends at 8"});
  expect_header_refused("{" + a + "}", 11, {"3 trailing bytes", "cover 8 bytes of the 11-byte"});
  expect_header_refused("{" + a + "}", 5, {"tensor a ends at data offset 8", "holds 5 bytes"});
  expect_header_refused(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12,
                        {"gap", "[0,4]"});
}

TEST_F(SafetensorsTest, RefusesAFlippedDataByteByItsChecksum) {
  Tensor a = Tensor::from({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  const fs::path path = dir_ / "flip.safetensors";
  write_safetensors(path, {}, {{"a", &a}});
  std::string bytes = read_bytes(path);
  bytes[bytes.size() - 3] ^= 0x01;  // one bit inside the last float
  write_bytes(path, bytes);
  expect_refused(path, {"data checksum mismatch", "data_sha256"});
}

// The header's checksum (issue 45): an edited metadata value (a config's model.rope_base)
// or tensor entry is refused; the same edit with header_sha256 taken out loads, as a file
// written by another program (the PyTorch reference) does.
TEST_F(SafetensorsTest, RefusesAnEditedHeaderByItsChecksumAndLoadsOneWithout) {
  Tensor a = Tensor::from({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  const fs::path path = dir_ / "edited.safetensors";
  write_safetensors(path, {{"config", R"({"model":{"rope_base":10000}})"}}, {{"a", &a}});
  const std::string bytes = read_bytes(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(bytes[i]);
  std::string header = bytes.substr(8, n);
  const std::string data = bytes.substr(8 + n);
  ASSERT_NE(header.find("\"header_sha256\":\"" + header_digest(read_safetensors(path).metadata, {{"a", {4}, 0, 16}}) + "\""),
            std::string::npos)
      << header;
  const size_t at = header.find("10000");
  ASSERT_NE(at, std::string::npos);
  header.replace(at, 5, "99999");  // the same length: the padding and offsets stay
  write_bytes(path, u64_le(header.size()) + header + data);
  expect_refused(path, {"header checksum mismatch", "header_sha256", "edited or corrupted"});
  const size_t key = header.find("\"header_sha256\"");
  header.replace(key, 1, "\"x");  // the key renamed: no header checksum (and still valid JSON)
  write_bytes(path, u64_le(header.size()) + header + data);
  EXPECT_EQ(read_safetensors(path).metadata.at("config"), R"({"model":{"rope_base":99999}})");
}

TEST_F(SafetensorsTest, OverwriteReplacesTheFileAndLeavesNoTempFile) {
  Tensor one = Tensor::from({1}, {1.0f});
  Tensor two = Tensor::from({2}, {2.0f, 3.0f});
  const fs::path path = dir_ / "latest.safetensors";
  write_safetensors(path, {{"step", "1"}}, {{"w", &one}});
  write_safetensors(path, {{"step", "2"}}, {{"w", &two}});
  SafetensorsFile file = read_safetensors(path);
  EXPECT_EQ(file.metadata.at("step"), "2");
  EXPECT_EQ(file.tensors[0].second.shape(), Shape({2}));
  EXPECT_TRUE(temp_files().empty());
}

TEST_F(SafetensorsTest, FailedWriteToAMissingFolderThrowsIoErrorNamingThePath) {
  Tensor one = Tensor::from({1}, {1.0f});
  const fs::path path = dir_ / "no_such_folder" / "latest.safetensors";
  try {
    write_safetensors(path, {}, {{"w", &one}});
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + path.string() + ": No such file or directory");
  }
  EXPECT_FALSE(fs::exists(dir_ / "no_such_folder"));
}

TEST_F(SafetensorsTest, FailedRenameLeavesTargetUntouchedAndRemovesTempFile) {
  // The target is a non-empty folder: the writer refuses to replace anything but a
  // regular file (io/atomic_file.h), and checks again right before its rename.
  Tensor one = Tensor::from({1}, {1.0f});
  const fs::path path = dir_ / "latest.safetensors";
  fs::create_directories(path / "inside");
  EXPECT_THROW(write_safetensors(path, {}, {{"w", &one}}), InputError);
  EXPECT_TRUE(fs::is_directory(path / "inside"));
  EXPECT_TRUE(temp_files().empty());
}

TEST_F(SafetensorsTest, WriteFailingMidwayKeepsThePreviousFileAndRemovesTempFile) {
  // RLIMIT_FSIZE makes write() fail with EFBIG once the temp file passes 4 KiB, as a full
  // disk would (running as root defeats a read-only folder, not this).
  const fs::path path = dir_ / "latest.safetensors";
  Tensor small = Tensor::from({2}, {5.0f, 6.0f});
  write_safetensors(path, {{"step", "1"}}, {{"w", &small}});
  const std::string before = read_bytes(path);

  Tensor big = Tensor::full({4096}, 1.5f);  // 16 KiB of data
  struct rlimit old_limit {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit low_limit = old_limit;
  low_limit.rlim_cur = 4096;
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &low_limit), 0);
  std::string message;
  try {
    write_safetensors(path, {{"step", "2"}}, {{"w", &big}});
  } catch (const IoError& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(message, "cannot write " + path.string() + ": File too large");
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_TRUE(temp_files().empty());
  EXPECT_EQ(read_safetensors(path).metadata.at("step"), "1");
}
