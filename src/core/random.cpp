#include "core/random.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace mg {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

void Rng::seed_with(uint64_t seed) {
  uint64_t x = seed;
  for (auto& word : s_) word = splitmix64(x);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

uint64_t Rng::uniform_int(uint64_t bound) {
  MG_CHECK(bound > 0, "uniform_int needs a positive bound");
  // Reject the top sliver of the 64-bit range that would bias the modulo.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do x = next_u64();
  while (x >= limit);
  return x % bound;
}

double Rng::normal() {
  // 1 - uniform() lies in (0, 1], so the log is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::string Rng::state_string() const {
  std::ostringstream out;
  out << s_[0] << ',' << s_[1] << ',' << s_[2] << ',' << s_[3];
  return out.str();
}

void Rng::set_state_string(const std::string& text) {
  std::array<uint64_t, 4> words{};
  size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = text.find(',', pos);
    if ((i < 3) != (end != std::string::npos))
      throw InputError("malformed random-generator state \"" + text + "\"");
    std::string part = text.substr(pos, i < 3 ? end - pos : std::string::npos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("malformed random-generator state \"" + text + "\"");
    try {
      words[i] = std::stoull(part);
    } catch (const std::exception&) {
      throw InputError("malformed random-generator state \"" + text + "\"");
    }
    pos = end + 1;
  }
  if (words == std::array<uint64_t, 4>{}) throw InputError("random-generator state is all zero");
  s_ = words;
}

}  // namespace mg
