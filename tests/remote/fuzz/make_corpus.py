#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_server_frames (corpus/*.bin).

Each seed is one fuzz input: a mode byte, then frames as docs/remote-protocol.md lays them out.
Mode 0: the harness opens a session (hello, attach) and writes the frames to the request
connection; mode 1: the frames are the first bytes of a fresh connection (the handshake).

The ids the server hands out are predictable in a fresh session: get_platforms names the first
platform 2^63, and get_device_ids then names its first device 2^63 + 1. Client ids are small.

    python3 make_corpus.py [OUTPUT_DIR]   (default: corpus/ next to this script)
"""

import os
import struct
import sys

# Opcodes (src/remote/protocol/opcode.hpp).
HELLO, ATTACH, PING, FENCE = 1, 2, 3, 4
(GET_PLATFORMS, GET_DEVICE_IDS, CREATE_SUB_DEVICES, CREATE_CONTEXT, CREATE_CONTEXT_FROM_TYPE,
 CREATE_QUEUE, CREATE_BUFFER, CREATE_SUB_BUFFER, CREATE_IMAGE, GET_SUPPORTED_IMAGE_FORMATS,
 CREATE_SAMPLER, CREATE_PROGRAM_WITH_SOURCE, CREATE_PROGRAM_WITH_BINARY,
 CREATE_PROGRAM_WITH_BUILTIN_KERNELS, BUILD_PROGRAM, COMPILE_PROGRAM, LINK_PROGRAM,
 UNLOAD_PLATFORM_COMPILER, CREATE_KERNEL, CREATE_KERNELS_IN_PROGRAM, SET_KERNEL_ARG,
 CREATE_USER_EVENT, SET_USER_EVENT_STATUS, SET_EVENT_CALLBACK, WAIT_FOR_EVENTS, RELEASE,
 GET_INFO) = range(10, 37)
(FLUSH, FINISH, READ_BUFFER, WRITE_BUFFER, READ_BUFFER_RECT, WRITE_BUFFER_RECT, FILL_BUFFER,
 COPY_BUFFER, COPY_BUFFER_RECT, READ_IMAGE, WRITE_IMAGE, FILL_IMAGE, COPY_IMAGE,
 COPY_IMAGE_TO_BUFFER, COPY_BUFFER_TO_IMAGE, NDRANGE_KERNEL, MARKER, BARRIER,
 MIGRATE_MEM_OBJECTS) = range(50, 69)

# info_query
Q_PLATFORM, Q_DEVICE, Q_CONTEXT, Q_QUEUE, Q_MEM, Q_IMAGE, Q_SAMPLER, Q_PROGRAM = range(1, 9)
Q_PROGRAM_BUILD, Q_KERNEL, Q_KERNEL_WORK_GROUP, Q_KERNEL_ARG, Q_EVENT, Q_EVENT_PROFILING = \
    range(9, 15)

# argument_form
ARG_BYTES, ARG_MEM, ARG_SAMPLER = 0, 1, 2

FLAG_REPLY = 1
FLAG_REPLY_ON_COMPLETION = 2
MAGIC = 0x45505254
VERSION = 4  # protocol_version, src/remote/protocol/wire.hpp

# OpenCL values (CL/cl.h).
CL_PLATFORM_VERSION, CL_PLATFORM_NAME = 0x0901, 0x0902
CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_ALL = 1 << 1, 0xFFFFFFFF
CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_NAME, CL_DEVICE_PLATFORM = 0x1002, 0x102B, 0x1031
CL_DEVICE_PARENT_DEVICE = 0x1042
CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS = 0x1086, 0x1087
CL_CONTEXT_DEVICES, CL_CONTEXT_PLATFORM, CL_CONTEXT_INTEROP_USER_SYNC = 0x1081, 0x1084, 0x1085
CL_QUEUE_CONTEXT, CL_QUEUE_DEVICE = 0x1090, 0x1091
CL_QUEUE_PROFILING_ENABLE = 1 << 1
CL_MEM_READ_WRITE, CL_MEM_COPY_HOST_PTR = 1, 1 << 5
CL_MEM_SIZE, CL_MEM_CONTEXT, CL_MEM_ASSOCIATED_MEMOBJECT = 0x1102, 0x1106, 0x1107
CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE1D = 0x10F1, 0x10F4
CL_RGBA, CL_UNORM_INT8 = 0x10B5, 0x10D2
CL_IMAGE_ELEMENT_SIZE = 0x1111
CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, CL_SAMPLER_CONTEXT = 0x1131, 0x1140, 0x1151
CL_PROGRAM_CONTEXT, CL_PROGRAM_DEVICES, CL_PROGRAM_BINARIES = 0x1161, 0x1163, 0x1166
CL_PROGRAM_BUILD_STATUS, CL_PROGRAM_BUILD_LOG = 0x1181, 0x1183
CL_KERNEL_FUNCTION_NAME, CL_KERNEL_NUM_ARGS = 0x1190, 0x1191
CL_KERNEL_CONTEXT, CL_KERNEL_PROGRAM = 0x1193, 0x1194
CL_KERNEL_ARG_ADDRESS_QUALIFIER, CL_KERNEL_WORK_GROUP_SIZE = 0x1196, 0x11B0
CL_EVENT_COMMAND_QUEUE, CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D0, 0x11D3
CL_EVENT_CONTEXT, CL_PROFILING_COMMAND_QUEUED = 0x11D4, 0x1280
CL_COMPLETE = 0
CL_MIGRATE_MEM_OBJECT_HOST = 1

# Ids: the server's for the first platform and device, the client's for what it creates.
PLATFORM = 1 << 63
DEVICE = PLATFORM + 1
CONTEXT, QUEUE, BUFFER, BUFFER2, IMAGE, IMAGE2, SAMPLER = 1, 2, 3, 4, 5, 6, 7
PROGRAM, KERNEL, USER_EVENT, EVENT, EVENT2, PROGRAM2 = 8, 9, 10, 11, 12, 13

KERNEL_SOURCE = ("__kernel void k(__global int* p, int a, __local int* l, sampler_t s) {}\n"
                 "__kernel void k2(int a) {}\n"
                 "__kernel void k3(__read_only image2d_t i, sampler_t s, long v) {}\n")


# Field encoders (little-endian; strings, byte strings and arrays carry a u64 length).
def u8(v): return struct.pack("<B", v)
def u16(v): return struct.pack("<H", v)
def u32(v): return struct.pack("<I", v & 0xFFFFFFFF)
def i32(v): return struct.pack("<i", v)
def u64(v): return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)
def i64(v): return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)  # two's complement
def blob(data): return u64(len(data)) + data
def text(s): return blob(s.encode())
def ids(values): return blob(b"".join(u64(v) for v in values))


# A build's includes from the client's -I folders: [[(name, contents), ...], ...].
def includes(folders=(), over_limit=False):
    out = u8(1 if over_limit else 0) + u32(len(folders))
    for files in folders:
        out += u32(len(files)) + b"".join(text(name) + text(body) for name, body in files)
    return out
def i64s(values): return blob(b"".join(i64(v) for v in values))
def u64s(values): return blob(b"".join(u64(v) for v in values))
def triple(a, b, c): return u64(a) + u64(b) + u64(c)


class frames:
    """A fuzz input: the mode byte, then frames with increasing sequence numbers."""

    def __init__(self, mode=0):
        self.data = bytearray(u8(mode))
        self.sequence = 0

    def add(self, op, payload=b"", reply=True, sequence=None, on_completion=False):
        if sequence is None:
            self.sequence += 1
            sequence = self.sequence
        flags = FLAG_REPLY if reply else 0
        if on_completion:
            flags |= FLAG_REPLY_ON_COMPLETION
        self.data += struct.pack("<IHHII", len(payload), op, flags, sequence, 0) + payload
        return self

    def raw(self, data):
        self.data += data
        return self


def command(queue=QUEUE, wait=(), event=0):
    """The fields every enqueue starts with."""
    return u64(queue) + ids(wait) + u64(event)


def info(query, param, subject, extra=0):
    return u8(query) + u32(param) + u64(subject) + u64(extra)


def with_device(f):
    return f.add(GET_PLATFORMS).add(GET_DEVICE_IDS, u64(PLATFORM) + u64(CL_DEVICE_TYPE_ALL))


def with_context(f):
    with_device(f)
    f.add(CREATE_CONTEXT, u64(CONTEXT) + i64s([CL_CONTEXT_PLATFORM, PLATFORM, 0]) + ids([DEVICE]))
    return f


def with_queue(f, properties=0):
    with_context(f)
    return f.add(CREATE_QUEUE, u64(QUEUE) + u64(CONTEXT) + u64(DEVICE) + u64(properties))


def with_buffers(f):
    with_queue(f)
    f.add(CREATE_BUFFER, u64(BUFFER) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR)
          + u64(64) + blob(bytes(range(64))))
    f.add(CREATE_BUFFER, u64(BUFFER2) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE) + u64(64) + blob(b""))
    return f


def with_images(f):
    with_buffers(f)
    image = (u64(CL_MEM_READ_WRITE) + u32(CL_RGBA) + u32(CL_UNORM_INT8) + u32(CL_MEM_OBJECT_IMAGE2D)
             + u64(4) + u64(4) + u64(0) + u64(0) + u64(0) + u64(0) + u64(0))
    f.add(CREATE_IMAGE, u64(IMAGE) + u64(CONTEXT) + image + blob(bytes(64)))
    f.add(CREATE_IMAGE, u64(IMAGE2) + u64(CONTEXT) + image + blob(b""))
    return f


def with_program(f):
    with_queue(f)
    f.add(CREATE_PROGRAM_WITH_SOURCE, u64(PROGRAM) + u64(CONTEXT) + text(KERNEL_SOURCE))
    f.add(BUILD_PROGRAM, u64(PROGRAM) + ids([DEVICE]) + text("-cl-kernel-arg-info") + includes())
    return f


def seeds():
    s = {}

    # Session and framing.
    s["ping"] = frames().add(PING)
    s["ping_pipelined"] = frames().add(PING, reply=False).add(PING)
    s["fence"] = frames().add(PING, reply=False).add(FENCE, u32(1) + u32(1)).add(
        FENCE, u32(7) + u32(100)).add(PING)
    s["deferred_error"] = frames().add(RELEASE, u64(99), reply=False).add(PING)
    s["unknown_opcode"] = frames().add(PING).add(0x7777).add(PING)
    s["trailing_bytes"] = frames().add(PING, b"\x00").add(PING)
    s["short_header"] = frames().add(PING).raw(b"\x08\x00\x00\x00\x03\x00")

    # Platforms and devices.
    s["get_platforms"] = frames().add(GET_PLATFORMS)
    f = frames().add(GET_PLATFORMS)
    for param in (CL_PLATFORM_NAME, CL_PLATFORM_VERSION):
        f.add(GET_INFO, info(Q_PLATFORM, param, PLATFORM))
    s["platform_info"] = f
    f = with_device(frames())
    for param in (CL_DEVICE_PLATFORM, CL_DEVICE_PARENT_DEVICE, CL_DEVICE_MAX_COMPUTE_UNITS,
                  CL_DEVICE_NAME):
        f.add(GET_INFO, info(Q_DEVICE, param, DEVICE))
    s["device_info"] = f
    f = with_device(frames())
    f.add(CREATE_SUB_DEVICES, u64(DEVICE) + i64s([CL_DEVICE_PARTITION_EQUALLY, 1]))
    f.add(CREATE_SUB_DEVICES, u64(DEVICE) + i64s([CL_DEVICE_PARTITION_BY_COUNTS, 1, 1]))
    f.add(GET_INFO, info(Q_DEVICE, CL_DEVICE_PARENT_DEVICE, DEVICE + 1))
    f.add(RELEASE, u64(DEVICE + 1), reply=False).add(PING)
    s["sub_devices"] = f
    f = with_device(frames())
    f.add(UNLOAD_PLATFORM_COMPILER, u64(PLATFORM))
    s["unload_compiler"] = f

    # Contexts and queues.
    f = with_context(frames())
    f.add(GET_INFO, info(Q_CONTEXT, CL_CONTEXT_DEVICES, CONTEXT))
    f.add(CREATE_CONTEXT_FROM_TYPE, u64(20) + i64s([CL_CONTEXT_PLATFORM, PLATFORM,
                                                    CL_CONTEXT_INTEROP_USER_SYNC, 1, 0])
          + u64(CL_DEVICE_TYPE_CPU))
    f.add(CREATE_CONTEXT, u64(CONTEXT) + i64s([]) + ids([DEVICE]))  # id in use
    f.add(RELEASE, u64(20))
    s["context"] = f
    f = with_queue(frames(), CL_QUEUE_PROFILING_ENABLE)
    f.add(GET_INFO, info(Q_QUEUE, CL_QUEUE_CONTEXT, QUEUE))
    f.add(GET_INFO, info(Q_QUEUE, CL_QUEUE_DEVICE, QUEUE))
    f.add(FLUSH, u64(QUEUE)).add(FINISH, u64(QUEUE))
    s["queue"] = f

    # Buffers and their commands.
    f = with_buffers(frames())
    f.add(WRITE_BUFFER, command(event=EVENT) + u64(BUFFER) + u8(0) + u64(8) + blob(b"\x01" * 16),
          reply=False)
    f.add(READ_BUFFER, command(wait=[EVENT]) + u64(BUFFER) + u64(0) + u64(64))
    f.add(FILL_BUFFER, command() + u64(BUFFER2) + blob(b"\xab\xcd\xef\x01") + u64(0) + u64(64),
          reply=False)
    f.add(COPY_BUFFER, command(event=EVENT2) + u64(BUFFER) + u64(BUFFER2) + u64(0) + u64(32)
          + u64(16), reply=False)
    f.add(WRITE_BUFFER, command() + u64(BUFFER2) + u8(1) + u64(0) + blob(b"\x02" * 8))
    f.add(FINISH, u64(QUEUE))
    f.add(GET_INFO, info(Q_EVENT, CL_EVENT_COMMAND_EXECUTION_STATUS, EVENT2))
    f.add(GET_INFO, info(Q_MEM, CL_MEM_SIZE, BUFFER))
    f.add(GET_INFO, info(Q_MEM, CL_MEM_CONTEXT, BUFFER))
    f.add(RELEASE, u64(EVENT), reply=False).add(RELEASE, u64(EVENT2))
    s["buffer_commands"] = f
    f = with_buffers(frames())
    f.add(WRITE_BUFFER_RECT, command() + u64(BUFFER) + u8(1) + triple(1, 1, 0) + triple(2, 2, 1)
          + u64(8) + u64(64) + blob(b"\x07" * 4))
    f.add(READ_BUFFER_RECT, command() + u64(BUFFER) + triple(0, 0, 0) + triple(4, 2, 1) + u64(8)
          + u64(64))
    f.add(COPY_BUFFER_RECT, command() + u64(BUFFER) + u64(BUFFER2) + triple(0, 0, 0)
          + triple(0, 1, 0) + triple(4, 2, 1) + u64(8) + u64(64) + u64(8) + u64(64))
    f.add(MIGRATE_MEM_OBJECTS, command() + ids([BUFFER, BUFFER2]) + u64(CL_MIGRATE_MEM_OBJECT_HOST))
    f.add(FINISH, u64(QUEUE))
    s["buffer_rect"] = f
    # Rectangles past the end of their 64-byte buffers (the fuzzer's first find: PoCL copied
    # one, reading past the buffer): each is refused, and nothing reaches the platform.
    f = with_buffers(frames())
    f.add(COPY_BUFFER_RECT, command() + u64(BUFFER) + u64(BUFFER2) + triple(0, 7, 0)
          + triple(0, 0, 0) + triple(8, 2, 1) + u64(8) + u64(64) + u64(8) + u64(64))
    f.add(COPY_BUFFER_RECT, command() + u64(BUFFER) + u64(BUFFER2) + triple(0, 0, 0)
          + triple(0, 0, 1) + triple(8, 2, 1) + u64(8) + u64(16) + u64(8) + u64(64))
    f.add(READ_BUFFER_RECT, command() + u64(BUFFER) + triple(60, 0, 0) + triple(8, 1, 1) + u64(0)
          + u64(0))
    f.add(WRITE_BUFFER_RECT, command() + u64(BUFFER) + u8(1) + triple(0, 0, 0) + triple(4, 2, 1)
          + u64(64) + u64(0) + blob(b"\x07" * 8))
    f.add(COPY_BUFFER_RECT, command() + u64(BUFFER) + u64(BUFFER) + triple(0, 0, 0)
          + triple(2, 0, 0) + triple(4, 2, 1) + u64(8) + u64(16) + u64(8) + u64(16))
    f.add(FINISH, u64(QUEUE))
    s["rect_past_the_end"] = f
    # Spans and image regions whose size wraps around (the fuzzer's second and third finds: PoCL
    # copied a 2 x 2 x (2^63 + 1) region of a 4 x 4 image into a 64-byte buffer).
    f = with_images(frames())
    f.add(COPY_IMAGE_TO_BUFFER, command() + u64(IMAGE) + u64(BUFFER2) + triple(0, 0, 0)
          + triple(2, 2, (1 << 63) + 1) + u64(0))
    f.add(COPY_BUFFER_TO_IMAGE, command() + u64(BUFFER) + u64(IMAGE2) + u64(0) + triple(0, 0, 0)
          + triple(2, 2, (1 << 63) + 1))
    f.add(COPY_IMAGE, command() + u64(IMAGE) + u64(IMAGE2) + triple(3, 0, 0) + triple(0, 0, 0)
          + triple(2, 1, 1))
    f.add(READ_IMAGE, command() + u64(IMAGE) + triple(1 << 62, 0, 0) + triple(4, 4, 1))
    f.add(FILL_BUFFER, command() + u64(BUFFER) + blob(b"\x01") + u64((1 << 64) - 8) + u64(16))
    f.add(COPY_BUFFER, command() + u64(BUFFER) + u64(BUFFER2) + u64((1 << 64) - 8) + u64(0)
          + u64(16))
    f.add(FINISH, u64(QUEUE))
    s["regions_that_wrap"] = f
    # A sub-buffer past its parent, whose origin and size wrap around (found in review: PoCL
    # made one), then a read of it.
    f = with_buffers(frames())
    f.add(CREATE_SUB_BUFFER, u64(30) + u64(BUFFER) + u64(CL_MEM_READ_WRITE) + u64(128)
          + u64((1 << 64) - 64))
    f.add(READ_BUFFER, command() + u64(30) + u64(0) + u64(4096))
    f.add(FINISH, u64(QUEUE))
    s["sub_buffer_that_wraps"] = f
    # A 1D image whose row pitch reaches past its initial contents (the fuzzer's fourth find:
    # PoCL read the whole pitch).
    f = with_queue(frames())
    f.add(CREATE_IMAGE, u64(IMAGE) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR)
          + u32(CL_RGBA) + u32(CL_UNORM_INT8) + u32(CL_MEM_OBJECT_IMAGE1D) + u64(4) + u64(0)
          + u64(0) + u64(0) + u64(16384) + u64(0) + u64(0) + blob(bytes(64)))
    s["image_pitch_past_its_contents"] = f
    f = with_buffers(frames())
    f.add(CREATE_SUB_BUFFER, u64(30) + u64(BUFFER) + u64(CL_MEM_READ_WRITE) + u64(0) + u64(32))
    f.add(GET_INFO, info(Q_MEM, CL_MEM_ASSOCIATED_MEMOBJECT, 30))
    f.add(READ_BUFFER, command() + u64(30) + u64(0) + u64(32))
    f.add(RELEASE, u64(30)).add(RELEASE, u64(BUFFER))
    f.add(READ_BUFFER, command() + u64(BUFFER) + u64(0) + u64(8))  # released: refused
    s["sub_buffer"] = f

    # Images and samplers.
    f = with_images(frames())
    f.add(GET_SUPPORTED_IMAGE_FORMATS, u64(CONTEXT) + u64(CL_MEM_READ_WRITE)
          + u32(CL_MEM_OBJECT_IMAGE2D))
    f.add(GET_INFO, info(Q_IMAGE, CL_IMAGE_ELEMENT_SIZE, IMAGE))
    f.add(WRITE_IMAGE, command() + u64(IMAGE) + u8(1) + triple(0, 0, 0) + triple(2, 2, 1)
          + blob(b"\x10" * 16))
    f.add(READ_IMAGE, command() + u64(IMAGE) + triple(0, 0, 0) + triple(4, 4, 1))
    f.add(FILL_IMAGE, command() + u64(IMAGE2) + blob(bytes(16)) + triple(0, 0, 0)
          + triple(4, 4, 1), reply=False)
    f.add(COPY_IMAGE, command() + u64(IMAGE) + u64(IMAGE2) + triple(0, 0, 0) + triple(1, 1, 0)
          + triple(2, 2, 1), reply=False)
    f.add(COPY_IMAGE_TO_BUFFER, command() + u64(IMAGE) + u64(BUFFER2) + triple(0, 0, 0)
          + triple(2, 2, 1) + u64(0), reply=False)
    f.add(COPY_BUFFER_TO_IMAGE, command() + u64(BUFFER) + u64(IMAGE2) + u64(0) + triple(0, 0, 0)
          + triple(2, 2, 1), reply=False)
    f.add(FINISH, u64(QUEUE))
    f.add(CREATE_SAMPLER, u64(SAMPLER) + u64(CONTEXT) + u32(1) + u32(CL_ADDRESS_CLAMP_TO_EDGE)
          + u32(CL_FILTER_NEAREST))
    f.add(GET_INFO, info(Q_SAMPLER, CL_SAMPLER_CONTEXT, SAMPLER))
    s["images"] = f

    # Programs and kernels.
    f = with_program(frames())
    f.add(GET_INFO, info(Q_PROGRAM_BUILD, CL_PROGRAM_BUILD_STATUS, PROGRAM, DEVICE))
    f.add(GET_INFO, info(Q_PROGRAM_BUILD, CL_PROGRAM_BUILD_LOG, PROGRAM, DEVICE))
    f.add(GET_INFO, info(Q_PROGRAM, CL_PROGRAM_DEVICES, PROGRAM))
    f.add(GET_INFO, info(Q_PROGRAM, CL_PROGRAM_BINARIES, PROGRAM))
    f.add(CREATE_KERNELS_IN_PROGRAM, u64(PROGRAM) + u8(1))
    f.add(CREATE_KERNELS_IN_PROGRAM, u64(PROGRAM) + u8(0))
    s["program_build"] = f
    f = with_program(frames())
    with_buffers_tail = (CREATE_BUFFER, u64(BUFFER) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE)
                         + u64(64) + blob(b""))
    f.add(*with_buffers_tail)
    f.add(CREATE_SAMPLER, u64(SAMPLER) + u64(CONTEXT) + u32(0) + u32(CL_ADDRESS_CLAMP_TO_EDGE)
          + u32(CL_FILTER_NEAREST))
    f.add(CREATE_KERNEL, u64(KERNEL) + u64(PROGRAM) + text("k"))
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(0) + u8(ARG_MEM) + u64(BUFFER), reply=False)
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(1) + u8(ARG_BYTES) + u64(4) + u8(1) + blob(i32(7)),
          reply=False)
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(2) + u8(ARG_BYTES) + u64(64) + u8(0) + blob(b""),
          reply=False)
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(3) + u8(ARG_SAMPLER) + u64(SAMPLER), reply=False)
    f.add(NDRANGE_KERNEL, command(event=EVENT) + u64(KERNEL) + u32(1) + u64s([]) + u64s([16])
          + u64s([]), reply=False)
    f.add(NDRANGE_KERNEL, command(wait=[EVENT]) + u64(KERNEL) + u32(2) + u64s([0, 0])
          + u64s([4, 4]) + u64s([2, 2]), reply=False)
    f.add(FINISH, u64(QUEUE))
    f.add(GET_INFO, info(Q_KERNEL, CL_KERNEL_FUNCTION_NAME, KERNEL))
    f.add(GET_INFO, info(Q_KERNEL, CL_KERNEL_PROGRAM, KERNEL))
    f.add(GET_INFO, info(Q_KERNEL_WORK_GROUP, CL_KERNEL_WORK_GROUP_SIZE, KERNEL, DEVICE))
    f.add(GET_INFO, info(Q_KERNEL_ARG, CL_KERNEL_ARG_ADDRESS_QUALIFIER, KERNEL, 2))
    f.add(GET_INFO, info(Q_EVENT, CL_EVENT_COMMAND_QUEUE, EVENT))
    f.add(RELEASE, u64(KERNEL)).add(RELEASE, u64(PROGRAM))
    s["kernel_launch"] = f
    f = with_queue(frames())
    f.add(CREATE_PROGRAM_WITH_SOURCE, u64(PROGRAM) + u64(CONTEXT)
          + text("int twice(int x) { return 2 * x; }\n"))
    f.add(CREATE_PROGRAM_WITH_SOURCE, u64(PROGRAM2) + u64(CONTEXT)
          + text('#include "twice.h"\n__kernel void t(__global int* p) {}\n'))
    f.add(COMPILE_PROGRAM, u64(PROGRAM2) + ids([DEVICE]) + text("") + includes() + ids([PROGRAM])
          + text("twice.h"))
    f.add(LINK_PROGRAM, u64(20) + u64(CONTEXT) + ids([DEVICE]) + text("") + ids([PROGRAM2]))
    f.add(CREATE_KERNEL, u64(KERNEL) + u64(20) + text("t"))
    f.add(CREATE_PROGRAM_WITH_SOURCE, u64(21) + u64(CONTEXT) + text("this is not OpenCL C"))
    f.add(BUILD_PROGRAM, u64(21) + ids([]) + text("") + includes())
    f.add(GET_INFO, info(Q_PROGRAM_BUILD, CL_PROGRAM_BUILD_LOG, 21, DEVICE))
    s["compile_link"] = f
    # Builds with files of -I folders: nested and in order, then names the server refuses.
    f = with_queue(frames())
    f.add(CREATE_PROGRAM_WITH_SOURCE, u64(PROGRAM) + u64(CONTEXT)
          + text('#include "a.h"\n#include <sub/b.h>\n__kernel void k(__global int* p) '
                 '{ p[0] = A + B; }\n'))
    f.add(BUILD_PROGRAM, u64(PROGRAM) + ids([DEVICE]) + text("-DX")
          + includes([[("a.h", "#define A 1\n"), ("sub/b.h", '#include "c.h"\n'),
                       ("sub/c.h", "#define B 2\n")], [("a.h", "#define A 9\n")]]))
    f.add(GET_INFO, info(Q_PROGRAM_BUILD, CL_PROGRAM_BUILD_STATUS, PROGRAM, DEVICE))
    f.add(BUILD_PROGRAM, u64(PROGRAM) + ids([DEVICE]) + text("")
          + includes([[("../a.h", "#define A 1\n")]]))
    f.add(BUILD_PROGRAM, u64(PROGRAM) + ids([DEVICE]) + text("")
          + includes([[("/tmp/a.h", "#define A 1\n")]]))
    f.add(BUILD_PROGRAM, u64(PROGRAM) + ids([DEVICE]) + text("")
          + includes([[("a.h", '#include "/etc/hostname"\n')]]))
    f.add(BUILD_PROGRAM, u64(PROGRAM) + ids([DEVICE]) + text("") + includes(over_limit=True))
    f.add(GET_INFO, info(Q_PROGRAM_BUILD, CL_PROGRAM_BUILD_LOG, PROGRAM, DEVICE))
    s["build_includes"] = f
    f = with_queue(frames())
    f.add(CREATE_PROGRAM_WITH_BINARY, u64(PROGRAM) + u64(CONTEXT) + ids([DEVICE])
          + blob(b"POCLBIN\x00" + bytes(range(56))))
    f.add(CREATE_PROGRAM_WITH_BUILTIN_KERNELS, u64(PROGRAM2) + u64(CONTEXT) + ids([DEVICE])
          + text("no_such_kernel"))
    s["program_binary"] = f

    # Events.
    f = with_queue(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(SET_EVENT_CALLBACK, u64(USER_EVENT) + i32(CL_COMPLETE) + u64(77), reply=False)
    f.add(MARKER, command(wait=[USER_EVENT], event=EVENT), reply=False)
    f.add(BARRIER, command(event=EVENT2), reply=False)
    f.add(GET_INFO, info(Q_EVENT, CL_EVENT_COMMAND_EXECUTION_STATUS, EVENT))
    f.add(SET_USER_EVENT_STATUS, u64(USER_EVENT) + i32(CL_COMPLETE))
    f.add(WAIT_FOR_EVENTS, ids([EVENT, EVENT2]))
    f.add(GET_INFO, info(Q_EVENT, CL_EVENT_CONTEXT, USER_EVENT))
    f.add(GET_INFO, info(Q_EVENT_PROFILING, CL_PROFILING_COMMAND_QUEUED, EVENT))
    f.add(RELEASE, u64(USER_EVENT), reply=False).add(RELEASE, u64(EVENT), reply=False)
    f.add(RELEASE, u64(EVENT2))
    s["events"] = f
    f = with_queue(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(SET_USER_EVENT_STATUS, u64(USER_EVENT) + i32(-5))
    f.add(MARKER, command(wait=[USER_EVENT], event=EVENT))
    f.add(MARKER, command(wait=[99], event=EVENT2), reply=False)  # a failed event stands in
    f.add(WAIT_FOR_EVENTS, ids([EVENT2]))
    f.add(FINISH, u64(QUEUE))
    s["failed_events"] = f

    # PoCL 3.1 aborts when a marker whose event is released sees its wait list fail; the server
    # holds such events (session::hold_until_complete).
    f = with_queue(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(MARKER, command(wait=[USER_EVENT]), reply=False)
    f.add(BARRIER, command(wait=[USER_EVENT]), reply=False)
    f.add(SET_USER_EVENT_STATUS, u64(USER_EVENT) + i32(-5))
    f.add(FINISH, u64(QUEUE))
    s["marker_behind_failure"] = f
    f = with_queue(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(MARKER, command(wait=[USER_EVENT], event=PLATFORM), reply=False)  # id out of range
    f.add(SET_USER_EVENT_STATUS, u64(USER_EVENT) + i32(-5))
    s["marker_bad_event_id"] = f
    # Arguments by kind: bytes never reach OpenCL as a handle, handles only where their kind goes.
    f = with_program(frames())
    f.add(CREATE_BUFFER, u64(BUFFER) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE) + u64(64) + blob(b""))
    f.add(CREATE_IMAGE, u64(IMAGE) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE) + u32(CL_RGBA)
          + u32(CL_UNORM_INT8) + u32(CL_MEM_OBJECT_IMAGE2D) + u64(4) + u64(4) + u64(0) + u64(0)
          + u64(0) + u64(0) + u64(0) + blob(b""))
    f.add(CREATE_SAMPLER, u64(SAMPLER) + u64(CONTEXT) + u32(0) + u32(CL_ADDRESS_CLAMP_TO_EDGE)
          + u32(CL_FILTER_NEAREST))
    f.add(CREATE_KERNEL, u64(KERNEL) + u64(PROGRAM) + text("k"))
    f.add(CREATE_KERNEL, u64(20) + u64(PROGRAM) + text("k3"))

    def arg_bytes(kernel, index, value, size=None, has=1):
        size = len(value) if size is None else size
        return u64(kernel) + u32(index) + u8(ARG_BYTES) + u64(size) + u8(has) + blob(value)
    f.add(SET_KERNEL_ARG, arg_bytes(KERNEL, 0, u64(0x4141414141414141)))  # bytes as a buffer
    f.add(SET_KERNEL_ARG, arg_bytes(KERNEL, 0, u64(0)))                   # a null buffer
    f.add(SET_KERNEL_ARG, arg_bytes(KERNEL, 0, b"\x41\x41\x41"))          # wrong size
    f.add(SET_KERNEL_ARG, arg_bytes(KERNEL, 3, u64(0)))                   # a null sampler
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(3) + u8(ARG_MEM) + u64(BUFFER))
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(0) + u8(ARG_SAMPLER) + u64(SAMPLER))
    f.add(SET_KERNEL_ARG, u64(20) + u32(0) + u8(ARG_MEM) + u64(BUFFER))  # a buffer as an image
    f.add(SET_KERNEL_ARG, arg_bytes(20, 0, u64(0)))                      # a null image
    f.add(SET_KERNEL_ARG, u64(20) + u32(0) + u8(ARG_MEM) + u64(IMAGE))
    f.add(SET_KERNEL_ARG, u64(20) + u32(1) + u8(ARG_SAMPLER) + u64(SAMPLER))
    f.add(SET_KERNEL_ARG, arg_bytes(20, 2, u64(0x4141414141414141)))     # a long
    f.add(NDRANGE_KERNEL, command() + u64(20) + u32(1) + u64s([]) + u64s([4]) + u64s([]))
    f.add(FINISH, u64(QUEUE))
    s["argument_kinds"] = f
    # PoCL 3.1 asserts on a launch over the device's local memory (check_local_memory).
    f = with_program(frames())
    f.add(CREATE_KERNEL, u64(KERNEL) + u64(PROGRAM) + text("k"))
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(0) + u8(ARG_BYTES) + u64(8) + u8(1) + blob(bytes(8)),
          reply=False)
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(1) + u8(ARG_BYTES) + u64(4) + u8(1) + blob(i32(7)),
          reply=False)
    f.add(SET_KERNEL_ARG, u64(KERNEL) + u32(2) + u8(ARG_BYTES) + u64(64 << 20) + u8(0) + blob(b""),
          reply=False)
    f.add(NDRANGE_KERNEL, command() + u64(KERNEL) + u32(1) + u64s([]) + u64s([4]) + u64s([]))
    f.add(FINISH, u64(QUEUE))
    s["local_memory_over"] = f
    # Initial contents shorter than the image: the server must not copy past them.
    f = with_buffers(frames())
    f.add(CREATE_IMAGE, u64(IMAGE) + u64(CONTEXT) + u64(CL_MEM_READ_WRITE) + u32(CL_RGBA)
          + u32(CL_UNORM_INT8) + u32(CL_MEM_OBJECT_IMAGE2D) + u64(256) + u64(256) + u64(0) + u64(0)
          + u64(1024) + u64(0) + u64(0) + blob(bytes(64)))
    f.add(READ_IMAGE, command() + u64(IMAGE) + triple(0, 0, 0) + triple(4, 4, 1))
    s["image_contents_short"] = f
    # A wait that only the session's end can release: the server fails the user event then.
    f = with_queue(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(MARKER, command(wait=[USER_EVENT], event=EVENT), reply=False)
    f.add(WAIT_FOR_EVENTS, ids([EVENT]))
    s["wait_forever"] = f
    # Reads answered on completion: one behind a user event set later, one that fails at
    # once, a rect and an image read; their replies may overtake or follow the others.
    f = with_buffers(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(READ_BUFFER, command(wait=[USER_EVENT], event=EVENT) + u64(BUFFER) + u64(0) + u64(64),
          on_completion=True)
    f.add(READ_BUFFER, command() + u64(BUFFER) + u64(1 << 40) + u64(8), on_completion=True)
    f.add(GET_INFO, info(Q_EVENT, CL_EVENT_COMMAND_EXECUTION_STATUS, EVENT))
    f.add(SET_USER_EVENT_STATUS, u64(USER_EVENT) + i32(0))
    f.add(READ_BUFFER_RECT, command() + u64(BUFFER) + triple(0, 0, 0) + triple(4, 2, 1) + u64(8)
          + u64(64), on_completion=True)
    f.add(FINISH, u64(QUEUE))
    s["reads_on_completion"] = f
    f = with_images(frames())
    f.add(READ_IMAGE, command() + u64(IMAGE) + triple(0, 0, 0) + triple(4, 4, 1),
          on_completion=True)
    f.add(FINISH, u64(QUEUE))
    s["image_read_on_completion"] = f
    # Never set: the session's end fails the user event, and the read's reply is dropped.
    f = with_buffers(frames())
    f.add(CREATE_USER_EVENT, u64(USER_EVENT) + u64(CONTEXT))
    f.add(READ_BUFFER, command(wait=[USER_EVENT]) + u64(BUFFER) + u64(0) + u64(64),
          on_completion=True)
    s["read_on_completion_never_due"] = f

    # Handshakes (mode 1): the frames are a connection's first bytes.
    hello = u32(MAGIC) + u16(VERSION) + text("")
    s["hs_hello"] = frames(1).add(HELLO, hello, sequence=0)
    s["hs_hello_then_request"] = frames(1).add(HELLO, hello, sequence=0).add(PING)
    s["hs_old_version"] = frames(1).add(HELLO, u32(MAGIC) + u16(0) + text(""), sequence=0)
    s["hs_bad_magic"] = frames(1).add(HELLO, u32(0x12345678) + u16(VERSION) + text(""), sequence=0)
    s["hs_attach_unknown"] = frames(1).add(ATTACH, hello + u64(1) + u64(2) + u64(3), sequence=0)
    s["hs_request_first"] = frames(1).add(GET_PLATFORMS)
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, f in sorted(seeds().items()):
        with open(os.path.join(out, name + ".bin"), "wb") as file:
            file.write(bytes(f.data))


if __name__ == "__main__":
    main()
