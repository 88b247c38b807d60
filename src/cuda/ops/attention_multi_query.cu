// The multi-query forward (variant cuda.multi_query): a key row that is also the value, shared by
// every head (kv_heads = 1, the folded TransformerConv's attention over x_src). cuda.fused gives
// each (target, head group) its own warp, and every one of them gathers the same source rows: at
// 8 heads of C = 128, four warps per target walk one entry list (2 heads each). Here one warp
// takes a target and 2 to 8 heads (HC), loads each entry's row once (C / 32 channels per lane)
// and keeps every head's accumulator and softmax state in registers (the queries too, or in
// shared memory for the largest shapes: multi_query_forward_kernel); the HC logits are one
// multi-value warp reduction.
// Measured against cuda.fused (H100, bench/results/h100_20261206b). ncu, the folded layer's
// attention alone on a PubMed-sized BA graph (19717 nodes, 78800 entries): 8 heads of K = 128
// 135 -> 109 us, 2 heads 54 -> 44 us; op level on the grid 2^20 at 8 heads 5.23 -> 4.89 ms. The
// prediction was a third of PubMed's time (half the items, one gather per entry for 4 heads): at
// 93 registers the kernel ran 2 blocks per SM where cuda.fused runs 3, and both are latency-bound
// (0.8-1.0 eligible warps per scheduler, none in 43-49% of cycles), so half the items on two thirds
// of the warps left a fifth. With the queries in shared memory, 3 blocks: 93 us and 4.16 ms
// (bench/results/h100_20261206c). In the layer on PubMed itself 8 heads were level (140 / 142 us,
// before that) and 2 heads per item lost once (0.49 / 0.33 ms forward), so for a session the
// heuristics took it at 4 or more only; two A/B pairs of the folded layer at 2 heads per item did not
// repeat that loss (PubMed level within its +-0.1 ms noise; grid forward 2.5% faster at K = 128,
// 5-8% at K = 256; h100_20261206c, call 5), and the heuristics take it wherever it is eligible. A
// version with the column indices 32 at a time and two rows in flight was slower (PubMed 167 us).
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops {
namespace cuda_attention {
namespace {

// Sums each of the N values over the warp's lanes: afterwards the lanes of slot j (lane / (32/N)
// == j) hold the total of v[j]. Each stage trades half of the values with the lane `off` away, so
// N values cost 2N - 1 + log2(32/N) shuffles instead of N * 5.
template <int N, class Acc>
__device__ __forceinline__ Acc multi_sum(Acc (&v)[N], int lane) {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a power of two up to 32 values");
  int off = 16;
#pragma unroll
  for (int half = N / 2; half >= 1; half /= 2, off /= 2) {
    const bool upper = lane & off;
#pragma unroll
    for (int j = 0; j < half; ++j) {
      const Acc send = upper ? v[j] : v[j + half];
      const Acc keep = upper ? v[j + half] : v[j];
      v[j] = keep + __shfl_xor_sync(kFull, send, off);
    }
  }
  Acc x = v[0];
#pragma unroll
  for (int o = 16 / N; o >= 1; o /= 2) x += __shfl_xor_sync(kFull, x, o);
  return x;
}

// Accumulators a lane holds at most (heads_per_item). The shapes at this bound keep their queries
// in shared memory (multi_query_forward_kernel): in registers they took more than 80.
constexpr int kMaxAccumulators = 16;

// One item: target i and heads hg*HC .. hg*HC+HC-1; its channels are C = 32 * CPT, exact rows.
// Entries are walked one per step by the whole warp, the next entry's row in flight (as
// forward_kernel's pipeline). Every lane keeps the same softmax state per head (the logits are
// broadcast), so the rescaling branch does not diverge. Heavy rows: each warp walks every nwarps-th
// entry and the block merges the per-head states through shared memory (warp 0 writes).
// Occupancy: with every query in registers the 16-accumulator shapes took 91-109 registers, 2 blocks
// of 8 warps per SM; both this kernel and cuda.fused are latency-bound (ncu: about one eligible warp
// per scheduler), so warps in flight are what count. There (QS) the queries live in
// shared memory and the kernel is held to 80 registers, 3 blocks per SM (H100, ncu, 4 heads of
// K = 128 on a PubMed-sized BA graph: 109 -> 93 us; the grid 2^20 at op level 4.93 -> 4.16 ms;
// bench/results/h100_20261206c). Held to 80 with the queries in registers it spilled 16-76 bytes
// and took 97-99 us; held to 64 (4 blocks) with them in shared memory it spilled 36 bytes and took
// 95 us. At 2 heads of K = 128 (75 registers, 3 blocks already) shared-memory queries were slower
// (44.7 -> 46.5 us), so the smaller shapes keep theirs in registers.
template <class T, class I, class Acc, int CPT, int HC>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, CPT * HC >= kMaxAccumulators ? 3 : 2)
    multi_query_forward_kernel(const Params<T, I, Acc> p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* smem = reinterpret_cast<Acc*>(smem_raw);
  constexpr int C = 32 * CPT, SPAN = 32 / HC, W = 2 * HC + HC * C;  // W: a warp's merge slots
  constexpr bool QS = CPT * HC >= kMaxAccumulators;  // the queries in shared memory
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, c0 = lane * CPT;
  // QS: each lane keeps its slice of the queries in shared memory and reads back only that (no
  // barrier). A warp's lanes read consecutive 4 * CPT-byte slices: conflict-free up to CPT = 4,
  // 2-way bank conflicts at CPT = 8 (two 16-byte loads 32 bytes apart), a shape not profiled.
  __shared__ __align__(16) Acc q_shared[QS ? kWarpsPerBlock * HC * C : 1];
  Acc* qs = q_shared + (QS ? warp * HC * C : 0);
  const Acc ninf = neg_inf<Acc>();
  for_each_item<1, HC>(p, [&](bool heavy, int64_t i, int hg, int64_t, int64_t end, int64_t first, int64_t step) {
    const int h0 = hg * HC;
    Acc qr[QS ? 1 : HC][CPT], acc[HC][CPT], m[HC], s[HC];
#pragma unroll
    for (int j = 0; j < HC; ++j) {
      if constexpr (QS) {
        Acc t[CPT];
        load_row<T, Acc, CPT, true>(t, p.q + i * p.ldq + int64_t(h0 + j) * C, c0, C);
        store_row<Acc, Acc, CPT, true>(qs + j * C, t, c0, C);
      } else {
        load_row<T, Acc, CPT, true>(qr[j], p.q + i * p.ldq + int64_t(h0 + j) * C, c0, C);
      }
      zero(acc[j]);
      m[j] = ninf;
      s[j] = 0;
    }
    auto fetch = [&](int64_t e, Acc (&kr)[CPT]) {
      if (e < end) load_row<T, Acc, CPT, true>(kr, p.k + int64_t(p.idx[e]) * p.ldk, c0, C);
      else zero(kr);
    };
    Acc kr[CPT];
    fetch(first, kr);
    for (int64_t e = first; e < end; e += step) {
      Acc kn[CPT];
      fetch(e + step, kn);
      Acc part[HC];
#pragma unroll
      for (int j = 0; j < HC; ++j) {
        part[j] = 0;
        if constexpr (QS) {
          Acc q[CPT];
          load_row<Acc, Acc, CPT, true>(q, qs + j * C, c0, C);
#pragma unroll
          for (int t = 0; t < CPT; ++t) part[j] += q[t] * kr[t];
        } else {
#pragma unroll
          for (int t = 0; t < CPT; ++t) part[j] += qr[j][t] * kr[t];
        }
      }
      const Acc mine = multi_sum<HC>(part, lane);
#pragma unroll
      for (int j = 0; j < HC; ++j) {
        const Acc l = __shfl_sync(kFull, mine, j * SPAN) * p.scale;
        if (l > m[j]) {  // new running max: rescale what was accumulated
          const Acc corr = m[j] == ninf ? Acc(0) : dexp(m[j] - l);
          s[j] *= corr;
#pragma unroll
          for (int t = 0; t < CPT; ++t) acc[j][t] *= corr;
          m[j] = l;
        }
        const Acc pe = dexp(l - m[j]);
        s[j] += pe;
        const Acc w = pe * dropout_factor(p, e, h0 + j);
        if (w != Acc(0))
#pragma unroll
          for (int t = 0; t < CPT; ++t) acc[j][t] += w * kr[t];
      }
#pragma unroll
      for (int t = 0; t < CPT; ++t) kr[t] = kn[t];
    }
    if (heavy) {  // merge the warps' states; every warp computes the block's state
      const int nwarps = blockDim.x >> 5;
      Acc* mine = smem + warp * W;
#pragma unroll
      for (int j = 0; j < HC; ++j) {
        if (lane == 0) {
          mine[2 * j] = m[j];
          mine[2 * j + 1] = s[j];
        }
#pragma unroll
        for (int t = 0; t < CPT; ++t) mine[2 * HC + j * C + c0 + t] = acc[j][t];
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < HC; ++j) {
        Acc M = ninf;
        for (int w = 0; w < nwarps; ++w) M = smem[w * W + 2 * j] > M ? smem[w * W + 2 * j] : M;
        s[j] = 0;
        zero(acc[j]);
        for (int w = 0; w < nwarps; ++w) {
          const Acc mw = smem[w * W + 2 * j];
          const Acc c = mw == ninf ? Acc(0) : dexp(mw - M);
          s[j] += smem[w * W + 2 * j + 1] * c;
#pragma unroll
          for (int t = 0; t < CPT; ++t) acc[j][t] += smem[w * W + 2 * HC + j * C + c0 + t] * c;
        }
        m[j] = M;
      }
      __syncthreads();
    }
    if (heavy && warp != 0) return;
#pragma unroll
    for (int j = 0; j < HC; ++j) {
      const int h = h0 + j;
      const Acc inv = s[j] > 0 ? Acc(1) / s[j] : Acc(0);
#pragma unroll
      for (int t = 0; t < CPT; ++t) acc[j][t] *= inv;
      if (p.out_bias)  // the layer's bias, added before the one rounding to T
#pragma unroll
        for (int t = 0; t < CPT; ++t) acc[j][t] += p.out_bias[int64_t(h) * C + c0 + t];
      if (p.res) {  // the layer's skip, likewise
        Acc rr[CPT];
        load_row<T, Acc, CPT, true>(rr, p.res + i * p.ldr + int64_t(h) * C, c0, C);
#pragma unroll
        for (int t = 0; t < CPT; ++t) acc[j][t] += rr[t];
      }
      store_row<T, Acc, CPT, true>(p.out + i * p.ldo + int64_t(h) * C, acc[j], c0, C);
      if (lane == j && p.lse) p.lse[i * p.H + h] = s[j] > 0 ? m[j] + dlog(s[j]) : ninf;
    }
  });
}

// Heads per item: the most of 8, 4, 2 that divide H and keep HC x CPT <= 16 accumulators a lane
// (C = 128: 4 heads, C = 256: 2). The kernel then takes at most 80 registers (ptxas, sm_90, every
// dtype; the 16-accumulator shapes with their queries in shared memory; 8 heads of C = 64 spill 4-8
// bytes); at HC x CPT = 32 it took 128 with the queries in registers and spilled 8-120 bytes. 1 when
// none divides H (then cuda.fused, whose items are per head anyway, is as good).
int heads_per_item(int64_t heads, int64_t C) {
  for (int hc : {8, 4, 2})
    if (heads % hc == 0 && hc * (C / 32) <= kMaxAccumulators) return hc;
  return 1;
}

// Calls f(IC<CPT>, IC<HC>) for the exact widths and head counts the kernel is built for.
template <class F>
void with_shape(int64_t C, int hc, F&& f) {
  auto heads = [&](auto cpt) {
    constexpr int CPT = decltype(cpt)::value;
    switch (hc) {
      case 2: return f(cpt, IC<2>{});
      case 4:
        if constexpr (4 * CPT <= kMaxAccumulators) return f(cpt, IC<4>{});
        break;
      case 8:
        if constexpr (8 * CPT <= kMaxAccumulators) return f(cpt, IC<8>{});
        break;
      default: break;
    }
    TESSERA_CHECK(false, "attention (cuda.multi_query): no configuration for ", hc, " heads of width ", C);
  };
  switch (C) {
    case 32: return heads(IC<1>{});
    case 64: return heads(IC<2>{});
    case 128: return heads(IC<4>{});
    case 256: return heads(IC<8>{});
    default: TESSERA_CHECK(false, "attention (cuda.multi_query): head width ", C, " is not 32, 64, 128 or 256");
  }
}

template <class T, class I>
void multi_query_forward_t(const AttentionArgs<I>& a, const Exec& exec) {
  using D = typename dev_type<T>::type;
  using Acc = typename detail::acc_of<T>::type;
  const auto& A = a.A;
  if (A.rows == 0) return;
  const cudaStream_t s = cuda_stream(exec.stream);
  const auto p = forward_params<T, I, D, Acc>(a);  // alpha is null: the variant refuses it
  const int hc = heads_per_item(a.heads, a.channels);
  Schedule<I> sched(exec, A.id, Walk::targets, A.rowptr, A.rows, A.nnz, a.heads / hc, s);
  with_shape(a.channels, hc, [&](auto cpt, auto heads) {
    constexpr int CPT = decltype(cpt)::value, HC = decltype(heads)::value;
    const size_t heavy_bytes = sizeof(Acc) * size_t(kWarpsPerBlock) * (2 * HC + HC * 32 * CPT);
    launch_items(multi_query_forward_kernel<D, I, Acc, CPT, HC>, p, sched, 0, heavy_bytes, s, HC);
  });
}

}  // namespace
}  // namespace cuda_attention

namespace detail {

template <class I>
bool attention_multi_query_eligible(const AttentionArgs<I>& a) {
  const DType t = a.query.dtype;
  const int64_t C = a.channels;
  if (a.kind != AttentionKind::transformer || !a.shared_kv() || a.has_edge_features() || a.alpha) return false;
  if (a.value.data != a.key.data || a.value.ld != a.key.ld) return false;  // the value is the key
  if (C != 32 && C != 64 && C != 128 && C != 256) return false;
  if (cuda_attention::heads_per_item(a.heads, C) < 2) return false;
  return (t == DType::f32 || t == DType::f16 || t == DType::bf16) && rows_vector_aligned(a.query) &&
         rows_vector_aligned(a.key) && rows_vector_aligned(a.out) &&
         rows_vector_aligned(a.residual);  // null: aligned
}

template <class I>
void attention_forward_cuda_multi_query(const AttentionArgs<I>& a, const Exec& exec) {
  TESSERA_CHECK(attention_multi_query_eligible(a), "attention (cuda.multi_query): needs the Transformer with one "
                "key row that is also the value (kv_heads = 1), no edge features or attention weights, an even "
                "head count, a head width of 32, 64, 128 or 256 and 16-byte aligned f32/f16/bf16 rows");
  switch (a.query.dtype) {
    case DType::f32: return cuda_attention::multi_query_forward_t<float, I>(a, exec);
    case DType::f16: return cuda_attention::multi_query_forward_t<half_t, I>(a, exec);
    default: return cuda_attention::multi_query_forward_t<bf16_t, I>(a, exec);
  }
}

#define TESSERA_INSTANTIATE(I)                                                  \
  template bool attention_multi_query_eligible(const AttentionArgs<I>&);        \
  template void attention_forward_cuda_multi_query(const AttentionArgs<I>&, const Exec&);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace detail
}  // namespace tessera::ops
