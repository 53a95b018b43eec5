#pragma once

// The fuzz input's frames, as the server will split them, and which of them ask for more work
// than a fuzzing run should do.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "remote/protocol/opcode.hpp"
#include "remote/protocol/wire.hpp"

namespace troupe::remote::fuzz {

struct request_frame {
  frame_header header;
  std::span<const std::byte> payload;
};

// The complete frames at the start of `bytes`, up to the first one the server refuses by its
// header alone (over the size limit) or that the input cuts short.
inline std::vector<request_frame> split_frames(std::span<const std::byte> bytes) {
  std::vector<request_frame> frames;
  while (bytes.size() >= sizeof(frame_header)) {
    frame_header header;
    std::memcpy(&header, bytes.data(), sizeof header);
    if (header.payload_size > max_frame_payload ||
        header.payload_size > bytes.size() - sizeof header) {
      break;
    }
    frames.push_back({header, bytes.subspan(sizeof header, header.payload_size)});
    bytes = bytes.subspan(sizeof header + header.payload_size);
  }
  return frames;
}

// True when a frame of the input asks for more work than a fuzzing run should do: a buffer or
// image of over 64 MiB, or a launch of over 2^20 work items. Fields are read as the server
// reads them; a frame too short to tell is not expensive (the server refuses it).
inline bool too_expensive(const std::vector<request_frame>& frames) {
  constexpr std::uint64_t max_bytes = 64u << 20;
  constexpr std::uint64_t max_items = 1u << 20;
  // a * b, saturated at 2^64 - 1.
  auto times = [](std::uint64_t a, std::uint64_t b) {
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
  };
  for (const auto& frame : frames) {
    reader in(frame.payload);
    try {
      switch (static_cast<opcode>(frame.header.opcode)) {
        case opcode::create_buffer: {
          for (int i = 0; i < 3; ++i) in.get<std::uint64_t>();  // id, context, flags
          if (in.get<std::uint64_t>() > max_bytes) return true;
          break;
        }
        case opcode::create_image: {
          for (int i = 0; i < 3; ++i) in.get<std::uint64_t>();  // id, context, flags
          for (int i = 0; i < 3; ++i) in.get<std::uint32_t>();  // order, data type, image type
          std::uint64_t bytes = 16;                             // the largest element
          for (int i = 0; i < 4; ++i)
            bytes = times(bytes, std::max<std::uint64_t>(1, in.get<std::uint64_t>()));
          if (bytes > max_bytes) return true;
          break;
        }
        case opcode::ndrange_kernel: {
          in.get<std::uint64_t>();  // queue
          in.get_bytes();           // wait list
          in.get<std::uint64_t>();  // event
          in.get<std::uint64_t>();  // kernel
          in.get<std::uint32_t>();  // dimensions
          in.get_bytes();           // offsets
          std::uint64_t items = 1;
          for (auto size : in.get_array<std::uint64_t>()) items = times(items, size);
          if (items > max_items) return true;
          break;
        }
        default:
          break;
      }
    } catch (const decode_error&) {
    }
  }
  return false;
}

// True when a frame of the input compiles or links a program, or loads a binary: PoCL takes
// milliseconds for each, a thousand times what a frame costs otherwise. A run after executions
// rather than the compiler's paths skips these inputs (TROUPE_FUZZ_NO_BUILDS).
inline bool compiles(const std::vector<request_frame>& frames) {
  for (const auto& frame : frames) {
    switch (static_cast<opcode>(frame.header.opcode)) {
      case opcode::create_program_with_binary:
      case opcode::build_program:
      case opcode::compile_program:
      case opcode::link_program:
        return true;
      default:
        break;
    }
  }
  return false;
}

}  // namespace troupe::remote::fuzz
