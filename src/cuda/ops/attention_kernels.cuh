#pragma once
// Device code of the fused attention family. One warp owns a (node, head) item; the warp is cut
// into EPW = 32/LPE groups of LPE lanes, each group walks every EPW-th edge of the node's list
// and each lane holds CPT consecutive channels of the head (so C <= LPE*CPT; VEC = exact fit and
// 16-byte aligned rows, loaded as packs). Groups keep their own online-softmax state (forward) or
// partial sums (backward) and merge with shuffles at the end. Heavy nodes (degree above a
// threshold) are walked by all warps of a block and merged through shared memory. The three
// kernels take the layer kind (GAT: GATv2, else the Graph Transformer) as a template parameter, so
// each holds only its kind's rows in registers (with_kind in attention_launch.cuh says why).
//
// Edge features (EDGE kernels): each entry's projection eh = W edge_attr_k is computed where it is
// used (the group loads the entry's features once and hands them out by shuffles; W is staged
// transposed, D x H*C, in shared memory when it fits), and never stored. The sources pass turns
// the entry's gradient g = d loss / d eh into dedge_attr (W^T g, atomics over the heads) and
// dedge_weight (g edge_attr^T, in per-thread shared-memory slots flushed once per warp and head).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "tessera/core/dtype.hpp"
#include "tessera/ops/attention.hpp"

namespace tessera::ops::cuda_attention {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarpsPerBlock = 8;

// Blocks per SM each kernel is compiled for (__launch_bounds__' second argument); measured for f32
// and f16/bf16 (f64: not measured, no bound). f16/bf16 rows of 8 channels per lane (one 16-byte
// pack: C = 64 at 8 lanes per entry, C = 128 at 16, C = 256 at 32) took 135-152 registers, 1 block
// (8 warps) per SM, in every pass; bounded to 2 they fit 128 with at most 4 bytes of spills (H200,
// same call, R-MAT 2^20 f16 Transformer op forward 4x64 19.2 -> 10.2 ms, 8x128 57.5 -> 30.9; the
// layer's fwd+bwd 4x64 60.4 -> 35.2 ms, 8x128 183.8 -> 106.6; grid 4x64 28.1 -> 17.3). With edge
// features the 16-bit kernels take the f32 bounds below (the same scalar configurations, fp32
// accumulators): the forward at 8 channels per lane (C = 256: 156 registers) bounded to 2 (~100
// bytes of spills; R-MAT 2x256 edge_dim 8 forward GATv2 231.6 -> 187.0 ms, Transformer 143.6 ->
// 97.2), at 2 per lane (C = 64) 84 -> 64 registers, targets pass 87 -> 80; the backward passes of
// 8 channels per lane take 171-202 registers, unbounded. f32 without edge features: rows of up to 4
// channels per lane (C = 64, 128) need 75-80 registers, which leaves 3 blocks (24 warps) per SM;
// bounded to 4 blocks they fit 64 registers with up to ~80 bytes of spills, and the latency-bound
// walks gain more from the extra warps than the spills cost (H200, same run, the backward: targets
// / sources passes of the R-MAT 4x64 Transformer 18.9 / 20.4 -> 17.0 / 18.9 ms, of the grid 8x128
// 15.1 / 15.2 -> 10.7 / 12.3 ms); 8 channels per lane (C = 256, and the forward's head groups) fit
// 128 registers, 2 blocks; the forward bounded to 3 fits 80 without spills (exact rows; the guarded
// ones spill 8-24 bytes), where at 2 it took 83 and so ran 16 warps per SM, latency-bound (ncu,
// grid GATv2 4x64 head groups: 0.9 eligible warps per scheduler, none in 43% of cycles); at 3 the
// GATv2 forward took 3.32 -> 3.10 ms there and 6.98 -> 5.95 ms on R-MAT 2^20 (H200,
// bench/results/h200_20261205b). With
// edge features (0.5-1.1 KB of spills at 64 registers for 4 channels per lane) the bounds only keep
// the occupancy the kernels had before the work-queue schedule (for_each_item) added its state:
// forward 4 blocks up to 2 channels per lane (64 -> 84 registers without), 2 up to 8 (128 -> 154);
// targets pass 3 up to 2 channels (79 -> 87).
enum class Pass { forward, targets, sources };
template <class T, int CPT, bool EDGE, Pass P>
constexpr int min_blocks() {
  if constexpr (sizeof(T) == 2 && !EDGE) return CPT == 8 ? 2 : 1;
  else if constexpr (sizeof(T) == 8) return 1;
  else if constexpr (!EDGE) return CPT <= 4 ? 4 : CPT == 8 ? (P == Pass::forward ? 3 : 2) : 1;
  else if constexpr (P == Pass::forward) return CPT <= 2 ? 4 : CPT <= 8 ? 2 : 1;
  else if constexpr (P == Pass::targets) return CPT <= 2 ? 3 : 1;
  else return 1;
}

template <class T> struct dev_type { using type = T; };
template <> struct dev_type<half_t> { using type = __half; };
template <> struct dev_type<bf16_t> { using type = __nv_bfloat16; };

__device__ __forceinline__ float to_acc(float x) { return x; }
__device__ __forceinline__ double to_acc(double x) { return x; }
__device__ __forceinline__ float to_acc(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T, class Acc>
__device__ __forceinline__ T from_acc(Acc x) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(float(x));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(float(x));
  else return T(x);
}

__device__ __forceinline__ float dexp(float x) { return expf(x); }
__device__ __forceinline__ double dexp(double x) { return exp(x); }
__device__ __forceinline__ float dlog(float x) { return logf(x); }
__device__ __forceinline__ double dlog(double x) { return log(x); }
template <class Acc> __device__ __forceinline__ Acc neg_inf() { return -INFINITY; }

template <class T, int CPT>
struct alignas(CPT * sizeof(T) >= 16 ? 16 : CPT * sizeof(T)) Pack {
  T v[CPT];
};

// Channels c0 .. c0+CPT-1 of a head row (zeros past C).
template <class T, class Acc, int CPT, bool VEC>
__device__ __forceinline__ void load_row(Acc (&r)[CPT], const T* row, int c0, int C) {
  if constexpr (VEC) {
    const Pack<T, CPT> pk = *reinterpret_cast<const Pack<T, CPT>*>(row + c0);
#pragma unroll
    for (int t = 0; t < CPT; ++t) r[t] = Acc(to_acc(pk.v[t]));
  } else {
#pragma unroll
    for (int t = 0; t < CPT; ++t) r[t] = c0 + t < C ? Acc(to_acc(row[c0 + t])) : Acc(0);
  }
}
// The Transformer's value row. Multi-query kernels (MQ) take the key's registers when the value is
// the key (the folded TransformerConv attends over x_src as both: one load per entry instead of
// two); every other kernel loads it, with the code it had before multi-query attention existed.
template <bool MQ, class T, class Acc, int CPT, bool VEC>
__device__ __forceinline__ void load_value(Acc (&r)[CPT], const Acc (&key)[CPT], bool value_is_key, const T* row,
                                           int c0, int C) {
  if constexpr (MQ) {
    if (value_is_key) {
#pragma unroll
      for (int t = 0; t < CPT; ++t) r[t] = key[t];
      return;
    }
  }
  load_row<T, Acc, CPT, VEC>(r, row, c0, C);
}
template <class T, class Acc, int CPT, bool VEC>
__device__ __forceinline__ void store_row(T* row, const Acc (&r)[CPT], int c0, int C) {
  if constexpr (VEC) {
    Pack<T, CPT> pk;
#pragma unroll
    for (int t = 0; t < CPT; ++t) pk.v[t] = from_acc<T>(r[t]);
    *reinterpret_cast<Pack<T, CPT>*>(row + c0) = pk;
  } else {
#pragma unroll
    for (int t = 0; t < CPT; ++t)
      if (c0 + t < C) row[c0 + t] = from_acc<T>(r[t]);
  }
}
template <class Acc, int CPT>
__device__ __forceinline__ void zero(Acc (&r)[CPT]) {
#pragma unroll
  for (int t = 0; t < CPT; ++t) r[t] = Acc(0);
}

// Sum over the LPE lanes of a group (xor offsets stay inside the group).
template <int LPE, class Acc>
__device__ __forceinline__ Acc group_sum(Acc x) {
#pragma unroll
  for (int off = LPE / 2; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  return x;
}
// Sum of the groups' partial vectors: afterwards every group holds the warp's total.
template <int LPE, class Acc, int CPT>
__device__ __forceinline__ void merge_groups_sum(Acc (&r)[CPT]) {
#pragma unroll
  for (int off = LPE; off < 32; off <<= 1)
#pragma unroll
    for (int t = 0; t < CPT; ++t) r[t] += __shfl_xor_sync(kFull, r[t], off);
}

// Light items a warp takes from the queue at a time (consecutive nodes, one head): few enough that
// the last grabs even out the warps' finishing times (a light item is at most the heavy threshold
// of entries), many enough that the queue's one counter sees a grab per 4 items (R-MAT 2^20, 4
// heads: 1M grabs over ~10 ms). Small walks take fewer (Params::grab, set by launch_items).
constexpr int kItemsPerGrab = 4;
static_assert(kItemsPerGrab < 32, "for_each_item reads a grab's items + 1 row bounds with one lane each");

template <class T, class I, class Acc>
struct Params {  // the layer kind is the kernels' template flag GAT, not a field
  int64_t nodes = 0;           // items are (node, head): targets (forward, pass 1) or sources
  int H = 1, C = 0;
  const I* ptr = nullptr;      // the walk: A (forward, pass 1), transpose or A (pass 2)
  const I* idx = nullptr;
  const I* perm = nullptr;     // pass 2: edge position of each entry (null: symmetric walk)
  const T* q = nullptr; int64_t ldq = 0;
  const T* k = nullptr; int64_t ldk = 0;
  const T* v = nullptr; int64_t ldv = 0;   // GATv2: equals k
  const Acc* att = nullptr;
  Acc slope = 0, scale = 1;
  uint64_t seed = 0; uint32_t threshold = 0; Acc keep_scale = 1;
  T* out = nullptr; int64_t ldo = 0;
  const Acc* out_bias = nullptr;  // forward: H*C values added to every out row (null: none)
  Acc* lse = nullptr;
  Acc* alpha = nullptr; bool alpha_after_dropout = false;
  const T* o = nullptr; int64_t ldO = 0;   // backward: the forward's output
  const T* dO = nullptr; int64_t lddO = 0;
  T* dq = nullptr; int64_t lddq = 0;
  T* dk = nullptr; int64_t lddk = 0;
  T* dv = nullptr; int64_t lddv = 0;
  Acc* datt = nullptr;
  Acc* lse_delta = nullptr;     // backward: (lse, Delta) per (target, head), one 8/16-byte load in pass 2
  bool datt_in_smem = false;
  // Edge features (EDGE kernels only): edge_attr (nnz x D) and W = edge_weight (H*C x D).
  const T* ea = nullptr; int64_t lde = 0;
  const T* ew = nullptr; int64_t ldw = 0;
  int D = 0;
  bool w_in_smem = false;      // W staged transposed (D x H*C, Acc) at the start of shared memory
  Acc* dea = nullptr;          // backward: dedge_attr accumulated over the heads (nnz x D, contiguous)
  Acc* dew = nullptr;          // backward: dedge_weight (H*C x D)
  bool dw_in_smem = false;     // sources pass: per-thread dedge_weight slots after W (edge_smem_elems)
  int64_t heavy_threshold = 0;
  const int64_t* heavy_list = nullptr;  // null: no heavy phase
  const int* heavy_count = nullptr;
  unsigned* queue = nullptr;           // next heavy item, next light grab, -, blocks done (zero at the launch)
  int grab = kItemsPerGrab;            // light items per grab, 1 .. kItemsPerGrab
  // Multi-query kernels: the value is the key (same rows), loaded once. Last, in the struct's tail
  // padding, so that the other kernels' parameter layout is what it was before.
  bool value_is_key = false;
  // Forward: a row added to each out row in the same write (AttentionArgs::residual; null: none).
  // In the tail too, for the same reason.
  const T* res = nullptr; int64_t ldr = 0;
};

template <class T, class I, class Acc>
__device__ __forceinline__ Acc dropout_factor(const Params<T, I, Acc>& p, int64_t edge, int h) {
  if (p.threshold == 0 || edge < 0) return Acc(1);
  return attention_dropout_keep(p.seed, uint64_t(edge), uint64_t(h), p.threshold) ? p.keep_scale : Acc(0);
}

template <class Acc> struct Pair;
template <> struct Pair<float> { using type = float2; };
template <> struct Pair<double> { using type = double2; };

// Per-lane part of the logit between a target row (tr) and a source row (sr).
template <bool GAT, class Acc, int CPT>
__device__ __forceinline__ Acc logit_part(const Acc (&tr)[CPT], const Acc (&sr)[CPT], const Acc (&ar)[CPT],
                                          Acc slope) {
  Acc x = 0;
  if constexpr (GAT) {
#pragma unroll
    for (int t = 0; t < CPT; ++t) {
      const Acc z = tr[t] + sr[t];
      x += ar[t] * (z > 0 ? z : slope * z);
    }
  } else {
#pragma unroll
    for (int t = 0; t < CPT; ++t) x += tr[t] * sr[t];
  }
  return x;
}

// Shared-memory elements (Acc) of the EDGE kernels: the staged W (a multiple of 4, so what
// follows stays 16-byte aligned) and, in the sources pass, each thread's private CPT x D slots of
// dedge_weight (slot (d*CPT + t) * threads + thread: no atomics, no bank conflicts).
template <int CPT, class P>
__host__ __device__ inline int64_t edge_smem_elems(const P& p, bool sources) {
  const int64_t w = p.w_in_smem ? (int64_t(p.D) * p.H * p.C + 3) / 4 * 4 : 0;
  return w + (sources && p.dw_in_smem ? int64_t(kWarpsPerBlock) * 32 * CPT * p.D : 0);
}

// Stages W transposed (wt[d * H*C + hc]) when it fits and zeroes the dedge_weight slots; every
// thread of the block calls it before its first item. Returns the staged W (null: read W from
// global memory) and sets dwl to the slots (null: atomics on dedge_weight per entry).
template <int CPT, class T, class I, class Acc>
__device__ __forceinline__ const Acc* stage_edge_weight(const Params<T, I, Acc>& p, Acc* smem, bool sources,
                                                        Acc*& dwl) {
  const int HC = p.H * p.C, n = p.D * HC;
  const Acc* wt = p.w_in_smem ? smem : nullptr;
  if (wt)
    for (int x = threadIdx.x; x < n; x += blockDim.x) {
      const int d = x / HC, hc = x - d * HC;
      smem[x] = Acc(to_acc(p.ew[int64_t(hc) * p.ldw + d]));
    }
  dwl = sources && p.dw_in_smem ? smem + (wt ? (n + 3) / 4 * 4 : 0) : nullptr;
  if (dwl)
    for (int x = threadIdx.x; x < int(blockDim.x) * CPT * p.D; x += blockDim.x) dwl[x] = Acc(0);
  __syncthreads();
  return wt;
}

template <class T, class I, class Acc>
__device__ __forceinline__ Acc edge_weight_at(const Params<T, I, Acc>& p, const Acc* wt, int d, int hc) {
  return wt ? wt[d * p.H * p.C + hc] : Acc(to_acc(p.ew[int64_t(hc) * p.ldw + d]));
}

// Features d0 .. d0+LPE-1 of entry e, one per lane of the group (one coalesced load; zeros past D
// and for lanes past the row's end), to be handed out by shuffles.
template <int LPE, class T, class I, class Acc>
__device__ __forceinline__ Acc edge_attr_chunk(const Params<T, I, Acc>& p, int64_t e, bool valid, int d0) {
  const int d = d0 + int(threadIdx.x % LPE);
  return valid && d < p.D ? Acc(to_acc(p.ea[e * p.lde + d])) : Acc(0);
}

// eh = (W edge_attr_e) for this lane's channels c0.. of head h (zeros past C, and for lanes past
// the row's end). Called by every lane of the warp (shuffles).
template <int LPE, class T, class I, class Acc, int CPT>
__device__ __forceinline__ void project_edge(Acc (&eh)[CPT], const Params<T, I, Acc>& p, const Acc* wt,
                                             int64_t e, bool valid, int h, int c0) {
  zero(eh);
  for (int d0 = 0; d0 < p.D; d0 += LPE) {
    const Acc mine = edge_attr_chunk<LPE>(p, e, valid, d0);
    const int n = min(LPE, p.D - d0);
    for (int dd = 0; dd < n; ++dd) {
      const Acc x = __shfl_sync(kFull, mine, dd, LPE);
#pragma unroll
      for (int t = 0; t < CPT; ++t)
        if (c0 + t < p.C) eh[t] += edge_weight_at(p, wt, d0 + dd, h * p.C + c0 + t) * x;
    }
  }
}

// The entry's share of the edge-feature gradients from g = d loss / d eh (this lane's channels of
// head h; zero for lanes past the row's end): dedge_attr_e += W_h^T g (a group sum per feature,
// then one coalesced atomic add per chunk: every head adds to the same entry) and this thread's
// dedge_weight slots += g edge_attr_e^T (or atomics on dedge_weight when the slots did not fit).
// Called by every lane of the warp (shuffles).
template <int LPE, class T, class I, class Acc, int CPT>
__device__ __forceinline__ void edge_gradients(const Params<T, I, Acc>& p, const Acc* wt, Acc* dwl,
                                               const Acc (&g)[CPT], bool valid, int64_t e, int h, int c0) {
  const int r = int(threadIdx.x % LPE);
  for (int d0 = 0; d0 < p.D; d0 += LPE) {
    const Acc mine = edge_attr_chunk<LPE>(p, e, valid, d0);
    const int n = min(LPE, p.D - d0);
    Acc dea = 0;
    for (int dd = 0; dd < n; ++dd) {
      const int d = d0 + dd;
      const Acc x = __shfl_sync(kFull, mine, dd, LPE);
      Acc part = 0;
#pragma unroll
      for (int t = 0; t < CPT; ++t)
        if (c0 + t < p.C) {
          part += edge_weight_at(p, wt, d, h * p.C + c0 + t) * g[t];
          if (dwl) dwl[(d * CPT + t) * int(blockDim.x) + int(threadIdx.x)] += g[t] * x;
          else if (valid) atomicAdd(p.dew + int64_t(h * p.C + c0 + t) * p.D + d, g[t] * x);
        }
      part = group_sum<LPE>(part);
      if (r == dd) dea = part;
    }
    if (valid && r < n) atomicAdd(p.dea + e * p.D + d0 + r, dea);
  }
}

// Adds this warp's dedge_weight slots (head h) into dedge_weight, summed over the warp's groups,
// and clears them. Called by every lane of the warp when its head changes and at the end.
template <int LPE, int CPT, class T, class I, class Acc>
__device__ __forceinline__ void flush_edge_weight_grad(const Params<T, I, Acc>& p, Acc* dwl, int h, int c0) {
  for (int d = 0; d < p.D; ++d)
#pragma unroll
    for (int t = 0; t < CPT; ++t) {
      Acc& slot = dwl[(d * CPT + t) * int(blockDim.x) + int(threadIdx.x)];
      Acc v = slot;
      slot = Acc(0);
#pragma unroll
      for (int off = LPE; off < 32; off <<= 1) v += __shfl_xor_sync(kFull, v, off);
      if (threadIdx.x % 32 < LPE && c0 + t < p.C && v != Acc(0))
        atomicAdd(p.dew + int64_t(h * p.C + c0 + t) * p.D + d, v);
    }
}

// Calls body(heavy, node, h, begin, end, first, step) for the items this warp takes part in. The
// blocks are persistent and take their work from two counters: first the heavy items (nodes above
// the heavy threshold, one (node, head) per block at a time, the block's warps each starting at
// their own offset), then the light ones (Params::grab nodes of one head per warp at a time,
// heavy nodes skipped). A static split by item index left the SMs idle 35-37% of the light
// kernels' time on R-MAT (ncu: SM active cycles 63% of elapsed; one warp's share of a
// heavy-tailed degree sequence is uneven), and a separate heavy launch ran at 2 blocks per SM after
// the light one instead of alongside it. Items go head by head, so a warp's head rarely changes
// (the edge kernels' dedge_weight slots hold one head). Which warp runs an item does not change
// its arithmetic: results do not depend on the schedule. With HG > 1 (the forward's head groups)
// an item spans HG heads and h is the group's index; with ALL_HEADS (the multi-query sources pass)
// an item is a node with all its heads, and h is 0.
template <int EPW, int HG = 1, bool ALL_HEADS = false, class P, class F>
__device__ __forceinline__ void for_each_item(const P& p, F&& body) {
  __shared__ unsigned next_heavy;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const unsigned groups = ALL_HEADS ? 1u : unsigned(p.H / HG);
  if (p.heavy_list) {
    const unsigned count = unsigned(*p.heavy_count), n = count * groups;
    for (;;) {
      if (threadIdx.x == 0) next_heavy = atomicAdd(&p.queue[0], 1u);
      __syncthreads();
      const unsigned it = next_heavy;
      __syncthreads();
      if (it >= n) break;
      const int64_t node = p.heavy_list[it % count];
      const int64_t b = p.ptr[node], e = p.ptr[node + 1];
      body(true, node, int(it / count), b, e, b + int64_t(warp) * EPW, int64_t(nwarps) * EPW);
    }
  }
  const int grab = p.grab;
  const unsigned per_head = unsigned((p.nodes + grab - 1) / grab), n = per_head * groups;
  unsigned c = __shfl_sync(kFull, lane == 0 ? atomicAdd(&p.queue[1], 1u) : 0u, 0);
  while (c < n) {
    // The next grab is in flight while this one runs (its value is first read by the shuffle).
    const unsigned next = lane == 0 ? atomicAdd(&p.queue[1], 1u) : 0u;
    const int h = int(c / per_head);
    const int64_t node0 = int64_t(c % per_head) * grab;
    const int64_t node1 = node0 + grab < p.nodes ? node0 + grab : p.nodes;
    // The grab's row bounds in one load (lane l holds ptr[node0 + l]) and shuffles, not a load of
    // ptr ahead of each node's walk: forward 1-5% faster on the 2^20-node graphs, backward flat
    // (H200, bench/results/h200_20261204; the kernels are issue-bound, so a saved load counts
    // only as its instructions, not as the latency it put in front of a short walk).
    using Index = std::remove_cv_t<std::remove_pointer_t<decltype(p.ptr)>>;  // int32 graphs: one register
    const Index bound = lane <= node1 - node0 ? p.ptr[node0 + lane] : Index(0);
    for (int64_t node = node0; node < node1; ++node) {
      const int k = int(node - node0);
      const int64_t b = __shfl_sync(kFull, bound, k), e = __shfl_sync(kFull, bound, k + 1);
      if (e - b > p.heavy_threshold) continue;
      body(false, node, h, b, e, b, int64_t(EPW));
    }
    c = __shfl_sync(kFull, next, 0);
  }
  // The last block to finish hands the two counters back zeroed, so that a schedule kept across
  // calls (attention_schedule.hpp) needs no clearing launch before its next kernel on the stream.
  // Every other block has made its last take from them when it counts itself done.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&p.queue[3], 1u) == gridDim.x - 1) {
      p.queue[0] = 0u;
      p.queue[1] = 0u;
      p.queue[3] = 0u;
    }
  }
}

// Sums a per-warp vector over the block's warps through shared memory (heavy mode); every warp
// ends with the total. scratch holds nwarps * LPE*CPT accumulators.
template <int LPE, int CPT, class Acc>
__device__ __forceinline__ void block_sum(Acc (&r)[CPT], Acc* scratch) {
  constexpr int CP = LPE * CPT;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const int g = lane / LPE, c0 = (lane % LPE) * CPT;
  if (g == 0)
#pragma unroll
    for (int t = 0; t < CPT; ++t) scratch[warp * CP + c0 + t] = r[t];
  __syncthreads();
  zero(r);
  for (int w = 0; w < nwarps; ++w)
#pragma unroll
    for (int t = 0; t < CPT; ++t) r[t] += scratch[w * CP + c0 + t];
  __syncthreads();
}

// ---------------------------------------------------------------------------------------------
// Forward: out, lse (and alpha when asked) per (target, head).
//
// Head groups (HG > 1; no edge features, exact vectorized rows): an item is (target, HG
// consecutive heads), the group's LPE lanes span the HG heads' rows (HG * C = LPE * CPT channels,
// contiguous in q, k, v, att and out) and each head's logit is summed over its SEG = LPE / HG
// lanes. A step then gathers one entry's rows for all HG heads, where one head per item walked
// the entry list (indices, row bounds, softmax bookkeeping, the groups' merge) H times, two
// entries of one head per step at C = 64: on a grid (5 entries per row) 3 steps of which one half
// idle, per head (H200, layer forward: grid GATv2 4x64 4.43 -> 3.32 ms, clustered 2.54 -> 1.90,
// R-MAT 7.75 -> 6.98; bench/results/h200_20261205). The online-softmax state (m, s) is per lane, so
// per head as it is.
template <class T, class I, class Acc, int CPT, int LPE, bool VEC, bool EDGE, bool GAT, int HG = 1, bool MQ = false>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, (min_blocks<T, CPT, EDGE, Pass::forward>()))
forward_kernel(const Params<T, I, Acc> p) {
  static_assert(!MQ || (!GAT && !EDGE), "multi-query: the Transformer without edge features");
  static_assert(HG == 1 || (!EDGE && VEC && LPE % HG == 0), "head groups: exact rows without edge features");
  constexpr int EPW = 32 / LPE, CP = LPE * CPT, SEG = LPE / HG;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* smem = reinterpret_cast<Acc*>(smem_raw);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane / LPE, c0 = (lane % LPE) * CPT;
  const int C = p.C * HG;                  // channels of an item (its heads' rows side by side)
  const int hl = (lane % LPE) / SEG;       // this lane's head within the item
  const Acc ninf = neg_inf<Acc>();
  const Acc* wt = nullptr;
  if constexpr (EDGE) {
    Acc* unused;
    wt = stage_edge_weight<CPT>(p, smem, false, unused);
    smem += edge_smem_elems<CPT>(p, false);
  }
  for_each_item<EPW, HG>(p, [&](bool heavy, int64_t i, int hg, int64_t b, int64_t end, int64_t first,
                               int64_t step) {
    const int h = hg * HG + hl;  // the lane's head (hg: the item's head group)
    Acc qr[CPT], ar[CPT];
    load_row<T, Acc, CPT, VEC>(qr, p.q + i * p.ldq + int64_t(hg) * C, c0, C);
    zero(ar);
    if (GAT)
#pragma unroll
      for (int t = 0; t < CPT; ++t) ar[t] = c0 + t < C ? p.att[hg * C + c0 + t] : Acc(0);
    Acc m = ninf, s = 0, acc[CPT];
    zero(acc);
    // Software pipeline: a group loads the source rows of its next entry (key, and the
    // Transformer's value with it) before it reduces this entry's logit, so two entries' gathers
    // are in flight per group instead of one, and the value no longer waits for the logit.
    auto fetch = [&](int64_t e, Acc (&kr)[CPT], Acc (&vr)[CPT]) {
      if (e < end) {
        const int64_t j = p.idx[e];
        // Key and value columns of the item: its heads' slices side by side, or, shared by the
        // heads (MQ), the one slice at every head's lanes (c0 - hl*C: the lane's channel in its head).
        load_row<T, Acc, CPT, VEC>(kr, p.k + j * p.ldk + (MQ ? -int64_t(hl) * p.C : int64_t(hg) * C), c0, C);
        if (!GAT)
          load_value<MQ, T, Acc, CPT, VEC>(vr, kr, p.value_is_key,
                                           p.v + j * p.ldv + (MQ ? -int64_t(hl) * p.C : int64_t(hg) * C), c0, C);
      } else {
        zero(kr);
        zero(vr);
      }
    };
    Acc kr[CPT], vr[CPT];
    fetch(first + g, kr, vr);
    for (int64_t e0 = first; e0 < end; e0 += step) {
      const int64_t e = e0 + g;
      const bool valid = e < end;
      Acc kn[CPT], vn[CPT], eh[CPT];
      fetch(e + step, kn, vn);
      zero(eh);
      if constexpr (EDGE) project_edge<LPE>(eh, p, wt, e, valid, h, c0);
      Acc ke[CPT];  // the logit's source operand: key (+ eh)
#pragma unroll
      for (int t = 0; t < CPT; ++t) ke[t] = EDGE ? kr[t] + eh[t] : kr[t];  // (x + 0 is not x for x = -0)
      Acc l = group_sum<SEG>(logit_part<GAT>(qr, ke, ar, p.slope));
      if (!GAT) l *= p.scale;
      if (valid) {
        if (l > m) {  // new running max: rescale what was accumulated
          const Acc corr = m == ninf ? Acc(0) : dexp(m - l);
          s *= corr;
#pragma unroll
          for (int t = 0; t < CPT; ++t) acc[t] *= corr;
          m = l;
        }
        const Acc pe = dexp(l - m);
        s += pe;
        const Acc w = pe * dropout_factor(p, e, h);
        if (w != Acc(0)) {
          if (GAT) {
#pragma unroll
            for (int t = 0; t < CPT; ++t) acc[t] += w * kr[t];
          } else {
#pragma unroll
            for (int t = 0; t < CPT; ++t) acc[t] += w * (EDGE ? vr[t] + eh[t] : vr[t]);
          }
        }
      }
#pragma unroll
      for (int t = 0; t < CPT; ++t) {
        kr[t] = kn[t];
        vr[t] = vn[t];
      }
    }
    // Merge the groups' softmax states (every group ends with the warp's state).
#pragma unroll
    for (int off = LPE; off < 32; off <<= 1) {
      const Acc mo = __shfl_xor_sync(kFull, m, off), so = __shfl_xor_sync(kFull, s, off);
      const Acc mn = m > mo ? m : mo;
      const Acc c1 = m == ninf ? Acc(0) : dexp(m - mn), c2 = mo == ninf ? Acc(0) : dexp(mo - mn);
      s = s * c1 + so * c2;
#pragma unroll
      for (int t = 0; t < CPT; ++t) acc[t] = acc[t] * c1 + __shfl_xor_sync(kFull, acc[t], off) * c2;
      m = mn;
    }
    if (heavy) {  // merge the warps' states; every warp computes the block's state
      const int nwarps = blockDim.x >> 5, r = lane % LPE;
      Acc* ms = smem;                       // (m, s) per warp and group lane (per head: lanes agree)
      Acc* as = smem + 2 * nwarps * LPE;    // CP per warp
      if (g == 0) {
#pragma unroll
        for (int t = 0; t < CPT; ++t) as[warp * CP + c0 + t] = acc[t];
        ms[2 * (warp * LPE + r)] = m;
        ms[2 * (warp * LPE + r) + 1] = s;
      }
      __syncthreads();
      Acc M = ninf;
      for (int w = 0; w < nwarps; ++w) M = ms[2 * (w * LPE + r)] > M ? ms[2 * (w * LPE + r)] : M;
      s = 0;
      zero(acc);
      for (int w = 0; w < nwarps; ++w) {
        const Acc mw = ms[2 * (w * LPE + r)];
        const Acc c = mw == ninf ? Acc(0) : dexp(mw - M);
        s += ms[2 * (w * LPE + r) + 1] * c;
#pragma unroll
        for (int t = 0; t < CPT; ++t) acc[t] += as[w * CP + c0 + t] * c;
      }
      m = M;
      __syncthreads();
    }
    const bool writer = !heavy || warp == 0;
    const Acc inv = s > 0 ? Acc(1) / s : Acc(0);
#pragma unroll
    for (int t = 0; t < CPT; ++t) acc[t] *= inv;
    if (p.out_bias) {  // the layer's bias, added before the one rounding to T
      const Acc* b = p.out_bias + int64_t(hg) * C;
#pragma unroll
      for (int t = 0; t < CPT; ++t) acc[t] += c0 + t < C ? b[c0 + t] : Acc(0);
    }
    if (writer && g == 0) {
      if (p.res) {  // the layer's skip, added before the one rounding to T
        Acc rr[CPT];
        load_row<T, Acc, CPT, VEC>(rr, p.res + i * p.ldr + int64_t(hg) * C, c0, C);
#pragma unroll
        for (int t = 0; t < CPT; ++t) acc[t] += rr[t];
      }
      store_row<T, Acc, CPT, VEC>(p.out + i * p.ldo + int64_t(hg) * C, acc, c0, C);
    }
    const Acc lse_i = s > 0 ? m + dlog(s) : ninf;
    if (writer && g == 0 && lane % SEG == 0 && p.lse) p.lse[i * p.H + h] = lse_i;
    if (p.alpha) {  // second walk, only when the attention weights are asked for
      for (int64_t e0 = first; e0 < end; e0 += step) {
        const int64_t e = e0 + g;
        const bool valid = e < end;
        Acc kr[CPT], eh[CPT];
        zero(eh);
        if (valid)
          load_row<T, Acc, CPT, VEC>(kr, p.k + int64_t(p.idx[e]) * p.ldk + (MQ ? -int64_t(hl) * p.C : int64_t(hg) * C),
                                     c0, C);
        else zero(kr);
        if constexpr (EDGE) project_edge<LPE>(eh, p, wt, e, valid, h, c0);
        if constexpr (EDGE)
#pragma unroll
          for (int t = 0; t < CPT; ++t) kr[t] += eh[t];
        Acc l = group_sum<SEG>(logit_part<GAT>(qr, kr, ar, p.slope));
        if (!GAT) l *= p.scale;
        if (valid && lane % SEG == 0) {
          Acc a = dexp(l - lse_i);
          if (p.alpha_after_dropout) a *= dropout_factor(p, e, h);
          p.alpha[e * p.H + h] = a;
        }
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Backward pass 1, per (target, head): Delta, dq (or dx_r) and datt.
template <class T, class I, class Acc, int CPT, int LPE, bool VEC, bool EDGE, bool GAT, bool MQ = false>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, (min_blocks<T, CPT, EDGE, Pass::targets>()))
backward_targets_kernel(const Params<T, I, Acc> p) {
  static_assert(!MQ || (!GAT && !EDGE), "multi-query: the Transformer without edge features");
  constexpr int EPW = 32 / LPE;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* smem = reinterpret_cast<Acc*>(smem_raw);
  const int HC = p.H * p.C;
  const Acc* wt = nullptr;
  if constexpr (EDGE) {
    Acc* unused;
    wt = stage_edge_weight<CPT>(p, smem, false, unused);
    smem += edge_smem_elems<CPT>(p, false);
  }
  Acc* datt_s = smem;                                   // H*C when datt_in_smem
  Acc* sum_s = smem + (p.datt_in_smem ? (HC + 1) / 2 * 2 : 0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane / LPE, c0 = (lane % LPE) * CPT;
  const int C = p.C;
  if (GAT && p.datt_in_smem) {
    for (int x = threadIdx.x; x < HC; x += blockDim.x) datt_s[x] = 0;
    __syncthreads();
  }
  for_each_item<EPW>(p, [&](bool heavy, int64_t i, int h, int64_t b, int64_t end, int64_t first, int64_t step) {
    Acc qr[CPT], ar[CPT], dor[CPT];
    load_row<T, Acc, CPT, VEC>(qr, p.q + i * p.ldq + int64_t(h) * C, c0, C);
    load_row<T, Acc, CPT, VEC>(dor, p.dO + i * p.lddO + int64_t(h) * C, c0, C);
    zero(ar);
    if (GAT)
#pragma unroll
      for (int t = 0; t < CPT; ++t) ar[t] = c0 + t < C ? p.att[h * C + c0 + t] : Acc(0);
    const Acc lse_i = p.lse[i * p.H + h];
    // dS = alpha dA - alpha Delta is linear in Delta: accumulate both parts in one walk and
    // combine once Delta = sum_j alpha dA is complete (exact even when out is 16-bit).
    Acc dq1[CPT], dq2[CPT], da1[CPT], da2[CPT];
    zero(dq1);
    zero(dq2);
    zero(da1);
    zero(da2);
    Acc D = 0;  // this group's part of Delta
    // Software pipeline (as in the forward): the group loads its next entry's key and value
    // before it reduces this entry's two dot products, so two entries' gathers are in flight.
    auto fetch = [&](int64_t e, Acc (&kr)[CPT], Acc (&vr)[CPT]) {
      if (e < end) {
        const int64_t j = p.idx[e];
        // The head's key/value columns (multi-query: the one shared slice).
        load_row<T, Acc, CPT, VEC>(kr, p.k + j * p.ldk + (MQ ? 0 : int64_t(h) * C), c0, C);
        if (!GAT)
          load_value<MQ, T, Acc, CPT, VEC>(vr, kr, p.value_is_key, p.v + j * p.ldv + (MQ ? 0 : int64_t(h) * C), c0, C);
      } else {
        zero(kr);
        if (!GAT) zero(vr);
      }
    };
    Acc kn[CPT], vn[CPT];
    zero(vn);  // stays zero for GATv2
    fetch(first + g, kn, vn);
    for (int64_t e0 = first; e0 < end; e0 += step) {
      const int64_t e = e0 + g;
      const bool valid = e < end;
      Acc kr[CPT], vr[CPT];
#pragma unroll
      for (int t = 0; t < CPT; ++t) {
        kr[t] = kn[t];
        vr[t] = GAT ? kn[t] : vn[t];  // GATv2: the value is the key
      }
      fetch(e + step, kn, vn);
      if constexpr (EDGE) {  // key + eh in the logit (and dq); the Transformer's message is value + eh
        Acc eh[CPT];
        project_edge<LPE>(eh, p, wt, e, valid, h, c0);
#pragma unroll
        for (int t = 0; t < CPT; ++t) {
          kr[t] += eh[t];
          if (!GAT) vr[t] += eh[t];
        }
      }
      Acc dpp = 0;
#pragma unroll
      for (int t = 0; t < CPT; ++t) dpp += dor[t] * vr[t];
      Acc l = group_sum<LPE>(logit_part<GAT>(qr, kr, ar, p.slope));
      const Acc dp = group_sum<LPE>(dpp);
      if (!GAT) l *= p.scale;
      if (valid) {
        const Acc pe = dexp(l - lse_i);
        const Acc pdA = pe * dropout_factor(p, e, h) * dp;
        D += pdA;
        if (GAT) {
#pragma unroll
          for (int t = 0; t < CPT; ++t) {
            const Acc z = qr[t] + kr[t];
            const Acc gz = ar[t] * (z > 0 ? Acc(1) : p.slope), lz = z > 0 ? z : p.slope * z;
            dq1[t] += pdA * gz;
            dq2[t] += pe * gz;
            da1[t] += pdA * lz;
            da2[t] += pe * lz;
          }
        } else {
#pragma unroll
          for (int t = 0; t < CPT; ++t) {
            dq1[t] += pdA * kr[t];
            dq2[t] += pe * kr[t];
          }
        }
      }
    }
    // Delta over the groups, then over the warps (heavy).
#pragma unroll
    for (int off = LPE; off < 32; off <<= 1) D += __shfl_xor_sync(kFull, D, off);
    if (heavy) {
      Acc dd[1] = {D};
      block_sum<1, 1>(dd, sum_s);  // lane 0's value of each warp (all lanes hold the warp's D)
      D = dd[0];
    }
    if (lane == 0 && (!heavy || warp == 0)) {
      p.lse_delta[2 * (i * p.H + h)] = lse_i;
      p.lse_delta[2 * (i * p.H + h) + 1] = D;
    }
    const Acc s = GAT ? Acc(1) : p.scale;
    Acc dq[CPT];
#pragma unroll
    for (int t = 0; t < CPT; ++t) dq[t] = s * (dq1[t] - D * dq2[t]);
    if (GAT)  // datt: every lane adds its partial (groups need no merge for a sum)
#pragma unroll
      for (int t = 0; t < CPT; ++t) {
        const Acc da = da1[t] - D * da2[t];
        if (c0 + t < C && da != Acc(0))
          atomicAdd((p.datt_in_smem ? datt_s : p.datt) + h * C + c0 + t, da);
      }
    merge_groups_sum<LPE>(dq);
    if (heavy) block_sum<LPE, CPT>(dq, sum_s);
    if ((!heavy || warp == 0) && g == 0)
      store_row<T, Acc, CPT, VEC>(p.dq + i * p.lddq + int64_t(h) * C, dq, c0, C);
  });
  if (GAT && p.datt_in_smem) {
    __syncthreads();
    for (int x = threadIdx.x; x < HC; x += blockDim.x)
      if (datt_s[x] != Acc(0)) atomicAdd(p.datt + x, datt_s[x]);
  }
}

// ---------------------------------------------------------------------------------------------
// Backward pass 2, per (source, head): dk and dv (GATv2: the whole dx_l), walking the targets of
// the source's out-edges. With a key and value shared by the heads (MQ), per source: the item
// walks its targets once per head and sums the heads' gradients in registers (no scratch, no
// atomics).
template <class T, class I, class Acc, int CPT, int LPE, bool VEC, bool EDGE, bool GAT, bool MQ = false>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, (min_blocks<T, CPT, EDGE, Pass::sources>()))
backward_sources_kernel(const Params<T, I, Acc> p) {
  static_assert(!MQ || (!GAT && !EDGE), "multi-query: the Transformer without edge features");
  constexpr int EPW = 32 / LPE;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* sum_s = reinterpret_cast<Acc*>(smem_raw);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane / LPE, c0 = (lane % LPE) * CPT;
  const int C = p.C;
  const Acc* wt = nullptr;
  Acc* dwl = nullptr;
  int slots_head = -1;  // the head whose dedge_weight the slots hold (the warp's items rarely change head)
  if constexpr (EDGE) {
    wt = stage_edge_weight<CPT>(p, sum_s, true, dwl);
    sum_s += edge_smem_elems<CPT>(p, true);
  }
  for_each_item<EPW, 1, MQ>(p, [&](bool heavy, int64_t j, int h_item, int64_t b, int64_t end, int64_t first,
                                   int64_t step) {
    if constexpr (EDGE)
      if (dwl && h_item != slots_head) {
        if (slots_head >= 0) flush_edge_weight_grad<LPE, CPT>(p, dwl, slots_head, c0);
        slots_head = h_item;
      }
    Acc dk[CPT], dv[CPT];
    // Adds head h's walk over the source's targets to dk, dv (zeroed by the first head's walk).
    auto walk = [&](const int h) {
      Acc kr[CPT], vr[CPT], ar[CPT];
      // The head's key/value columns (multi-query: the one shared slice).
      load_row<T, Acc, CPT, VEC>(kr, p.k + j * p.ldk + (MQ ? 0 : int64_t(h) * C), c0, C);
      if (GAT) {
#pragma unroll
        for (int t = 0; t < CPT; ++t) vr[t] = kr[t];
      } else {
        load_row<T, Acc, CPT, VEC>(vr, p.v + j * p.ldv + (MQ ? 0 : int64_t(h) * C), c0, C);
      }
      zero(ar);
      if (GAT)
#pragma unroll
        for (int t = 0; t < CPT; ++t) ar[t] = c0 + t < C ? p.att[h * C + c0 + t] : Acc(0);
      if (!MQ || h == 0) {
        zero(dk);
        zero(dv);
      }
      // Software pipeline: the group loads its next entry's target rows (query, dout) and scalars
      // before it reduces this entry's dot products.
      // The entry's edge id is read only where it is used (dropout mask, edge features).
      const bool need_edge = p.perm && (EDGE || p.threshold != 0);
      auto fetch = [&](int64_t t_, Acc (&qr)[CPT], Acc (&dor)[CPT], Acc& lse_i, Acc& D_i, int64_t& edge) {
        edge = -1;
        if (t_ < end) {
          const int64_t i = p.idx[t_];
          if (need_edge) edge = p.perm[t_];
          load_row<T, Acc, CPT, VEC>(qr, p.q + i * p.ldq + int64_t(h) * C, c0, C);
          load_row<T, Acc, CPT, VEC>(dor, p.dO + i * p.lddO + int64_t(h) * C, c0, C);
          const auto ld = reinterpret_cast<const typename Pair<Acc>::type*>(p.lse_delta)[i * p.H + h];
          lse_i = ld.x;
          D_i = ld.y;
        } else {
          zero(qr);
          zero(dor);
          lse_i = D_i = 0;
        }
      };
      Acc qn[CPT], don[CPT], lse_n, D_n;
      int64_t edge_n;
      fetch(first + g, qn, don, lse_n, D_n, edge_n);
      for (int64_t t0 = first; t0 < end; t0 += step) {
        const int64_t t_ = t0 + g;
        const bool valid = t_ < end;
        Acc qr[CPT], dor[CPT];
#pragma unroll
        for (int t = 0; t < CPT; ++t) {
          qr[t] = qn[t];
          dor[t] = don[t];
        }
        const Acc lse_i = lse_n, D_i = D_n;
        const int64_t edge = edge_n;
        fetch(t_ + step, qn, don, lse_n, D_n, edge_n);
        Acc eh[CPT];  // the entry's edge features (perm is set: no symmetric walk with them)
        zero(eh);
        if constexpr (EDGE) project_edge<LPE>(eh, p, wt, edge, valid, h, c0);
        Acc ke[CPT], dpp = 0;
#pragma unroll
        for (int t = 0; t < CPT; ++t) {
          ke[t] = EDGE ? kr[t] + eh[t] : kr[t];
          dpp += dor[t] * (EDGE && !GAT ? vr[t] + eh[t] : vr[t]);
        }
        Acc l = group_sum<LPE>(logit_part<GAT>(qr, ke, ar, p.slope));
        const Acc dp = group_sum<LPE>(dpp);
        if (!GAT) l *= p.scale;
        Acc ge[CPT];  // d loss / d eh of this entry
        zero(ge);
        if (valid) {
          const Acc pe = dexp(l - lse_i);
          const Acc keep = dropout_factor(p, edge, h);
          const Acc dS = pe * (keep * dp - D_i);
          const Acc pk = pe * keep;
          if (GAT) {
#pragma unroll
            for (int t = 0; t < CPT; ++t) {
              const Acc z = qr[t] + ke[t];
              ge[t] = dS * ar[t] * (z > 0 ? Acc(1) : p.slope);
              dk[t] += ge[t] + pk * dor[t];
            }
          } else {
#pragma unroll
            for (int t = 0; t < CPT; ++t) {
              dk[t] += dS * p.scale * qr[t];
              dv[t] += pk * dor[t];
              ge[t] = dS * p.scale * qr[t] + pk * dor[t];
            }
          }
        }
        if constexpr (EDGE) edge_gradients<LPE>(p, wt, dwl, ge, valid, edge, h, c0);
      }
    };
    if constexpr (MQ) {
      for (int h = 0; h < p.H; ++h) walk(h);
    } else {
      walk(h_item);
    }
    merge_groups_sum<LPE>(dk);
    if (!GAT) merge_groups_sum<LPE>(dv);
    if (heavy) {
      block_sum<LPE, CPT>(dk, sum_s);
      if (!GAT) block_sum<LPE, CPT>(dv, sum_s);
    }
    if ((!heavy || warp == 0) && g == 0) {
      store_row<T, Acc, CPT, VEC>(p.dk + j * p.lddk + (MQ ? 0 : int64_t(h_item) * C), dk, c0, C);
      if (!GAT) store_row<T, Acc, CPT, VEC>(p.dv + j * p.lddv + (MQ ? 0 : int64_t(h_item) * C), dv, c0, C);
    }
  });
  if constexpr (EDGE)
    if (dwl && slots_head >= 0) flush_edge_weight_grad<LPE, CPT>(p, dwl, slots_head, c0);
}

// dedge_attr (storage type, leading dimension ld) from its accumulation (nnz x D, contiguous).
template <class T, class Acc>
__global__ void store_edge_grad_kernel(const Acc* src, int64_t nnz, int D, T* dst, int64_t ld) {
  const int64_t n = nnz * D;
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < n; x += int64_t(gridDim.x) * blockDim.x)
    dst[(x / D) * ld + x % D] = from_acc<T>(src[x]);
}

// ---------------------------------------------------------------------------------------------
// Helpers: heavy-node lists and the transpose build.
template <class I>
__global__ void collect_heavy_kernel(const I* ptr, int64_t n, int64_t threshold, int64_t* list, int* count) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < n; x += int64_t(gridDim.x) * blockDim.x)
    if (int64_t(ptr[x + 1] - ptr[x]) > threshold) list[atomicAdd(count, 1)] = x;
}

template <class I>
__global__ void count_sources_kernel(const I* col, int64_t nnz, I* counts) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < nnz; e += int64_t(gridDim.x) * blockDim.x) {
    if constexpr (sizeof(I) == 4)
      atomicAdd(reinterpret_cast<int*>(counts) + col[e], 1);
    else
      atomicAdd(reinterpret_cast<unsigned long long*>(counts) + col[e], 1ull);
  }
}

template <class I>
__global__ void iota_kernel(I* x, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    x[e] = I(e);
}

// row[t] = the target (CSR row) of edge perm[t], by binary search in rowptr.
template <class I>
__global__ void targets_of_edges_kernel(const I* rowptr, int64_t rows, const I* perm, int64_t nnz, I* row) {
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < nnz; t += int64_t(gridDim.x) * blockDim.x) {
    const I e = perm[t];
    int64_t lo = 0, hi = rows;  // last r with rowptr[r] <= e
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) / 2;
      if (rowptr[mid] <= e) lo = mid; else hi = mid;
    }
    row[t] = I(lo);
  }
}

}  // namespace tessera::ops::cuda_attention
