#include "troupe/kernel/portable_source.hpp"

namespace troupe::kernel {

namespace {

constexpr std::string_view opencl_prelude = R"(
#pragma OPENCL FP_CONTRACT OFF
#define KERNEL __kernel
#define FN
#define GLOBAL __global
#define SHARED __local
#define SHARED_PTR __local
#define THREAD_ID ((u32)get_local_id(0))
#define BLOCK_ID ((u32)get_group_id(0))
#define BLOCK_DIM ((u32)get_local_size(0))
#define GLOBAL_ID ((u32)get_global_id(0))
#define GRID_DIM ((u32)get_num_groups(0))
#define ATOMIC_ADD(pointer, value) atomic_add(pointer, value)
#define FADD(a, b) ((a) + (b))
#define FSUB(a, b) ((a) - (b))
#define FMUL(a, b) ((a) * (b))
#define SYNC_THREADS() barrier(CLK_LOCAL_MEM_FENCE)
#define u32 uint /* not a typedef: argument checks read the parameter's type name */
)";

constexpr std::string_view cuda_prelude = R"(
#define KERNEL extern "C" __global__
#define FN __device__
#define GLOBAL
#define SHARED __shared__
#define SHARED_PTR
#define THREAD_ID ((u32)threadIdx.x)
#define BLOCK_ID ((u32)blockIdx.x)
#define BLOCK_DIM ((u32)blockDim.x)
#define GLOBAL_ID ((u32)(blockIdx.x * blockDim.x + threadIdx.x))
#define GRID_DIM ((u32)gridDim.x)
#define ATOMIC_ADD(pointer, value) atomicAdd(pointer, value)
#define FADD(a, b) __fadd_rn(a, b)
#define FSUB(a, b) __fsub_rn(a, b)
#define FMUL(a, b) __fmul_rn(a, b)
#define SYNC_THREADS() __syncthreads()
typedef unsigned int u32;
)";

}  // namespace

source portable_source(std::string_view body, std::string options) {
  return source{std::string{opencl_prelude}.append(body), std::string{cuda_prelude}.append(body),
                std::move(options)};
}

}  // namespace troupe::kernel
