"""An unmodified pyopencl program on troupe's remote platform (run by run_with_server.sh).

A vector add and two reductions (one with local memory, one by pyopencl's ReductionKernel when
Mako is installed), each checked with numpy. Exits 77 (skipped) when pyopencl or numpy is
missing.
"""
import sys

try:
    import numpy as np
    import pyopencl as cl
except ImportError as error:
    print(f"pyopencl not installed in build/venv; run ./setup which creates it ({error})")
    sys.exit(77)

SOURCE = """
__kernel void add(__global const float* a, __global const float* b, __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void partial_sums(__global const int* in, __global long* out, __local long* scratch,
                           uint n) {
  size_t lid = get_local_id(0), i = get_global_id(0);
  scratch[lid] = i < n ? in[i] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
"""


def main():
    # troupe's platforms keep their servers' names; cl_troupe_remote marks them.
    platforms = [p for p in cl.get_platforms() if "cl_troupe_remote" in p.extensions.split()]
    if not platforms:
        print("no troupe platform; platforms: " + ", ".join(p.name for p in cl.get_platforms()))
        return 1
    platform = platforms[0]
    device = platform.get_devices()[0]
    print(f"platform: {platform.name}")
    print(f"device: {device.name}")
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    flags = cl.mem_flags
    random = np.random.default_rng(7)

    n = 1_000_003
    a = random.random(n, dtype=np.float32)
    b = random.random(n, dtype=np.float32)
    a_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a)
    b_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=b)
    c_buffer = cl.Buffer(context, flags.WRITE_ONLY, a.nbytes)
    program.add(queue, (n,), None, a_buffer, b_buffer, c_buffer)
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, c_buffer)
    if not np.array_equal(c, a + b):
        print("vector add: wrong result")
        return 1
    print("vector add: ok")

    values = random.integers(-1000, 1000, size=n, dtype=np.int32)
    group = 256
    groups = (n + group - 1) // group
    in_buffer = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=values)
    out_buffer = cl.Buffer(context, flags.WRITE_ONLY, groups * 8)
    program.partial_sums(queue, (groups * group,), (group,), in_buffer, out_buffer,
                         cl.LocalMemory(group * 8), np.uint32(n))
    partial = np.empty(groups, dtype=np.int64)
    cl.enqueue_copy(queue, partial, out_buffer)
    expected = int(values.astype(np.int64).sum())
    if int(partial.sum()) != expected:
        print(f"local-memory reduction: {int(partial.sum())}, expected {expected}")
        return 1
    print("local-memory reduction: ok")

    try:  # pyopencl's kernel generators need Mako, which is optional
        import pyopencl.array
        import pyopencl.reduction
    except ImportError as error:
        print(f"ReductionKernel: not checked ({error.__class__.__name__}: Mako is missing)")
        return 0
    squares = pyopencl.reduction.ReductionKernel(
        context, np.int64, neutral="0", reduce_expr="a+b", map_expr="(long)x[i]*x[i]",
        arguments="__global const int *x")
    got = int(squares(pyopencl.array.to_device(queue, values)).get())
    expected = int((values.astype(np.int64) ** 2).sum())
    if got != expected:
        print(f"ReductionKernel: {got}, expected {expected}")
        return 1
    print("ReductionKernel: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
