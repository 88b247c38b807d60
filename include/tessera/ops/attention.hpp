#pragma once
// Attention family: fused GATv2 and Graph Transformer (TransformerConv) message passing, forward
// and backward, without edge tensors. CSR rows are targets (in-neighbours, see graph/csr.hpp).
//
// Semantics, per target i, head h (C channels per head, features laid out [node, h*C + c]):
//   GATv2:        e_ij = sum_c att[h,c] * LeakyReLU(query[i,h,c] + key[j,h,c], negative_slope)
//                 query = x_r = lin_r(x_dst), key = x_l = lin_l(x_src), and the value is key (x_l).
//   Transformer:  e_ij = scale * <query[i,h,:], key[j,h,:]>, scale = 1/sqrt(C) unless given;
//                 the value is `value`.
//   alpha_ij = softmax_j(e_ij) over the entries of row i (duplicate edges count separately, a
//   self-loop is an ordinary entry); with dropout p each alpha_ij is zeroed with probability p and
//   the survivors scaled by 1/(1-p) (F.dropout), the mask drawn by attention_dropout_keep() from
//   (seed, edge position k in A, head), so backward reproduces it exactly.
//   out[i,h,:] = sum_j alpha'_ij value[j,h,:]; an empty row gives 0 and lse = -inf.
//   lse[i,h] = log sum_j exp(e_ij) (the softmax normalizer, kept for backward).
//   out_bias (H*C) and residual (A.rows x H*C) are added to out in the same write; an empty row's
//   out is then those alone. Neither changes lse, alpha or any gradient (d residual = dout).
//   Optional `alpha` (nnz x H, row-major [k*H + h]): the attention weights, before dropout unless
//   alpha_after_dropout (PyG's GATv2Conv returns them after dropout, TransformerConv before).
//   Nothing of size O(nnz*H) is written unless `alpha` is requested.
//
// Edge features (optional, PyG's edge_dim; every backend): edge_attr (nnz x D, in A's
// entry order) and edge_weight (H*C x D, lin_edge.weight) give each entry the projection
// eh_k = edge_weight edge_attr_k (H*C), computed where it is used and never stored:
//   GATv2:        e_ij = sum_c att[h,c] * LeakyReLU(query[i,h,c] + key[j,h,c] + eh_k[h,c])
//   Transformer:  e_ij = scale * <query[i,h,:], key[j,h,:] + eh_k[h,:]>, message value[j] + eh_k.
//   Backward, with g_k = d loss / d eh_k (GATv2: dS a lrelu'(z); Transformer: scale dS q_i +
//   alpha'_ij dO_i): dedge_attr_k = edge_weight^T g_k, dedge_weight = sum_k g_k edge_attr_k^T.
//
// Backward recomputes alpha from lse: per target, walks over its entries give
//   Delta_i = sum_j alpha_ij dA_ij  (dA_ij = m_ij/(1-p) <dO_i, value_j>, = <O_i, dO_i> in exact
//   arithmetic, but summed here from the edges, so it stays exact when out is 16-bit; out is not
//   read), then dq and datt from dS_ij = alpha_ij (dA_ij - Delta_i) (the CPU backend keeps the
//   row's alpha and alpha*dA in per-thread scratch between its two walks; the CUDA backend
//   accumulates the Delta-free parts in one walk):
//   Transformer: dq_i = scale sum_j dS_ij k_j; dk_j = scale sum_i dS_ij q_i; dv_j = sum_i alpha'_ij dO_i
//   GATv2: z = x_r[i] + x_l[j]; dx_r[i] += dS a lrelu'(z); dx_l[j] += dS a lrelu'(z) + alpha' dO_i;
//          datt += dS lrelu(z)   (lrelu'(0) = slope, as torch's leaky_relu backward).
//   Source-side gradients walk the transpose of A (built per call, or the caller's cached one from
//   build_attention_transpose), or A itself when the caller declares the graph symmetric.
//
// Multi-query attention (kv_heads = 1, the Transformer without edge features): every head reads the
//   same C-wide key and value rows (key/value A.cols x C), each with its own query and output
//   columns; dkey and dvalue are then A.cols x C, summed over the heads. TransformerConv's folded
//   form (python/tessera/nn/transformer.py) attends over x_src itself this way, all heads in one call.
//
// Types: query/key/value/out/dout and all feature gradients share one dtype (f32, f64, f16,
//   bf16); att, datt, lse and alpha use the accumulation type (double for f64, float otherwise).
//   Feature rows may be strided (ld >= H*C).
//
// Errors: shape, dtype and device mismatches, a missing att (GATv2), dropout outside [0, 1], a
//   symmetric declaration with rows != cols, kv_heads other than 0, 1 or heads (1 with GATv2 or
//   edge features), and an unknown or ineligible variant throw
//   tessera::Error naming the argument ("attention: key has 5 rows but A has 7 columns").
#include <cstdint>
#include <string>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/tune/registry.hpp"

#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__
#else
#define TESSERA_HD
#endif

namespace tessera::ops {

enum class AttentionKind : uint8_t { gatv2, transformer };
const char* attention_kind_name(AttentionKind k);
AttentionKind parse_attention_kind(const std::string& s);  // "gatv2" | "transformer"

// Counter-based dropout mask, identical on host and device: keep edge position k of head h iff
// the 24-bit hash of (seed, k, h) is >= threshold = round(p * 2^24).
TESSERA_HD inline uint64_t attention_mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
TESSERA_HD inline uint32_t attention_dropout_threshold(double p) {
  return p <= 0 ? 0u : p >= 1 ? (1u << 24) : uint32_t(p * 16777216.0 + 0.5);
}
TESSERA_HD inline bool attention_dropout_keep(uint64_t seed, uint64_t edge, uint64_t head,
                                              uint32_t threshold) {
  const uint64_t r =
      attention_mix64(seed ^ (edge * 0x9E3779B97F4A7C15ull + head * 0xD1B54A32D192ED03ull));
  return uint32_t(r >> 40) >= threshold;
}

// Transpose of A with the edge permutation: the entries of source j are t in
// [colptr[j], colptr[j+1]), each with its target row[t] and its position perm[t] in A's col
// array, in increasing position order.
template <class I>
struct AttentionTransposeView {
  int64_t sources = 0, nnz = 0;
  const I* colptr = nullptr;   // sources + 1
  const I* row = nullptr;      // nnz
  const I* perm = nullptr;     // nnz
  Device device{};
};

template <class I>
struct AttentionArgs {
  AttentionKind kind = AttentionKind::transformer;
  CsrView<I> A;                // rows = targets, cols = sources; A.values is ignored
  int64_t heads = 1, channels = 0;
  DenseView query;             // A.rows x H*C: q (Transformer) or x_r (GATv2)
  DenseView key;               // A.cols x kv_width(): k (Transformer) or x_l (GATv2, also the value)
  DenseView value;             // A.cols x kv_width(): v (Transformer); GATv2: leave empty (data null)
  int64_t kv_heads = 0;        // 0 or heads: a key/value slice per head; 1: shared by every head
  const void* att = nullptr;   // GATv2: H*C attention vector, accumulation type
  double negative_slope = 0.2; // GATv2
  double scale = 0;            // Transformer: 0 means 1/sqrt(C)
  double dropout = 0;          // probability in [0, 1]
  uint64_t dropout_seed = 0;
  DenseView edge_attr;         // optional: A.nnz x D edge features (data null = none)
  DenseView edge_weight;       // with edge_attr: H*C x D projection, the features' dtype
  DenseView out;               // A.rows x H*C (written)
  const void* out_bias = nullptr;  // optional H*C accumulation type, added to every out row in the
                                   // same write (GATv2's bias: no second pass over out)
  DenseView residual;          // optional A.rows x H*C, out's dtype (data null = none): row i added
                               // to out row i in the same write (TransformerConv's skip, made in
                               // the q/k/v product: no second pass over out); may not alias out
  void* lse = nullptr;         // A.rows*H accumulation type (written; backward needs it)
  void* alpha = nullptr;       // optional nnz*H accumulation type (written when non-null)
  bool alpha_after_dropout = false;

  double logit_scale() const;
  bool has_edge_features() const { return edge_attr.data != nullptr; }
  bool shared_kv() const { return kv_heads == 1 && heads > 1; }
  int64_t kv_width() const { return shared_kv() ? channels : heads * channels; }
};

template <class I>
struct AttentionBackwardArgs {
  AttentionArgs<I> fwd;        // the forward's inputs and lse (read); out and alpha not used
  DenseView dout;              // A.rows x H*C
  DenseView dquery;            // A.rows x H*C (written)
  DenseView dkey;              // A.cols x kv_width() (written; GATv2: the whole gradient of x_l)
  DenseView dvalue;            // A.cols x kv_width() (written, Transformer only)
  void* datt = nullptr;        // GATv2: H*C accumulation type (written)
  DenseView dedge_attr;        // with edge features: A.nnz x D (written)
  void* dedge_weight = nullptr;  // with edge features: H*C x D accumulation type (written)
  const AttentionTransposeView<I>* transpose = nullptr;  // optional cached transpose of A
  bool symmetric = false;      // caller promises A equals its transpose as a multiset of edges
};

// Runs the forward / backward. Forward, variant "": tune::choose (TESSERA_VARIANT_ATTENTION, then
// timing under TESSERA_TUNE=1 and the tuner's cache, then the heuristic: the fused backend of the
// device). "cuda.wsb" (the Transformer in f16/bf16, C in {16, 32, 64, 128}, no dropout, no alpha,
// no edge features, 16-byte aligned rows, A.id != 0) runs Q K^T and P V on tensor cores over the
// graph's cached WSB format (include/tessera/format/wsb.hpp), built on its first call. Backward,
// variant "": TESSERA_VARIANT_ATTENTION_BACKWARD, else the symmetric path when declared and
// eligible, else the transpose walk; it reads only the forward's lse, so it follows either forward.
template <class I> void attention_forward(const AttentionArgs<I>& a, const Exec& exec,
                                          const std::string& variant = "");
template <class I> void attention_backward(const AttentionBackwardArgs<I>& a, const Exec& exec,
                                           const std::string& variant = "");

// Fills the caller's buffers (on A's device: colptr A.cols+1, row and perm A.nnz) with the
// transpose of A, for callers that cache it across iterations.
template <class I> void build_attention_transpose(const CsrView<I>& A, I* colptr, I* row, I* perm,
                                                  const Exec& exec);

// Drops per-graph CUDA state of the attention walks (their schedules, kept by CsrView::id; id 0,
// anonymous, keeps none). No-op without CUDA.
void attention_clear_caches();

// Validation shared by every backend (also called by the dispatchers).
template <class I> void validate_attention(const AttentionArgs<I>& a, const char* who);
template <class I> void validate_attention_backward(const AttentionBackwardArgs<I>& a);

template <class I> tune::Registry<AttentionArgs<I>>& attention_forward_registry();
template <class I> tune::Registry<AttentionBackwardArgs<I>>& attention_backward_registry();

}  // namespace tessera::ops
