// Runs the fuzz target without libFuzzer, deterministically: every file of a corpus folder,
// then pseudo-random mutations of them from a fixed seed. Built with the project's own compiler
// (and sanitizers), so that CI exercises the decoder on every run.
//
//   fuzz_replay CORPUS_DIR [MUTATIONS=2000] [SEED=1]
//
// A failing input aborts the run (the harness prints why); TROUPE_FUZZ_SAVE=DIR also writes
// each mutated input to DIR before running it, so that the last file there is the culprit.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "remote/protocol/opcode.hpp"
#include "remote/protocol/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" void troupe_fuzz_stop_server();

namespace {

using bytes = std::vector<std::uint8_t>;

// splitmix64: small, and the same sequence on every platform and standard library.
class random_source {
 public:
  explicit random_source(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  /// Uniform enough in [0, bound); bound > 0.
  std::size_t below(std::size_t bound) { return static_cast<std::size_t>(next() % bound); }

 private:
  std::uint64_t state_;
};

// Values that sit on the decoder's edges: sizes, limits, id ranges, signs.
constexpr std::uint64_t interesting[] = {0,
                                         1,
                                         2,
                                         3,
                                         4,
                                         7,
                                         8,
                                         16,
                                         64,
                                         0x7f,
                                         0xff,
                                         0x100,
                                         0xffff,
                                         0x7fffffff,
                                         0x80000000,
                                         0xffffffff,
                                         troupe::remote::max_handshake_payload,
                                         troupe::remote::max_handshake_payload + 1,
                                         troupe::remote::max_chunk,
                                         troupe::remote::max_chunk + 1,
                                         troupe::remote::max_frame_payload,
                                         troupe::remote::max_frame_payload + 1,
                                         std::uint64_t{1} << 63,
                                         (std::uint64_t{1} << 63) + 1,
                                         (std::uint64_t{1} << 63) + 2,
                                         UINT64_MAX};

constexpr std::uint16_t opcodes[] = {1,  2,  3,  4,  10, 11, 12, 13, 14,  15,     16,    17, 18, 19,
                                     20, 21, 22, 23, 24, 25, 26, 27, 28,  29,     30,    31, 32, 33,
                                     34, 35, 36, 50, 51, 52, 53, 54, 55,  56,     57,    58, 59, 60,
                                     61, 62, 63, 64, 65, 66, 67, 68, 100, 0x8000, 0xffff};

// Offsets of the frame headers in an input (after its mode byte), as far as they chain.
std::vector<std::size_t> header_offsets(const bytes& input) {
  std::vector<std::size_t> offsets;
  std::size_t at = 1;
  while (at + sizeof(troupe::remote::frame_header) <= input.size()) {
    offsets.push_back(at);
    std::uint32_t size = 0;
    std::memcpy(&size, input.data() + at, sizeof size);
    at += sizeof(troupe::remote::frame_header) + size;
  }
  return offsets;
}

void mutate_once(bytes& input, const std::vector<bytes>& corpus, random_source& random) {
  if (input.size() < 2) {
    input.push_back(static_cast<std::uint8_t>(random.next()));
    return;
  }
  // Positions after the mode byte; the mode flips rarely, on its own.
  auto position = [&] { return 1 + random.below(input.size() - 1); };
  switch (random.below(10)) {
    case 0: {  // flip a bit
      input[position()] ^= static_cast<std::uint8_t>(1u << random.below(8));
      break;
    }
    case 1: {  // a random byte
      input[position()] = static_cast<std::uint8_t>(random.next());
      break;
    }
    case 2: {  // an interesting value, 1, 2, 4 or 8 bytes wide
      std::uint64_t value = interesting[random.below(std::size(interesting))];
      std::size_t width = std::size_t{1} << random.below(4);
      std::size_t at = position();
      std::size_t fits = std::min(width, input.size() - at);
      std::memcpy(input.data() + at, &value, fits);
      break;
    }
    case 3: {  // erase a range
      std::size_t at = position();
      std::size_t length = std::min(1 + random.below(64), input.size() - at);
      input.erase(input.begin() + static_cast<std::ptrdiff_t>(at),
                  input.begin() + static_cast<std::ptrdiff_t>(at + length));
      break;
    }
    case 4: {  // insert random bytes
      std::size_t at = position();
      bytes inserted(1 + random.below(32));
      for (auto& byte : inserted) byte = static_cast<std::uint8_t>(random.next());
      input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), inserted.begin(),
                   inserted.end());
      break;
    }
    case 5: {  // duplicate a range elsewhere
      std::size_t from = position();
      std::size_t length = std::min(1 + random.below(128), input.size() - from);
      bytes copy(input.begin() + static_cast<std::ptrdiff_t>(from),
                 input.begin() + static_cast<std::ptrdiff_t>(from + length));
      std::size_t to = position();
      input.insert(input.begin() + static_cast<std::ptrdiff_t>(to), copy.begin(), copy.end());
      break;
    }
    case 6: {  // splice: this input's start, another's end
      const bytes& other = corpus[random.below(corpus.size())];
      if (other.size() < 2) break;
      std::size_t cut = position();
      std::size_t from = 1 + random.below(other.size() - 1);
      input.resize(cut);
      input.insert(input.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      break;
    }
    case 7: {  // truncate
      input.resize(position());
      break;
    }
    default: {  // a header field of one frame: size, opcode, flags or sequence
      auto offsets = header_offsets(input);
      if (offsets.empty()) break;
      std::size_t at = offsets[random.below(offsets.size())];
      switch (random.below(4)) {
        case 0: {
          auto size = static_cast<std::uint32_t>(interesting[random.below(std::size(interesting))]);
          if (random.below(2) == 0) {
            std::uint32_t old = 0;
            std::memcpy(&old, input.data() + at, sizeof old);
            size = old + static_cast<std::uint32_t>(random.below(17)) - 8u;
          }
          std::memcpy(input.data() + at, &size, sizeof size);
          break;
        }
        case 1: {
          std::uint16_t op = opcodes[random.below(std::size(opcodes))];
          std::memcpy(input.data() + at + 4, &op, sizeof op);
          break;
        }
        case 2:
          input[at + 6] ^= static_cast<std::uint8_t>(troupe::remote::flag_reply);
          break;
        default: {
          auto sequence = static_cast<std::uint32_t>(random.next());
          std::memcpy(input.data() + at + 8, &sequence, sizeof sequence);
          break;
        }
      }
      break;
    }
  }
  if (random.below(64) == 0) input[0] ^= 1;
}

bytes read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

int run(const bytes& input) {
  return LLVMFuzzerTestOneInput(input.data(), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS=2000] [SEED=1]\n", argv[0]);
    return 2;
  }
  std::size_t mutations = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000;
  std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  const char* save = std::getenv("TROUPE_FUZZ_SAVE");

  std::vector<std::filesystem::path> paths;
  std::error_code unreadable;
  for (std::filesystem::directory_iterator entry(argv[1], unreadable), end;
       !unreadable && entry != end; entry.increment(unreadable)) {
    if (entry->is_regular_file()) paths.push_back(entry->path());
  }
  if (unreadable) {
    std::fprintf(stderr, "fuzz_replay: cannot read the corpus folder %s: %s\n", argv[1],
                 unreadable.message().c_str());
    return 1;
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) {
    std::fprintf(stderr, "fuzz_replay: no seeds in %s\n", argv[1]);
    return 1;
  }

  auto started = std::chrono::steady_clock::now();
  std::vector<bytes> corpus;
  std::size_t seeds_run = 0;
  for (const auto& path : paths) {
    corpus.push_back(read_file(path));
    if (std::getenv("TROUPE_FUZZ_VERBOSE") != nullptr) {
      std::fprintf(stderr, "%s\n", path.filename().c_str());
    }
    if (run(corpus.back()) == 0) ++seeds_run;
  }
  // A replay that ran nothing would pass whatever the server does.
  if (seeds_run == 0) {
    std::fprintf(stderr,
                 "fuzz_replay: none of the %zu seeds in %s ran (all skipped as too costly)\n",
                 paths.size(), argv[1]);
    return 1;
  }

  random_source random(seed);
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < mutations; ++i) {
    bytes input = corpus[random.below(corpus.size())];
    for (std::size_t steps = 1 + random.below(4); steps > 0; --steps) {
      mutate_once(input, corpus, random);
    }
    if (save != nullptr) {
      std::ofstream(std::filesystem::path(save) / ("mutation-" + std::to_string(i)),
                    std::ios::binary)
          .write(reinterpret_cast<const char*>(input.data()),
                 static_cast<std::streamsize>(input.size()));
    }
    if (run(input) != 0) ++skipped;
  }
  troupe_fuzz_stop_server();

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "fuzz_replay: %zu seeds (%zu ran) and %zu mutations (seed %llu, %zu skipped as too "
      "costly) in %.1f s\n",
      corpus.size(), seeds_run, mutations, static_cast<unsigned long long>(seed), skipped, seconds);
  if (mutations > 0 && skipped == mutations) {
    std::fprintf(stderr, "fuzz_replay: every mutation was skipped; nothing was fuzzed\n");
    return 1;
  }
  return 0;
}
