// tessera::spmm and tessera::sddmm: schemas, CPU/CUDA kernels (thin calls into ops::spmm /
// ops::sddmm through views.hpp) and the Autograd kernel. This file is the pattern other families
// copy: kernels take tensors, convert with views.hpp, call the core; the Autograd kernel wraps a
// torch::autograd::Function whose forward redispatches below autograd.
#include "boundary.hpp"
#include "spmm_op.hpp"

#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include "column_sums.hpp"
#include "graph_ops.hpp"
#include "needs_grad.hpp"
#include "optional_args.hpp"
#include "outputs.hpp"
#include "tessera/ops/spmm.hpp"
#include "views.hpp"

namespace tessera::pt {

namespace {

// bias: one value per feature of x (checked by the autograd and the device kernels alike).
void check_bias_shape(const at::Tensor& bias, int64_t features) {
  TESSERA_CHECK(bias.dim() == 1 && bias.size(0) == features, "spmm: bias must be 1-D with one entry per feature (",
                features, "), got shape ", bias.sizes());
}

// ---- kernels (CPU and CUDA share them: the core dispatches on Exec::device) ----

at::Tensor spmm_kernel(const at::Tensor& rowptr, const at::Tensor& col, const OptTensor& values,
                       const at::Tensor& x_in, const OptTensor&, const OptTensor&, const OptTensor&,
                       int64_t graph_id, int64_t, const OptTensor& bias, const OptTensor&) {
  check_csr_args(rowptr, col, "spmm");
  TESSERA_CHECK(x_in.defined() && x_in.dim() == 2, "spmm: x must be 2-D (nodes x features), got shape ",
                x_in.sizes());
  dtype_from(x_in, "spmm: x");
  const at::Tensor x = (x_in.size(1) <= 1 || x_in.stride(1) == 1) ? x_in : x_in.contiguous();
  TorchExec ex(x);
  const Device dev = ex.device();
  const int64_t rows = rowptr.size(0) - 1;
  auto y = empty_output({rows, x.size(1)}, x.options());
  at::Tensor v;
  if (has(values)) {
    v = values->to(accum_type(x.scalar_type())).contiguous();
    check_values(v, col.size(0), accum_type(x.scalar_type()), dev, "spmm", "values");
  }
  at::Tensor b;
  if (has(bias)) {  // like values: in the accumulation type
    check_bias_shape(*bias, x.size(1));
    b = bias->to(accum_type(x.scalar_type())).contiguous();
    check_values(b, x.size(1), accum_type(x.scalar_type()), dev, "spmm", "bias");  // shape checked above
  }
  TESSERA_DISPATCH_INDEX(index_type_from(rowptr, "spmm: rowptr"), I, [&] {
    ops::SpmmArgs<I> a;
    a.A = csr_view<I>(rowptr, col, x.size(0), dev, "spmm", uint64_t(graph_id));
    a.values = v.defined() ? v.data_ptr() : nullptr;
    a.X = dense_view(x, dev, "spmm", "x");
    a.Y = dense_view(y, dev, "spmm", "y");
    a.bias = b.defined() ? b.data_ptr() : nullptr;
    ops::spmm<I>(a, ex.get());
  });
  return y;
}

at::Tensor sddmm_kernel(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& a_in,
                        const at::Tensor& b_in, int64_t graph_id) {
  check_csr_args(rowptr, col, "sddmm");
  TESSERA_CHECK(a_in.defined() && b_in.defined(), "sddmm: a and b must be defined");
  const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  TESSERA_CHECK(a.dim() == 2 && b.dim() == 2, "sddmm: a and b must be 2-D, got ", a.sizes(), " and ", b.sizes());
  TorchExec ex(a);
  const Device dev = ex.device();
  auto out = at::empty({col.size(0)}, a.options().dtype(accum_type(a.scalar_type())));
  TESSERA_DISPATCH_INDEX(index_type_from(rowptr, "sddmm: rowptr"), I, [&] {
    ops::SddmmArgs<I> s;
    s.A = csr_view<I>(rowptr, col, b.size(0), dev, "sddmm", uint64_t(graph_id));
    s.dY = dense_view(a, dev, "sddmm", "a");
    s.X = dense_view(b, dev, "sddmm", "b");
    s.dw = out.data_ptr();
    ops::sddmm<I>(s, ex.get());
  });
  return out;
}

// ---- autograd ----

// The structure of A (and optionally of A^T): never differentiated, carried as one argument.
struct CsrArgs {
  at::Tensor rowptr, col, t_rowptr, t_col, t_perm, t_values;
  int64_t id = 0, t_id = 0;
};

class SpmmFunction : public torch::autograd::Function<SpmmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const OptTensor& values,
                            const OptTensor& bias, const CsrArgs& g) {
    at::AutoDispatchBelowADInplaceOrView below;
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("tessera::spmm", "").typed<decltype(spmm_kernel)>();
    const OptTensor tr = g.t_rowptr.defined() ? OptTensor(g.t_rowptr) : OptTensor();
    const OptTensor tc = g.t_col.defined() ? OptTensor(g.t_col) : OptTensor();
    const OptTensor tp = g.t_perm.defined() ? OptTensor(g.t_perm) : OptTensor();
    auto y = op.call(g.rowptr, g.col, values, x, tr, tc, tp, g.id, g.t_id, bias, {});
    const bool values_grad = has(values) && values->requires_grad();
    ctx->saved_data["rowptr"] = g.rowptr;
    ctx->saved_data["col"] = g.col;
    ctx->saved_data["t_rowptr"] = g.t_rowptr;
    ctx->saved_data["t_col"] = g.t_col;
    ctx->saved_data["t_perm"] = g.t_perm;
    ctx->saved_data["t_values"] = g.t_values;
    ctx->saved_data["id"] = g.id;
    ctx->saved_data["t_id"] = g.t_id;
    ctx->saved_data["x_grad"] = x.requires_grad();
    ctx->saved_data["values_grad"] = values_grad;
    ctx->saved_data["bias_grad"] = has(bias) && bias->requires_grad();
    ctx->saved_data["num_cols"] = x.size(0);
    // X is needed only for the edge-value gradient; values only for dX.
    ctx->save_for_backward({values_grad ? x : at::Tensor(), has(values) ? *values : at::Tensor()});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& values = saved[1];
    const at::Tensor dy = grads[0].contiguous();
    const auto rowptr = ctx->saved_data["rowptr"].toTensor();
    const auto col = ctx->saved_data["col"].toTensor();
    at::Tensor dx, dvalues, dbias;
    // First, while only the layer's output is alive: torch's column-sum reduction stages partials
    // in a buffer that reached 2x dY on small graphs (Cora, H200); computed after dX it raised the
    // GCN layer's peak from 3 to 4 output-sized buffers. Same reduction as torch's add backward.
    if (ctx->saved_data["bias_grad"].toBool()) dbias = column_sums(dy, accum_type(dy.scalar_type()));
    if (ctx->saved_data["x_grad"].toBool()) {
      at::Tensor t_rowptr = ctx->saved_data["t_rowptr"].toTensor();
      at::Tensor t_col = ctx->saved_data["t_col"].toTensor();
      at::Tensor t_perm = ctx->saved_data["t_perm"].toTensor();
      int64_t t_id = ctx->saved_data["t_id"].toInt();
      if (!t_rowptr.defined()) {  // no cached transpose: build one for this call (anonymous)
        std::tie(t_rowptr, t_col, t_perm) = csr_transpose(rowptr, col, ctx->saved_data["num_cols"].toInt());
        t_id = 0;
      }
      // The graph's memoized transposed values when the caller passed them (a cached GCN graph:
      // gathering them here cost 3.1 of the CPU GCN's 93 fwd+bwd ms on R-MAT 2^16), else gathered.
      const at::Tensor memo = ctx->saved_data["t_values"].toTensor();
      OptTensor t_values;
      if (values.defined())
        t_values = memo.defined() ? memo.to(values.scalar_type()) : values.index_select(0, t_perm);
      // Through the dispatcher, so create_graph=True makes dX differentiable again.
      dx = tessera::pt::spmm(t_rowptr, t_col, t_values, dy, {}, {}, {}, t_id, 0, {});
    }
    if (ctx->saved_data["values_grad"].toBool())
      dvalues = tessera::pt::sddmm(rowptr, col, dy, x, ctx->saved_data["id"].toInt()).to(values.scalar_type());
    return {dx, dvalues, dbias, at::Tensor()};
  }
};

at::Tensor spmm_autograd(const at::Tensor& rowptr, const at::Tensor& col, const OptTensor& values,
                         const at::Tensor& x, const OptTensor& t_rowptr, const OptTensor& t_col,
                         const OptTensor& t_perm, int64_t graph_id, int64_t t_graph_id, const OptTensor& bias,
                         const OptTensor& t_values) {
  // Checked before autograd touches anything (values->to, apply) so bad input fails cleanly here.
  check_csr_args(rowptr, col, "spmm");
  TESSERA_CHECK(x.defined() && x.dim() == 2, "spmm: x must be 2-D (nodes x features), got shape ", x.sizes());
  dtype_from(x, "spmm: x");
  if (has(values))
    TESSERA_CHECK(values->dim() == 1 && values->size(0) == col.size(0), "spmm: values must be 1-D with one entry per "
                  "edge (", col.size(0), "), got shape ", values->sizes());
  TESSERA_CHECK(has(t_rowptr) == has(t_col) && has(t_col) == has(t_perm),
                "spmm: pass all of t_rowptr, t_col, t_perm (a cached transpose) or none");
  if (has(t_values))
    TESSERA_CHECK(has(t_perm) && has(values) && t_values->dim() == 1 && t_values->size(0) == col.size(0),
                  "spmm: t_values (the transposed values) need t_rowptr, t_col, t_perm and values, and one entry "
                  "per edge (", col.size(0), "), got shape ", t_values->sizes());
  if (!needs_grad(x, values, bias)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return spmm(rowptr, col, values, x, t_rowptr, t_col, t_perm, graph_id, t_graph_id, bias);
  }
  CsrArgs g{rowptr, col, has(t_rowptr) ? *t_rowptr : at::Tensor(), has(t_col) ? *t_col : at::Tensor(),
            has(t_perm) ? *t_perm : at::Tensor(), has(t_values) ? t_values->detach() : at::Tensor(), graph_id,
            t_graph_id};
  // Values in the accumulation type of x (recorded by autograd, so their gradient flows back).
  OptTensor v;
  if (has(values)) v = values->to(accum_type(x.scalar_type()));
  OptTensor b;
  if (has(bias)) {
    check_bias_shape(*bias, x.size(1));
    b = bias->to(accum_type(x.scalar_type()));
  }
  return SpmmFunction::apply(x, v, b, g);
}

}  // namespace

at::Tensor spmm(const at::Tensor& rowptr, const at::Tensor& col, const OptTensor& values, const at::Tensor& x,
                const OptTensor& t_rowptr, const OptTensor& t_col, const OptTensor& t_perm, int64_t graph_id,
                int64_t t_graph_id, const OptTensor& bias, const OptTensor& t_values) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("tessera::spmm", "").typed<decltype(spmm_kernel)>();
  return op.call(rowptr, col, values, x, t_rowptr, t_col, t_perm, graph_id, t_graph_id, bias, t_values);
}

at::Tensor sddmm(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& a, const at::Tensor& b,
                 int64_t graph_id) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("tessera::sddmm", "").typed<decltype(sddmm_kernel)>();
  return op.call(rowptr, col, a, b, graph_id);
}

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("spmm(Tensor rowptr, Tensor col, Tensor? values, Tensor x, Tensor? t_rowptr=None, Tensor? t_col=None, "
        "Tensor? t_perm=None, int graph_id=0, int t_graph_id=0, Tensor? bias=None, Tensor? t_values=None) -> Tensor");
  m.def("sddmm(Tensor rowptr, Tensor col, Tensor a, Tensor b, int graph_id=0) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) {
  m.impl("spmm", TESSERA_TORCH_FN(tessera::pt::spmm_kernel));
  m.impl("sddmm", TESSERA_TORCH_FN(tessera::pt::sddmm_kernel));
}

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) {
  m.impl("spmm", TESSERA_TORCH_FN(tessera::pt::spmm_kernel));
  m.impl("sddmm", TESSERA_TORCH_FN(tessera::pt::sddmm_kernel));
}
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) {
  m.impl("spmm", TESSERA_TORCH_FN(tessera::pt::spmm_autograd));
}
