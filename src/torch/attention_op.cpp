// tessera::attention and tessera::attention_backward: schemas, CPU/CUDA kernels (thin calls into
// ops::attention_forward / ops::attention_backward) and the Autograd kernel.
#include "boundary.hpp"
#include "attention_op.hpp"

#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include "column_blocks.hpp"
#include "column_sums.hpp"
#include "tessera/ops/attention.hpp"
#include "needs_grad.hpp"
#include "optional_args.hpp"
#include "outputs.hpp"
#include "views.hpp"

namespace tessera::pt {

namespace {

using Outputs = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

at::Tensor packed_rows(const at::Tensor& t) { return (t.size(1) <= 1 || t.stride(1) == 1) ? t : t.contiguous(); }

template <class I>
ops::AttentionArgs<I> make_args(const char* op, const Device& dev, const at::Tensor& rowptr, const at::Tensor& col,
                                const at::Tensor& q, const at::Tensor& k, const OptTensor& v, const at::Tensor& att,
                                int64_t heads, const std::string& kind, double slope, double scale, double dropout,
                                int64_t seed, int64_t graph_id, const at::Tensor& edge_attr = at::Tensor(),
                                const at::Tensor& edge_weight = at::Tensor()) {
  ops::AttentionArgs<I> a;
  a.kind = ops::parse_attention_kind(kind);
  TESSERA_CHECK(heads >= 1 && q.dim() == 2 && q.size(1) % heads == 0, op, ": query must be [N, heads*C] with heads = ",
                heads, ", got ", q.sizes());
  a.A = csr_view<I>(rowptr, col, k.size(0), dev, op, uint64_t(graph_id));
  a.heads = heads;
  a.channels = q.size(1) / heads;
  // A key as wide as one head (with several heads): one key and value slice shared by the heads.
  a.kv_heads = heads > 1 && k.dim() == 2 && k.size(1) == a.channels ? 1 : 0;
  a.query = dense_view(q, dev, op, "query");
  a.key = dense_view(k, dev, op, "key");
  if (has(v)) a.value = dense_view(*v, dev, op, "value");
  if (att.defined()) {
    TESSERA_CHECK(att.numel() == q.size(1) && att.is_contiguous(), op, ": att must hold heads*C = ", q.size(1),
                  " values, got ", att.sizes());
    a.att = att.data_ptr();
  }
  TESSERA_CHECK(edge_attr.defined() == edge_weight.defined(), op, ": pass both edge_attr and edge_weight or neither");
  if (edge_attr.defined()) {
    TESSERA_CHECK(edge_attr.dim() == 2 && edge_weight.dim() == 2, op, ": edge_attr must be [nnz, D] and edge_weight ",
                  "[heads*C, D], got ", edge_attr.sizes(), " and ", edge_weight.sizes());
    a.edge_attr = dense_view(edge_attr, dev, op, "edge_attr");
    a.edge_weight = dense_view(edge_weight, dev, op, "edge_weight");
  }
  a.negative_slope = slope;
  a.scale = scale;
  a.dropout = dropout;
  a.dropout_seed = uint64_t(seed);
  return a;
}

// Edge features as the kernels read them: rows packed, the query's dtype.
at::Tensor edge_input(const OptTensor& t, const at::Tensor& like) {
  return has(t) ? packed_rows(t->to(like.scalar_type())) : at::Tensor();
}

Outputs attention_kernel(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& query_in,
                         const at::Tensor& key_in, const OptTensor& value_in, const OptTensor& att_in, int64_t heads,
                         c10::string_view kind_sv, double slope, double scale, double dropout, int64_t seed,
                         bool return_alpha, bool alpha_after_dropout, const OptTensor&, const OptTensor&,
                         const OptTensor&, bool, int64_t graph_id, const OptTensor& edge_attr_in,
                         const OptTensor& edge_weight_in, const OptTensor& bias_in, const OptTensor& residual_in) {
  const std::string kind(kind_sv);
  TESSERA_CHECK(query_in.dim() == 2 && key_in.dim() == 2, "attention: query and key must be 2-D, got ",
                query_in.sizes(), " and ", key_in.sizes());
  const at::Tensor q = packed_rows(query_in), k = packed_rows(key_in);
  OptTensor v;
  if (has(value_in)) v = packed_rows(*value_in);
  TorchExec ex(q);
  const Device dev = ex.device();
  const auto acc = accum_type(q.scalar_type());
  at::Tensor att;
  if (has(att_in)) att = att_in->to(acc).contiguous();
  const int64_t rows = rowptr.size(0) - 1;
  auto out = empty_output({rows, q.size(1)}, q.options());
  auto lse = at::empty({rows, heads}, q.options().dtype(acc));
  auto alpha = at::empty({return_alpha ? col.size(0) : 0, heads}, q.options().dtype(acc));
  const at::Tensor ea = edge_input(edge_attr_in, q), ew = edge_input(edge_weight_in, q);
  at::Tensor bias;
  if (has(bias_in)) {
    TESSERA_CHECK(bias_in->dim() == 1 && bias_in->size(0) == q.size(1), "attention: bias must be [heads*C] = [",
                  q.size(1), "], got ", bias_in->sizes());
    TESSERA_CHECK(bias_in->device() == q.device(), "attention: bias is on ", bias_in->device(), " but query on ",
                  q.device());
    bias = bias_in->to(acc).contiguous();
  }
  at::Tensor residual;
  if (has(residual_in)) {
    TESSERA_CHECK(residual_in->dim() == 2 && residual_in->size(0) == rows && residual_in->size(1) == q.size(1),
                  "attention: residual must be [", rows, ", ", q.size(1), "] (one row per target), got ",
                  residual_in->sizes());
    TESSERA_CHECK(residual_in->device() == q.device(), "attention: residual is on ", residual_in->device(),
                  " but query on ", q.device());
    residual = packed_rows(residual_in->to(q.scalar_type()));
  }
  TESSERA_DISPATCH_INDEX(index_type_from(rowptr, "attention: rowptr"), I, [&] {
    auto a = make_args<I>("attention", dev, rowptr, col, q, k, v, att, heads, kind, slope, scale, dropout, seed,
                          graph_id, ea, ew);
    a.out = dense_view(out, dev, "attention", "out");
    a.out_bias = bias.defined() ? bias.data_ptr() : nullptr;
    if (residual.defined()) a.residual = dense_view(residual, dev, "attention", "residual");
    a.lse = lse.data_ptr();
    a.alpha = return_alpha ? alpha.data_ptr() : nullptr;
    a.alpha_after_dropout = alpha_after_dropout;
    ops::attention_forward<I>(a, ex.get());
  });
  return {out, lse, alpha};
}

Grads attention_backward_kernel(const at::Tensor& grad_out, const at::Tensor& rowptr, const at::Tensor& col,
                                const at::Tensor& query_in, const at::Tensor& key_in, const OptTensor& value_in,
                                const OptTensor& att_in, const at::Tensor& lse_in,
                                int64_t heads, c10::string_view kind_sv, double slope, double scale, double dropout,
                                int64_t seed, const OptTensor& t_rowptr, const OptTensor& t_col,
                                const OptTensor& t_perm, bool symmetric, const OptTensor& edge_attr_in,
                                const OptTensor& edge_weight_in) {
  const std::string kind(kind_sv);
  const at::Tensor q = packed_rows(query_in), k = packed_rows(key_in);
  const at::Tensor dout = packed_rows(grad_out.to(q.scalar_type()));
  OptTensor v;
  if (has(value_in)) v = packed_rows(*value_in);
  TorchExec ex(q);
  const Device dev = ex.device();
  const auto acc = accum_type(q.scalar_type());
  at::Tensor att;
  if (has(att_in)) att = att_in->to(acc).contiguous();
  const at::Tensor lse = lse_in.to(acc).contiguous();
  // Laid out like q, k (and v): when they are column blocks of the projection node's one output,
  // so are their gradients, which that node's backward then takes as one matrix.
  std::vector<at::Tensor> in{q, k};
  if (v) in.push_back(*v);
  const std::vector<at::Tensor> d = empty_like_blocks(in);
  at::Tensor dq = d[0], dk = d[1], dv = v ? d[2] : at::Tensor();
  at::Tensor datt = att.defined() ? at::empty({att.numel()}, q.options().dtype(acc)) : at::Tensor();
  const at::Tensor ea = edge_input(edge_attr_in, q), ew = edge_input(edge_weight_in, q);
  at::Tensor dea = ea.defined() ? empty_output_like(ea) : at::Tensor();
  at::Tensor dew = ew.defined() ? at::empty(ew.sizes(), q.options().dtype(acc)) : at::Tensor();
  TESSERA_CHECK(has(t_rowptr) == has(t_col) && has(t_col) == has(t_perm),
                "attention: pass all of t_rowptr, t_col, t_perm (a cached transpose) or none");
  TESSERA_DISPATCH_INDEX(index_type_from(rowptr, "attention: rowptr"), I, [&] {
    ops::AttentionBackwardArgs<I> b;
    b.fwd = make_args<I>("attention_backward", dev, rowptr, col, q, k, v, att, heads, kind, slope, scale, dropout,
                         seed, 0, ea, ew);
    if (ea.defined()) {
      b.dedge_attr = dense_view(dea, dev, "attention_backward", "dedge_attr");
      b.dedge_weight = dew.data_ptr();
    }
    TESSERA_CHECK(lse.numel() == b.fwd.A.rows * heads, "attention_backward: lse has ", lse.numel(),
                  " entries, expected ", b.fwd.A.rows * heads);
    b.fwd.lse = lse.data_ptr();
    b.dout = dense_view(dout, dev, "attention_backward", "grad_out");
    b.dquery = dense_view(dq, dev, "attention_backward", "dquery");
    b.dkey = dense_view(dk, dev, "attention_backward", "dkey");
    if (dv.defined()) b.dvalue = dense_view(dv, dev, "attention_backward", "dvalue");
    b.datt = datt.defined() ? datt.data_ptr() : nullptr;
    b.symmetric = symmetric;
    ops::AttentionTransposeView<I> tv;
    at::Tensor perm_i;
    if (has(t_rowptr)) {
      const auto t = csr_view<I>(*t_rowptr, *t_col, b.fwd.A.rows, dev, "attention_backward (transpose)");
      TESSERA_CHECK(t_perm->numel() == t_col->numel(), "attention_backward: t_perm has ", t_perm->numel(),
                    " entries but t_col has ", t_col->numel());
      index_type_from(*t_perm, "attention_backward: t_perm");
      perm_i = t_perm->to(t_col->scalar_type()).contiguous();  // the kernels read it as I
      tv = {t.rows, t.nnz, t.rowptr, t.col, perm_i.data_ptr<I>(), dev};
      b.transpose = &tv;
    }
    ops::attention_backward<I>(b, ex.get());
  });
  return {dq, dk, dv, datt, dea, dew};
}

// ---- autograd ----

struct Saved {
  AttentionGraph g;
  AttentionOptions o;
};

class AttentionFunction : public torch::autograd::Function<AttentionFunction> {
 public:
  // extra: att (GATv2) or value (Transformer). Torch 1.13's C++ Function cannot take undefined
  // tensors as inputs, so the one that exists for the kind travels in this slot, and absent edge
  // features travel as 1-D empty tensors (edge_attr and edge_weight are 2-D when given); an
  // absent bias as a 2-D empty tensor (a bias is 1-D), an absent residual as a 1-D one (it is 2-D).
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& query,
                                                const at::Tensor& key, const at::Tensor& extra,
                                                const at::Tensor& edge_attr_or_empty,
                                                const at::Tensor& edge_weight_or_empty,
                                                const at::Tensor& bias_or_empty,
                                                const at::Tensor& residual_or_empty, const AttentionGraph& g,
                                                const AttentionOptions& o) {
    at::AutoDispatchBelowADInplaceOrView below;
    // lse and alpha take no gradient: left undefined, not materialized as zeros (two allocations
    // and fills per training step; bench/results/h200_20261203d, host_gatv2_*.txt).
    ctx->set_materialize_grads(false);
    const bool gat = o.kind == "gatv2";
    const at::Tensor value = gat ? at::Tensor() : extra, att = gat ? extra : at::Tensor();
    const bool edges = edge_attr_or_empty.dim() == 2;
    const at::Tensor ea = edges ? edge_attr_or_empty : at::Tensor(), ew = edges ? edge_weight_or_empty : at::Tensor();
    const bool with_bias = bias_or_empty.dim() == 1, with_residual = residual_or_empty.dim() == 2;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("tessera::attention", "")
                         .typed<decltype(attention_kernel)>();
    auto opt = [](const at::Tensor& t) { return t.defined() ? OptTensor(t) : OptTensor(); };
    auto [out, lse, alpha] = op.call(g.rowptr, g.col, query, key, opt(value), opt(att), o.heads, o.kind,
                                     o.negative_slope, o.scale, o.dropout, o.seed, o.return_alpha,
                                     o.alpha_after_dropout, opt(g.t_rowptr), opt(g.t_col), opt(g.t_perm),
                                     g.symmetric, g.graph_id, opt(ea), opt(ew),
                                     with_bias ? OptTensor(bias_or_empty) : OptTensor(),
                                     with_residual ? OptTensor(residual_or_empty) : OptTensor());
    // out is not saved: the backward never reads it, and the layers may then add their bias or
    // residual into it in place, in training too (one [N, H*C] buffer fewer across the step).
    ctx->save_for_backward({query, key, value, att, lse, ea, ew});
    ctx->saved_data["rowptr"] = g.rowptr;
    ctx->saved_data["col"] = g.col;
    ctx->saved_data["t_rowptr"] = g.t_rowptr;
    ctx->saved_data["t_col"] = g.t_col;
    ctx->saved_data["t_perm"] = g.t_perm;
    ctx->saved_data["symmetric"] = g.symmetric;
    ctx->saved_data["heads"] = o.heads;
    ctx->saved_data["kind"] = o.kind;
    ctx->saved_data["slope"] = o.negative_slope;
    ctx->saved_data["scale"] = o.scale;
    ctx->saved_data["dropout"] = o.dropout;
    ctx->saved_data["seed"] = o.seed;
    ctx->saved_data["bias_grad"] = with_bias && bias_or_empty.requires_grad();
    ctx->saved_data["bias_dtype"] = int64_t(bias_or_empty.scalar_type());
    ctx->saved_data["residual_grad"] = with_residual && residual_or_empty.requires_grad();
    ctx->saved_data["residual_dtype"] = int64_t(residual_or_empty.scalar_type());
    ctx->mark_non_differentiable({lse, alpha});
    return {out, lse, alpha};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto s = ctx->get_saved_variables();
    auto opt = [](const at::Tensor& t) { return t.defined() ? OptTensor(t) : OptTensor(); };
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("tessera::attention_backward", "")
                         .typed<decltype(attention_backward_kernel)>();
    const at::Tensor& query = s[0];
    at::Tensor dout = grads[0].defined() ? grads[0] : at::zeros(query.sizes(), query.options());  // out's shape
    // The bias is added to every row of out: its gradient is dout's column sums, taken before the
    // fused backward allocates dq, dk, dv, so whatever the reduction needs is not on top of them.
    const at::Tensor dbias =
        ctx->saved_data["bias_grad"].toBool()
            ? column_sums(dout, static_cast<at::ScalarType>(ctx->saved_data["bias_dtype"].toInt()))
            : at::Tensor();
    auto [dq, dk, dv, datt, dea, dew] = op.call(
        dout, ctx->saved_data["rowptr"].toTensor(), ctx->saved_data["col"].toTensor(), query, s[1], opt(s[2]),
        opt(s[3]), s[4], ctx->saved_data["heads"].toInt(), ctx->saved_data["kind"].toStringRef(),
        ctx->saved_data["slope"].toDouble(), ctx->saved_data["scale"].toDouble(),
        ctx->saved_data["dropout"].toDouble(), ctx->saved_data["seed"].toInt(),
        opt(ctx->saved_data["t_rowptr"].toTensor()), opt(ctx->saved_data["t_col"].toTensor()),
        opt(ctx->saved_data["t_perm"].toTensor()), ctx->saved_data["symmetric"].toBool(), opt(s[5]), opt(s[6]));
    if (datt.defined() && s[3].defined()) datt = datt.to(s[3].scalar_type()).view(s[3].sizes());
    if (dea.defined()) {
      dea = dea.to(s[5].scalar_type());
      dew = dew.to(s[6].scalar_type());
    }
    // The residual is added to out as it is: its gradient is dout itself.
    const at::Tensor dresidual =
        ctx->saved_data["residual_grad"].toBool()
            ? dout.to(static_cast<at::ScalarType>(ctx->saved_data["residual_dtype"].toInt()))
            : at::Tensor();
    return {dq, dk, s[3].defined() ? datt : dv, dea, dew, dbias, dresidual, at::Tensor(), at::Tensor()};
  }
};

Outputs attention_autograd(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& query,
                           const at::Tensor& key, const OptTensor& value, const OptTensor& att, int64_t heads,
                           c10::string_view kind, double slope, double scale, double dropout, int64_t seed,
                           bool return_alpha, bool alpha_after_dropout, const OptTensor& t_rowptr,
                           const OptTensor& t_col, const OptTensor& t_perm, bool symmetric, int64_t graph_id,
                           const OptTensor& edge_attr, const OptTensor& edge_weight, const OptTensor& bias,
                           const OptTensor& residual) {
  TESSERA_CHECK(has(t_rowptr) == has(t_col) && has(t_col) == has(t_perm),
                "attention: pass all of t_rowptr, t_col, t_perm (a cached transpose) or none");
  AttentionGraph g{rowptr, col, key.size(0), has(t_rowptr) ? *t_rowptr : at::Tensor(),
                   has(t_col) ? *t_col : at::Tensor(), has(t_perm) ? *t_perm : at::Tensor(), symmetric, graph_id};
  AttentionOptions o{std::string(kind), heads, slope, scale, dropout, seed, return_alpha, alpha_after_dropout};
  const bool gat = o.kind == "gatv2";
  TESSERA_CHECK(gat ? has(att) : has(value), "attention: ", gat ? "GATv2 needs att" : "the Transformer needs value");
  TESSERA_CHECK(!(gat && has(value)), "attention: GATv2 takes its value from key (x_l); pass value=None");
  TESSERA_CHECK(has(edge_attr) == has(edge_weight), "attention: pass both edge_attr and edge_weight or neither");
  if (!needs_grad(query, key, value, att, edge_attr, edge_weight, bias, residual)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return attention(g, query, key, value.value_or(at::Tensor()), att.value_or(at::Tensor()), o,
                     edge_attr.value_or(at::Tensor()), edge_weight.value_or(at::Tensor()),
                     bias.value_or(at::Tensor()), residual.value_or(at::Tensor()));
  }
  const at::Tensor none = at::empty({0}, query.options());
  auto r = AttentionFunction::apply(query, key, gat ? *att : *value, has(edge_attr) ? *edge_attr : none,
                                    has(edge_weight) ? *edge_weight : none,
                                    has(bias) ? *bias : at::empty({0, 0}, query.options()),
                                    has(residual) ? *residual : none, g, o);
  return {r[0], r[1], r[2]};
}

}  // namespace

AttentionGraph attention_graph(const Graph& g) {
  AttentionGraph ag;
  ag.rowptr = g.rowptr();
  ag.col = g.col();
  ag.num_src = g.cols();
  ag.graph_id = int64_t(g.id());
  if (at::GradMode::is_enabled()) {
    const auto& t = g.transpose();
    ag.t_rowptr = t.rowptr;
    ag.t_col = t.col;
    ag.t_perm = t.perm;
  }
  return ag;
}

at::Tensor layer_edge_attr(const char* who, const at::Tensor& edge_attr, int64_t edge_dim, int64_t nnz) {
  TESSERA_CHECK(edge_attr.defined() == (edge_dim > 0), who, ": edge_attr must be given exactly when edge_dim > 0 ",
                "(edge_dim = ", edge_dim, ")");
  if (!edge_attr.defined()) return {};
  const at::Tensor ea = edge_attr.dim() == 1 ? edge_attr.view({-1, 1}) : edge_attr;
  TESSERA_CHECK(ea.dim() == 2 && ea.size(0) == nnz && ea.size(1) == edge_dim, who, ": edge_attr is ",
                edge_attr.sizes(), ", expected [", nnz, ", ", edge_dim, "] (one row per graph entry)");
  TESSERA_CHECK(ea.is_floating_point(), who, ": edge_attr must be a floating-point tensor, got ", ea.scalar_type());
  return ea;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention(const AttentionGraph& g, const at::Tensor& query,
                                                         const at::Tensor& key, const at::Tensor& value,
                                                         const at::Tensor& att, const AttentionOptions& o,
                                                         const at::Tensor& edge_attr, const at::Tensor& edge_weight,
                                                         const at::Tensor& bias, const at::Tensor& residual) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("tessera::attention", "")
                       .typed<decltype(attention_kernel)>();
  auto opt = [](const at::Tensor& t) { return t.defined() ? OptTensor(t) : OptTensor(); };
  return op.call(g.rowptr, g.col, query, key, opt(value), opt(att), o.heads, o.kind, o.negative_slope, o.scale,
                 o.dropout, o.seed, o.return_alpha, o.alpha_after_dropout, opt(g.t_rowptr), opt(g.t_col),
                 opt(g.t_perm), g.symmetric, g.graph_id, opt(edge_attr), opt(edge_weight), opt(bias), opt(residual));
}

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("attention(Tensor rowptr, Tensor col, Tensor query, Tensor key, Tensor? value, Tensor? att, int heads, "
        "str kind, float negative_slope=0.2, float scale=0., float dropout=0., int seed=0, bool return_alpha=False, "
        "bool alpha_after_dropout=False, Tensor? t_rowptr=None, Tensor? t_col=None, Tensor? t_perm=None, "
        "bool symmetric=False, int graph_id=0, Tensor? edge_attr=None, Tensor? edge_weight=None, "
        "Tensor? bias=None, Tensor? residual=None) -> (Tensor, Tensor, Tensor)");
  m.def("attention_backward(Tensor grad_out, Tensor rowptr, Tensor col, Tensor query, Tensor key, Tensor? value, "
        "Tensor? att, Tensor lse, int heads, str kind, float negative_slope, float scale, "
        "float dropout, int seed, Tensor? t_rowptr=None, Tensor? t_col=None, Tensor? t_perm=None, "
        "bool symmetric=False, Tensor? edge_attr=None, Tensor? edge_weight=None) -> "
        "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) {
  m.impl("attention", TESSERA_TORCH_FN(tessera::pt::attention_kernel));
  m.impl("attention_backward", TESSERA_TORCH_FN(tessera::pt::attention_backward_kernel));
}

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) {
  m.impl("attention", TESSERA_TORCH_FN(tessera::pt::attention_kernel));
  m.impl("attention_backward", TESSERA_TORCH_FN(tessera::pt::attention_backward_kernel));
}
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) {
  m.impl("attention", TESSERA_TORCH_FN(tessera::pt::attention_autograd));
}
