#pragma once
// Host launchers of the fused attention kernels, templated on the storage type; instantiated per
// dtype in attention.cu (f32, f64) and attention_half.cu (f16, bf16) so the two compile in
// parallel.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "cuda/ops/attention_kernels.cuh"
#include "cuda/ops/attention_schedule.hpp"
#include "ops/attention/backends.hpp"
#include "ops/spmm/alignment.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::ops::cuda_attention {

// Nodes with more entries than the heavy threshold are walked by a whole block (heavy bucket).
// On large graphs it is kMaxHeavyThreshold. On small ones the longest light row is the kernel's
// critical path: one warp walks it a group step (two entries at C = 64) per gather latency, so on
// Cora (10.5K entries, one node with 168) the forward took 41 us on the H200 where its other
// entries needed a few. There the threshold follows a warp's fair share of the walk instead,
// kHeavyShares x entries x heads / (SMs x 64 resident warps), and at least kMinHeavyThreshold.
// One share: on PubMed (the only benchmark graph whose threshold falls between the bounds) 4
// shares kept its 172-entry node light at 4 heads (threshold 205), one warp walking it 86 steps;
// fixed thresholds of 51 and 102 entries took the forward's GPU time from 143 to 134-135 us (GATv2
// 4x64), 355 to 333 (GATv2 8x128) and 522 to 491-497 (Transformer 8x128), 2x256 flat (H200,
// bench/results/h200_20261204c).
constexpr int64_t kMaxHeavyThreshold = 1024;
constexpr int64_t kMinHeavyThreshold = 32;
constexpr int64_t kHeavyShares = 1;
// Largest W (and dedge_weight partial) of the edge kernels staged in shared memory; larger ones
// are read from (and added into) global memory.
constexpr int64_t kEdgeSmemBytes = 32 * 1024;
// Largest per-thread dedge_weight slots of a block (threads x CPT x D); larger ones fall back to
// atomics on dedge_weight per entry.
constexpr int64_t kEdgeGradSmemBytes = 64 * 1024;

template <int N> using IC = std::integral_constant<int, N>;

// Picks (channels per lane, lanes per edge, vector loads) for a head width and calls
// f(IC<CPT>, IC<LPE>, bool_constant<VEC>). Widths 32/64/128/256 with 16-byte aligned rows get
// exact, vectorized specialisations; any other width up to 512 the guarded generic path.
template <class T, class F>
void with_config(int C, bool aligned, F&& f) {
  if constexpr (sizeof(T) < 8) {
    constexpr int V = 16 / int(sizeof(T));
    constexpr int c32 = V > 1 ? V : 1, c64 = V > 2 ? V : 2, c128 = V > 4 ? V : 4, c256 = V > 8 ? V : 8;
    if (aligned) switch (C) {
        case 32: return f(IC<c32>{}, IC<32 / c32>{}, std::true_type{});
        case 64: return f(IC<c64>{}, IC<64 / c64>{}, std::true_type{});
        case 128: return f(IC<c128>{}, IC<128 / c128>{}, std::true_type{});
        case 256: return f(IC<c256>{}, IC<256 / c256>{}, std::true_type{});
        default: break;
      }
  }
  // (No separate C <= 8 bucket: 16 guarded lanes serve those widths, one instantiation fewer per
  // dtype, index type and pass, for heads narrow enough that the kernel is latency-bound anyway.)
  if (C <= 16) return f(IC<1>{}, IC<16>{}, std::false_type{});
  if (C <= 32) return f(IC<1>{}, IC<32>{}, std::false_type{});
  if (C <= 64) return f(IC<2>{}, IC<32>{}, std::false_type{});
  if (C <= 128) return f(IC<4>{}, IC<32>{}, std::false_type{});
  if (C <= 256) return f(IC<8>{}, IC<32>{}, std::false_type{});
  TESSERA_CHECK(C <= 512, "attention (cuda): head width ", C, " above 512 is not supported on CUDA");
  return f(IC<16>{}, IC<32>{}, std::false_type{});
}

// Every row of m starts on a 16-byte boundary (an absent matrix, data null and ld 0, passes).
// The layer kind as a compile-time flag of the three kernels. Read at run time, it kept both
// kinds' rows live in registers (the Transformer's value rows in GATv2's walk, GATv2's attention
// vector in the Transformer's), and the f32 kernels, bounded to 64 registers, spilled: ncu on
// PubMed GATv2 8x128 counted 0.16M / 2.7M / 0.71M local-memory requests in the forward / targets /
// sources passes (bench/results/h200_20261203f).
// Multi-query attention (a key and value shared by the heads) is a third kernel flavour, MQ: its
// offsets and its sources pass's head loop are compile-time, so the kernels of the other kinds keep
// their code. As runtime flags they cost the unfolded Transformer's forward kernel 14% (grid 8x128,
// H100, GPU time per forward 7.67 -> 8.75 ms between two calls whose projection kernels timed the
// same; bench/results/h100_20261205d). Calls f(gat, mq); edge kernels have no multi-query flavour
// (validation refuses the combination).
template <bool EDGE, class F>
void with_kind(AttentionKind kind, bool shared_kv, F&& f) {
  if (kind == AttentionKind::gatv2) return f(std::true_type{}, std::false_type{});
  if constexpr (!EDGE)
    if (shared_kv) return f(std::false_type{}, std::true_type{});
  f(std::false_type{}, std::false_type{});
}

template <class T>
bool aligned16(const DenseView& m) {
  return rows_vector_aligned(m.data, m.ld, sizeof(T));
}

// The heavy threshold of a walk over nnz entries with the given heads (see kMaxHeavyThreshold).
// TESSERA_ATTENTION_HEAVY_THRESHOLD (entries) overrides it, for A/B measurements.
inline int64_t heavy_threshold(int64_t nnz, int64_t heads) {
  static const int64_t forced = [] {
    const char* e = std::getenv("TESSERA_ATTENTION_HEAVY_THRESHOLD");
    return e ? std::max<int64_t>(1, std::strtoll(e, nullptr, 10)) : int64_t(0);
  }();
  if (forced > 0) return forced;
  const int64_t fair = nnz * heads / (int64_t(cuda_multiprocessors()) * 64);
  return std::clamp<int64_t>(kHeavyShares * fair, kMinHeavyThreshold, kMaxHeavyThreshold);
}

// The schedule of a walk: the two work counters the persistent blocks take items from (see
// for_each_item) and the heavy bucket (nodes with more than `threshold` entries), built on the
// device. Layout: next heavy item, next light grab, heavy count, blocks done (4 x 32 bits), list.
// A graph with an identity keeps its schedules across calls (attention_schedule.hpp): built on
// the first, reused as they are after it, one call at a time (the entry's lock is held until the
// kernel is launched). Otherwise the call builds one in scratch memory.
template <class I>
struct Schedule {
  static constexpr size_t kHeader = 4 * sizeof(unsigned);
  int64_t threshold;
  bool heavy = false;
  std::shared_ptr<CachedSchedule> cached;
  std::unique_lock<std::mutex> hold;
  std::unique_ptr<Scratch> scratch;
  void* mem = nullptr;
  Schedule(const Exec& exec, uint64_t graph, Walk walk, const I* ptr, int64_t nodes, int64_t nnz, int64_t heads,
           cudaStream_t s)
      : threshold(heavy_threshold(nnz, heads)), heavy(nnz > threshold && nodes > 0) {
    const size_t bytes = kHeader + (heavy ? sizeof(int64_t) * size_t(std::min(nodes, nnz / (threshold + 1) + 1)) : 0);
    cached = cached_schedule({graph, walk, nodes, nnz, threshold, int(sizeof(I)), exec.device.index, s}, bytes);
    if (cached) {
      hold = std::unique_lock<std::mutex>(cached->mu);
      mem = cached->device;
      if (cached->built) return;
    } else {
      scratch = std::make_unique<Scratch>(exec, bytes);
      mem = scratch->get();
    }
    TESSERA_CUDA_CHECK(cudaMemsetAsync(mem, 0, kHeader, s));
    if (heavy) {
      const int blocks = int(std::min<int64_t>((nodes + 255) / 256, int64_t(cuda_multiprocessors()) * 8));
      collect_heavy_kernel<I><<<blocks, 256, 0, s>>>(ptr, nodes, threshold, list(), count());
      TESSERA_CUDA_LAUNCH_CHECK();
    }
    if (cached) cached->built = true;
  }
  unsigned* queue() const { return static_cast<unsigned*>(mem); }
  int* count() const { return reinterpret_cast<int*>(queue() + 2); }
  int64_t* list() const { return reinterpret_cast<int64_t*>(static_cast<char*>(mem) + kHeader); }
};

// Light items per grab (Params::grab): kItemsPerGrab once the walk gives each resident warp 8 grabs
// of that many, fewer below, down to one on walks of about a grab per warp (Cora: 2708 items at 4
// heads per item), where four consecutive nodes walked one after the other by one warp are the
// critical path while most warps hold nothing (H200, GPU time of the layer's forward against 4 per
// grab: Cora GATv2 4x64 44.1 -> 35.7 us, 8x128 75.4 -> 65.9, PubMed 4x64 123.5 -> 113.9).
// TESSERA_ATTENTION_GRAB overrides it, for A/B measurements.
inline int items_per_grab(int64_t items, int64_t warps) {
  static const int forced = [] {
    const char* e = std::getenv("TESSERA_ATTENTION_GRAB");
    return e ? int(std::clamp<long long>(std::strtoll(e, nullptr, 10), 1, kItemsPerGrab)) : 0;
  }();
  if (forced > 0) return forced;
  return int(std::clamp<int64_t>(items / (std::max<int64_t>(warps, 1) * 8), 1, kItemsPerGrab));
}

// Launches a kernel's persistent blocks (as many as fit on the device at once, fewer for small
// walks): the heavy items first, then the light ones (for_each_item). An item spans
// heads_per_item heads (the forward's head groups).
template <class P, class K, class I>
void launch_items(K kernel, P p, const Schedule<I>& sched, size_t smem_light, size_t smem_heavy, cudaStream_t s,
                  int heads_per_item = 1) {
  const int64_t groups = p.H / heads_per_item, items = p.nodes * groups;
  if (items == 0) return;
  const int threads = kWarpsPerBlock * 32;
  const size_t smem = std::max(smem_light, sched.heavy ? smem_heavy : 0);
  const int per_sm = cuda_resident_blocks(reinterpret_cast<const void*>(kernel), threads, smem);
  p.heavy_threshold = sched.heavy ? sched.threshold : INT64_MAX;
  p.heavy_list = sched.heavy ? sched.list() : nullptr;
  p.heavy_count = sched.heavy ? sched.count() : nullptr;
  p.queue = sched.queue();
  const int64_t sms = cuda_multiprocessors();
  const int64_t blocks =
      std::min<int64_t>((items + kWarpsPerBlock - 1) / kWarpsPerBlock, sms * std::max(per_sm, 1));
  p.grab = items_per_grab(items, blocks * kWarpsPerBlock);
  // The counters are 32-bit: every grab, and the one past the end each warp makes, must fit.
  const int64_t grabs = (p.nodes + p.grab - 1) / p.grab * groups;
  TESSERA_CHECK(grabs + sms * 128 < (int64_t(1) << 32), "attention (cuda): ", p.nodes, " nodes x ", groups,
                " head groups is more work items than the 32-bit schedule holds");
  kernel<<<unsigned(blocks), threads, smem, s>>>(p);
  TESSERA_CUDA_LAUNCH_CHECK();
}

template <class T, class I, class D, class Acc>
Params<D, I, Acc> common_params(const AttentionArgs<I>& a) {
  Params<D, I, Acc> p;
  p.H = int(a.heads);
  p.C = int(a.channels);
  p.q = static_cast<const D*>(a.query.data); p.ldq = a.query.ld;
  p.k = static_cast<const D*>(a.key.data); p.ldk = a.key.ld;
  const DenseView& v = a.kind == AttentionKind::gatv2 ? a.key : a.value;
  p.v = static_cast<const D*>(v.data); p.ldv = v.ld;
  p.value_is_key = a.shared_kv() && v.data == a.key.data && v.ld == a.key.ld;
  p.att = static_cast<const Acc*>(a.att);
  p.slope = Acc(a.negative_slope);
  p.scale = Acc(a.logit_scale());
  p.seed = a.dropout_seed;
  p.threshold = attention_dropout_threshold(a.dropout);
  p.keep_scale = a.dropout >= 1 ? Acc(0) : Acc(1.0 / (1.0 - a.dropout));
  if (a.has_edge_features()) {
    p.ea = static_cast<const D*>(a.edge_attr.data); p.lde = a.edge_attr.ld;
    p.ew = static_cast<const D*>(a.edge_weight.data); p.ldw = a.edge_weight.ld;
    p.D = int(a.edge_attr.cols);
    p.w_in_smem = a.edge_attr.cols * a.heads * a.channels * int64_t(sizeof(Acc)) <= kEdgeSmemBytes;
  }
  return p;
}

// Calls f(cpt, lpe, vec) like with_config, for the EDGE kernels or not. The edge kernels take only
// the guarded generic configurations: measured on the H200 (clustered graph, H=4, C=64, D=8), the
// vectorized ones, two entries per warp step, made the edge forward slower (15.7 -> 17.8 ms), and
// they would double the edge unit's instantiations.
template <class T, bool EDGE, class F>
void with_edge_config(int C, bool aligned, F&& f) {
  with_config<T>(C, aligned && !EDGE, [&](auto cpt, auto lpe, auto vec) {
    if constexpr (!(EDGE && decltype(vec)::value)) f(cpt, lpe, vec);
  });
}

// Heads per forward item (forward_kernel's head groups): as many as fill one warp's 256-channel
// span (C = 32, 64, 128: 8, 4, 2 heads of exact, 16-byte aligned rows, 8 channels per lane) when
// they divide H; else 1. Not for f64 (8 channels per lane spill), nor edge features (their
// per-head projection takes the guarded configurations), nor the Transformer at C = 128: its pairs
// of heads (a key and a value row per entry) were slower on every graph measured (H100, op level,
// forward 8x128 with / without: R-MAT 2^20 degree 16 32.1 / 27.9 ms, degree 4 11.3 / 11.1, grid
// 8.28 / 7.92, clustered 10.8 / 10.2), where GATv2's gained (R-MAT 17.2 / 19.1) and the
// Transformer's 4-head groups gained on the grid (2.29 / 2.74) and the clustered graph (2.56 /
// 2.75), lost on R-MAT (8.47 / 7.29), and tied at degree 4 (bench/results/h200_20261205b).
// A Transformer whose value is its key (one row per entry, as GATv2's) groups at C = 128 too: the
// folded TransformerConv's multi-query call, where a group's heads also share that one row.
// TESSERA_ATTENTION_HEAD_GROUPS=0 turns them off, =1 on wherever they apply (A/B runs).
template <class T, bool EDGE>
int forward_head_group(int64_t heads, int64_t C, bool aligned, AttentionKind kind, bool value_is_key) {
  static const int forced = [] {
    const char* e = std::getenv("TESSERA_ATTENTION_HEAD_GROUPS");
    return !e ? -1 : std::string(e) == "0" ? 0 : std::string(e) == "1" ? 1 : -1;
  }();
  if (forced == 0 || EDGE || sizeof(T) == 8 || !aligned || (C != 32 && C != 64 && C != 128)) return 1;
  if (forced == -1 && kind == AttentionKind::transformer && !value_is_key && C == 128) return 1;
  const int64_t hg = 256 / C;
  return heads % hg == 0 ? int(hg) : 1;
}

// Calls f(IC<hg>) for a head group forward_head_group chose; only configurations of a 256-channel
// span (GROUPED) instantiate the grouped kernels.
template <bool GROUPED, class F>
void with_heads_per_item(int hg, F&& f) {
  if constexpr (GROUPED) {
    switch (hg) {
      case 2: return f(IC<2>{});
      case 4: return f(IC<4>{});
      case 8: return f(IC<8>{});
      default: break;
    }
  }
  TESSERA_CHECK(hg == 1, "attention (cuda): no head-group configuration for ", hg, " heads per item");
  f(IC<1>{});
}

// The forward's parameters: common_params, the walk over A's rows and the outputs.
template <class T, class I, class D, class Acc>
Params<D, I, Acc> forward_params(const AttentionArgs<I>& a) {
  auto p = common_params<T, I, D, Acc>(a);
  p.nodes = a.A.rows;
  p.ptr = a.A.rowptr;
  p.idx = a.A.col;
  p.out = static_cast<D*>(a.out.data); p.ldo = a.out.ld;
  p.out_bias = static_cast<const Acc*>(a.out_bias);
  p.res = static_cast<const D*>(a.residual.data); p.ldr = a.residual.ld;
  p.lse = static_cast<Acc*>(a.lse);
  p.alpha = static_cast<Acc*>(a.alpha);
  p.alpha_after_dropout = a.alpha_after_dropout;
  return p;
}

template <class T, class I, bool EDGE>
void forward_t(const AttentionArgs<I>& a, const Exec& exec) {
  using D = typename dev_type<T>::type;
  using Acc = typename detail::acc_of<T>::type;
  const auto& A = a.A;
  if (A.rows == 0) return;
  const cudaStream_t s = cuda_stream(exec.stream);
  auto p = forward_params<T, I, D, Acc>(a);
  const bool aligned = aligned16<T>(a.query) && aligned16<T>(a.key) && aligned16<T>(a.value) &&
                       aligned16<T>(a.out) && aligned16<T>(a.residual);
  const int hg = forward_head_group<T, EDGE>(a.heads, a.channels, aligned, a.kind, p.value_is_key);
  Schedule<I> sched(exec, A.id, Walk::targets, A.rowptr, A.rows, A.nnz, a.heads / hg, s);
  // An item's channels (hg heads side by side) pick the configuration: 256 with head groups.
  with_edge_config<T, EDGE>(p.C * hg, aligned, [&](auto cpt, auto lpe, auto vec) {
    constexpr int CPT = decltype(cpt)::value, LPE = decltype(lpe)::value;
    constexpr bool VEC = decltype(vec)::value;
    const size_t edge_bytes = EDGE ? sizeof(Acc) * size_t(edge_smem_elems<CPT>(p, false)) : 0;
    // Heavy merge: (m, s) per warp and group lane, and a warp's accumulators.
    const size_t heavy_bytes = edge_bytes + sizeof(Acc) * size_t(kWarpsPerBlock) * (2 * LPE + LPE * CPT);
    with_heads_per_item<!EDGE && VEC && LPE * CPT == 256>(hg, [&](auto heads_per_item) {
      constexpr int HG = decltype(heads_per_item)::value;
      with_kind<EDGE>(a.kind, a.shared_kv(), [&](auto gat, auto mq) {
        launch_items(forward_kernel<D, I, Acc, CPT, LPE, VEC, EDGE, decltype(gat)::value, HG, decltype(mq)::value>, p,
                     sched, edge_bytes, heavy_bytes, s, HG);
      });
    });
  });
}

template <class T, class I, bool EDGE>
void backward_t(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  using D = typename dev_type<T>::type;
  using Acc = typename detail::acc_of<T>::type;
  const auto& a = b.fwd;
  const auto& A = a.A;
  const cudaStream_t s = cuda_stream(exec.stream);
  auto p = common_params<T, I, D, Acc>(a);
  p.lse = static_cast<Acc*>(a.lse);
  p.o = static_cast<const D*>(a.out.data); p.ldO = a.out.ld;
  p.dO = static_cast<const D*>(b.dout.data); p.lddO = b.dout.ld;
  p.dq = static_cast<D*>(b.dquery.data); p.lddq = b.dquery.ld;
  p.dk = static_cast<D*>(b.dkey.data); p.lddk = b.dkey.ld;
  p.dv = static_cast<D*>(b.dvalue.data); p.lddv = b.dvalue.ld;
  p.datt = static_cast<Acc*>(b.datt);
  const int64_t HC = a.heads * a.channels;
  const bool gat = a.kind == AttentionKind::gatv2;
  if (gat) TESSERA_CUDA_CHECK(cudaMemsetAsync(p.datt, 0, sizeof(Acc) * size_t(HC), s));
  p.datt_in_smem = gat && HC * int64_t(sizeof(Acc)) <= 32 * 1024;
  Scratch lse_delta(exec, 2 * sizeof(Acc) * size_t(std::max<int64_t>(A.rows * a.heads, 1)));
  p.lse_delta = lse_delta.as<Acc>();
  const bool aligned = aligned16<T>(a.query) && aligned16<T>(a.key) && aligned16<T>(a.value) &&
                       aligned16<T>(a.out) && aligned16<T>(b.dout) && aligned16<T>(b.dquery) &&
                       aligned16<T>(b.dkey) && aligned16<T>(b.dvalue);
  // The walk of pass 2: A itself (symmetric), the caller's transpose, or one built here.
  const I* wptr = A.rowptr;
  const I* widx = A.col;
  const I* wperm = nullptr;
  Scratch tmem(exec, (symmetric_path || b.transpose) ? 0 : sizeof(I) * size_t(A.cols + 1 + 2 * A.nnz));
  if (!symmetric_path) {
    if (b.transpose) {
      wptr = b.transpose->colptr;
      widx = b.transpose->row;
      wperm = b.transpose->perm;
    } else {
      I* base = tmem.as<I>();
      detail::build_attention_transpose_cuda<I>(A, base, base + A.cols + 1, base + A.cols + 1 + A.nnz, exec);
      wptr = base;
      widx = base + A.cols + 1;
      wperm = base + A.cols + 1 + A.nnz;
    }
  }
  // Edge features: dedge_attr is summed over the heads in the accumulation type, then stored.
  Scratch dea(exec, EDGE ? sizeof(Acc) * size_t(A.nnz * a.edge_attr.cols) : 0);
  if constexpr (EDGE) {
    TESSERA_CHECK(!symmetric_path, "attention_backward (cuda): edge features need the transpose walk");
    p.dea = dea.as<Acc>();
    p.dew = static_cast<Acc*>(b.dedge_weight);
    TESSERA_CUDA_CHECK(cudaMemsetAsync(p.dea, 0, sizeof(Acc) * size_t(A.nnz * p.D), s));
    TESSERA_CUDA_CHECK(cudaMemsetAsync(p.dew, 0, sizeof(Acc) * size_t(HC * p.D), s));
  }
  Schedule<I> sched_t(exec, A.id, Walk::targets, A.rowptr, A.rows, A.nnz, a.heads, s);
  Schedule<I> sched_s(exec, A.id, symmetric_path ? Walk::symmetric_sources : Walk::sources, wptr, A.cols, A.nnz,
                      a.heads, s);
  with_edge_config<T, EDGE>(p.C, aligned, [&](auto cpt, auto lpe, auto vec) {
    constexpr int CPT = decltype(cpt)::value, LPE = decltype(lpe)::value;
    constexpr bool VEC = decltype(vec)::value;
    p.dw_in_smem = EDGE && int64_t(kWarpsPerBlock) * 32 * CPT * p.D * int64_t(sizeof(Acc)) <= kEdgeGradSmemBytes;
    const size_t w_bytes = EDGE ? sizeof(Acc) * size_t(edge_smem_elems<CPT>(p, false)) : 0;
    const size_t wdw_bytes = EDGE ? sizeof(Acc) * size_t(edge_smem_elems<CPT>(p, true)) : 0;
    const size_t warp_sums = sizeof(Acc) * size_t(kWarpsPerBlock) * LPE * CPT;
    const size_t datt_bytes = p.datt_in_smem ? sizeof(Acc) * size_t((HC + 1) / 2 * 2) : 0;
    auto p1 = p;
    p1.nodes = A.rows;
    p1.ptr = A.rowptr;
    p1.idx = A.col;
    auto p2 = p;
    p2.nodes = A.cols;
    p2.ptr = wptr;
    p2.idx = widx;
    p2.perm = wperm;
    with_kind<EDGE>(a.kind, a.shared_kv(), [&](auto gat, auto mq) {
      constexpr bool GAT = decltype(gat)::value, MQ = decltype(mq)::value;
      launch_items(backward_targets_kernel<D, I, Acc, CPT, LPE, VEC, EDGE, GAT, MQ>, p1, sched_t,
                   w_bytes + datt_bytes, w_bytes + datt_bytes + warp_sums, s);
      // Multi-query: an item of the sources pass is a source with all its heads (their sum).
      launch_items(backward_sources_kernel<D, I, Acc, CPT, LPE, VEC, EDGE, GAT, MQ>, p2, sched_s, wdw_bytes,
                   wdw_bytes + warp_sums, s, MQ ? p2.H : 1);
    });
  });
  if constexpr (EDGE) {
    const int64_t n = A.nnz * p.D;
    if (n == 0) return;
    const int blocks = int(std::min<int64_t>((n + 255) / 256, int64_t(cuda_multiprocessors()) * 8));
    store_edge_grad_kernel<D, Acc><<<blocks, 256, 0, s>>>(p.dea, A.nnz, p.D, static_cast<D*>(b.dedge_attr.data),
                                                          b.dedge_attr.ld);
    TESSERA_CUDA_LAUNCH_CHECK();
  }
}

// The f16 / bf16 choice of forward_t / backward_t, for the units that instantiate the 16-bit types
// (attention_half.cu without edge features, attention_edge_half.cu with them).
template <class I, bool EDGE>
void forward_half_t(const AttentionArgs<I>& a, const Exec& exec) {
  if (a.query.dtype == DType::f16) return forward_t<half_t, I, EDGE>(a, exec);
  TESSERA_CHECK(a.query.dtype == DType::bf16, "attention (cuda): unsupported dtype ", dtype_name(a.query.dtype));
  forward_t<bf16_t, I, EDGE>(a, exec);
}

template <class I, bool EDGE>
void backward_half_t(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  if (b.fwd.query.dtype == DType::f16) return backward_t<half_t, I, EDGE>(b, exec, symmetric_path);
  TESSERA_CHECK(b.fwd.query.dtype == DType::bf16, "attention_backward (cuda): unsupported dtype ",
                dtype_name(b.fwd.query.dtype));
  backward_t<bf16_t, I, EDGE>(b, exec, symmetric_path);
}

}  // namespace tessera::ops::cuda_attention
