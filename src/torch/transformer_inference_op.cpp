// tessera::transformer_inference: TransformerConv's forward as one op, for the Python layer's calls
// without autograd (python/tessera/nn/transformer.py, TransformerConv._inference).
//
// Why one op: on small graphs (Cora, PubMed) the layer's forward is bound by its host path, and
// most of that path was the layer's Python around the ops, not the ops: a Cora 4x64 forward took
// 175-179 us of host time per call, of which tessera.linear took 16 and tessera.attention 41.5,
// over 165 Python calls (H100, bench/results/gpu_20261206h). Here the projections, the attention
// and the skip are chained in C++, and the Python layer keeps only its argument checks, its graph
// cache and the lookup of its kept weights. Measured (H100, bench/results/gpu_20261207, a faster
// host than gpu_20261206h's): host time per Cora 4x64 call 96.5 -> 72.3 us, the event-timed forward
// 107-111 -> 88-96 us; what is left is mostly the ops' own host path.
//
//   transformer_inference(x_src, x_dst, rowptr, col, graph_id, heads, concat,
//                         w_in, b_in?, split_in?, w_skip?, b_skip?, split_skip?,
//                         w_value?, b_value?, b_out?, split_value?, nonempty?, skip_stacked) -> out
//
// Unfolded (w_value undefined; x_src is x_dst): w_in = [W_q; W_k; W_v] stacked, [3 H C, K] (b_in
// likewise; split_in its kept linear_split_weight, or undefined), one product, q, k and v its column
// blocks; then the attention at scale 1/sqrt(C). (A bipartite unfolded call stays on the Python
// path: its q and k read inputs of different widths, so there is no one stack.)
// skip_stacked (unfolded, heads concatenated): w_in = [W_q; W_k; W_v; W_skip] (b_in likewise), and
// the product's fourth column block, lin_skip(x), is added to the attention's output in its own
// write (the attention's residual), in place of a second product that reads x again and reads and
// writes the output again (w_skip then undefined). On the grid 4x64 (2^20 nodes) the second product
// took 1.10 ms of a 4.8 ms forward (H100, bench/results/gpu_20261206f).
// Folded (w_value = W_v; the Python layer's _folded_attention has the derivation): w_in = the heads'
// W_k,h^T W_q,h stacked, [H K, K_dst], b_in = the stacked W_k,h^T b_q,h; the queries attend over
// x_src as every head's key and value; then each head's block of the aggregate times its rows of
// W_v (split_value: the split of W_v, with W_skip where the skip is added in that product), plus
// lin_skip(x_dst) in the same product where heads are concatenated. b_value = b_v; b_out = the
// product's bias when every row has an entry (b_v + b_skip, kept by the caller; else b_v's or
// b_skip's alone); nonempty = the graph's nonempty_rows() mask where a row has none: then b_v goes
// to the rows with entries only (an empty row's aggregate is 0), as a rank-1 update.
// Either form: the mean over heads unless concat, then + lin_skip(x_dst) (w_skip, b_skip,
// split_skip) where it was not added in the folded product.
//
// Registered as a composite op: under autograd each op it calls records its own node, so its
// gradients are those of the ops; the layer uses it without autograd only, where the training
// path's choices (dropout, the transpose for backward) do not arise.
#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/core/GradMode.h>
#include <torch/library.h>

#include <cmath>
#include <optional>

#include "attention_op.hpp"
#include "boundary.hpp"
#include "linear_op.hpp"
#include "optional_args.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

namespace {

constexpr const char* kOp = "transformer_inference";

// A [rows, width] floating matrix on x's device and dtype.
void check_matrix(const at::Tensor& t, const at::Tensor& x, const char* name, int64_t rows, int64_t width) {
  TESSERA_CHECK(t.dim() == 2 && t.size(0) == rows && t.size(1) == width, kOp, ": ", name, " must be [", rows, ", ",
                width, "], got shape ", t.sizes());
  TESSERA_CHECK(t.scalar_type() == x.scalar_type() && t.device() == x.device(), kOp, ": ", name, " is ",
                t.scalar_type(), " on ", t.device(), " but x_dst is ", x.scalar_type(), " on ", x.device());
}

void check_bias(const OptTensor& b, const at::Tensor& x, const char* name, int64_t n) {
  if (!has(b)) return;
  TESSERA_CHECK(b->dim() == 1 && b->size(0) == n, kOp, ": ", name, " must be [", n, "], got shape ", b->sizes());
  TESSERA_CHECK(b->scalar_type() == x.scalar_type() && b->device() == x.device(), kOp, ": ", name, " is ",
                b->scalar_type(), " on ", b->device(), " but x_dst is ", x.scalar_type(), " on ", x.device());
}

at::Tensor attend(const at::Tensor& rowptr, const at::Tensor& col, int64_t graph_id, const at::Tensor& query,
                  const at::Tensor& key, const at::Tensor& value, int64_t heads, double scale,
                  const at::Tensor& residual = {}) {
  AttentionGraph ag;
  ag.rowptr = rowptr;
  ag.col = col;
  ag.num_src = key.size(0);
  ag.graph_id = graph_id;
  AttentionOptions o;
  o.kind = "transformer";
  o.heads = heads;
  o.scale = scale;
  return std::get<0>(attention(ag, query, key, value, at::Tensor(), o, {}, {}, {}, residual));
}

}  // namespace

at::Tensor transformer_inference(const at::Tensor& x_src, const at::Tensor& x_dst, const at::Tensor& rowptr,
                                 const at::Tensor& col, int64_t graph_id, int64_t heads, bool concat,
                                 const at::Tensor& w_in, const OptTensor& b_in, const OptTensor& split_in,
                                 const OptTensor& w_skip, const OptTensor& b_skip, const OptTensor& split_skip,
                                 const OptTensor& w_value, const OptTensor& b_value, const OptTensor& b_out,
                                 const OptTensor& split_value, const OptTensor& nonempty, bool skip_stacked) {
  TESSERA_CHECK(x_src.dim() == 2 && x_dst.dim() == 2, kOp, ": x_src and x_dst must be 2-D, got shapes ",
                x_src.sizes(), " and ", x_dst.sizes());
  TESSERA_CHECK(heads >= 1, kOp, ": heads must be positive, got ", heads);
  TESSERA_CHECK(x_src.scalar_type() == x_dst.scalar_type() && x_src.device() == x_dst.device(), kOp,
                ": x_src is ", x_src.scalar_type(), " on ", x_src.device(), " but x_dst is ", x_dst.scalar_type(),
                " on ", x_dst.device());
  const int64_t H = heads, K = x_src.size(1), K_dst = x_dst.size(1);
  const bool fold = has(w_value);
  // Every argument is checked before any work: a bad one raises with nothing computed.
  int64_t C = 0;
  const int64_t blocks = skip_stacked ? 4 : 3;  // the stacked product's column blocks
  if (!fold) {
    TESSERA_CHECK(w_in.dim() == 2 && w_in.size(0) % (blocks * H) == 0, kOp, ": w_in must be ",
                  skip_stacked ? "[W_q; W_k; W_v; W_skip], [4" : "[W_q; W_k; W_v], [3", " heads C, in], got shape ",
                  w_in.sizes(), " with heads = ", H);
    C = w_in.size(0) / (blocks * H);
    check_matrix(w_in, x_dst, "w_in", blocks * H * C, K);
    check_bias(b_in, x_dst, "b_in", blocks * H * C);
    TESSERA_CHECK(!skip_stacked || (concat && !has(w_skip)), kOp, ": skip_stacked needs the heads concatenated ",
                  "(the skip is added to the attention's [N, heads C] output) and no separate w_skip");
    TESSERA_CHECK(x_src.is_same(x_dst), kOp, ": the unfolded form takes one x (x_src is x_dst): the stacked w_in ",
                  "is one product of it");
  } else {
    TESSERA_CHECK(!skip_stacked, kOp, ": skip_stacked is for the unfolded form (w_value undefined)");
    TESSERA_CHECK(w_value->dim() == 2 && w_value->size(0) % H == 0, kOp, ": w_value must be [heads C, in], got shape ",
                  w_value->sizes(), " with heads = ", H);
    C = w_value->size(0) / H;
    check_matrix(*w_value, x_dst, "w_value", H * C, K);
    check_matrix(w_in, x_dst, "w_in (the folded query operators)", H * K, K_dst);
    check_bias(b_in, x_dst, "b_in", H * K);
    check_bias(b_value, x_dst, "b_value", H * C);
    check_bias(b_out, x_dst, "b_out", H * C);
    if (has(nonempty))
      TESSERA_CHECK(nonempty->dim() == 2 && nonempty->size(0) == x_dst.size(0) && nonempty->size(1) == 1, kOp,
                    ": nonempty must be [", x_dst.size(0), ", 1], got shape ", nonempty->sizes());
  }
  const int64_t width = concat ? H * C : C;  // the output's
  if (has(w_skip)) {
    check_matrix(*w_skip, x_dst, "w_skip", width, K_dst);
    check_bias(b_skip, x_dst, "b_skip", width);
  }
  // Without autograd (the layer's only use) the inner ops and views go straight to their
  // device kernels: each would otherwise pass its Autograd kernel, find no input needing a
  // gradient and dispatch again, and each slice would record view metadata no one reads. Measured
  // (H100, the op alone, host time): folded 2x256 37.5 -> 29.2 us, unfolded 4x64 27.7 -> 23.2 us
  // (bench/results/gpu_20261207d call A).
  std::optional<at::AutoDispatchBelowADInplaceOrView> below_autograd;
  if (!at::GradMode::is_enabled()) below_autograd.emplace();
  at::Tensor out;
  bool skip_added = false;  // lin_skip(x_dst) added in the folded form's last product
  if (!fold) {
    const int64_t HC = H * C;
    const at::Tensor y = call_linear(x_dst, w_in, b_in, {}, split_in);  // q, k, v (and the skip) its column blocks
    const at::Tensor q = y.slice(1, 0, HC), k = y.slice(1, HC, 2 * HC), v = y.slice(1, 2 * HC, 3 * HC);
    const at::Tensor skip = skip_stacked ? y.slice(1, 3 * HC, 4 * HC) : at::Tensor();
    out = attend(rowptr, col, graph_id, q, k, v, H, 0.0, skip);  // scale 0: the kernels' 1/sqrt(C)
  } else {
    const at::Tensor query = call_linear(x_dst, w_in, b_in, {}, split_in);  // head h's query in columns h K ..
    const at::Tensor agg = attend(rowptr, col, graph_id, query, x_src, x_src, H, 1.0 / std::sqrt(double(C)));
    const bool masked = has(nonempty) && has(b_value);
    skip_added = has(w_skip) && concat;
    at::Tensor bias = masked ? at::Tensor() : has(b_out) ? *b_out : or_undefined(b_value);
    at::Tensor bias2 = skip_added && (masked || !has(b_out)) ? or_undefined(b_skip) : at::Tensor();
    out = linear_heads(agg, *w_value, bias, skip_added ? x_dst : at::Tensor(),
                       skip_added ? *w_skip : at::Tensor(), bias2, or_undefined(split_value));
    if (masked) out.addmm_(nonempty->to(out.scalar_type()), b_value->view({1, -1}));
  }
  if (!concat) out = out.view({-1, H, C}).mean(1);
  if (!has(w_skip) || skip_added) return out;
  return call_linear(x_dst, *w_skip, b_skip, out, split_skip);  // x_dst W_skip^T + b_skip + out, one kernel
}

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("transformer_inference(Tensor x_src, Tensor x_dst, Tensor rowptr, Tensor col, int graph_id, int heads, "
        "bool concat, Tensor w_in, Tensor? b_in=None, Tensor? split_in=None, Tensor? w_skip=None, "
        "Tensor? b_skip=None, Tensor? split_skip=None, Tensor? w_value=None, Tensor? b_value=None, "
        "Tensor? b_out=None, Tensor? split_value=None, Tensor? nonempty=None, bool skip_stacked=False) -> Tensor",
        TESSERA_OP(tessera::pt::transformer_inference));
}
