// Rng: the one pseudo-random generator of mini-gpt (xoshiro256**, seeded by splitmix64).
// Its whole state is four words, so a checkpoint can save it and a resumed run draws
// exactly the numbers the uninterrupted run would have drawn.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace mg {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { seed_with(seed); }
  void seed_with(uint64_t seed);

  uint64_t next_u64();
  double uniform();                       // [0, 1), 53 bits
  uint64_t uniform_int(uint64_t bound);   // [0, bound), unbiased; bound > 0
  double normal();                        // standard normal, Box-Muller (one draw per call)

  // The state as "w0,w1,w2,w3" in decimal, and back (InputError on a malformed string).
  std::string state_string() const;
  void set_state_string(const std::string& text);
  const std::array<uint64_t, 4>& state() const { return s_; }

 private:
  std::array<uint64_t, 4> s_{};
};

}  // namespace mg
