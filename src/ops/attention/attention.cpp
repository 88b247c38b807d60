// Attention family dispatcher: validates once, then picks a variant from the family's registries
// with tune::choose (requested, TESSERA_VARIANT_ATTENTION[_BACKWARD], timing under TESSERA_TUNE=1,
// the tuner's cache, then the registry's heuristic). Forward heuristic: the fused kernel of the
// device (the WSB tensor-core variant needs a per-graph build, so only tuning, a request or the
// installed predictions pick it). Backward heuristic: the symmetric path when declared and
// eligible, else the transpose walk.
#include "tessera/ops/attention.hpp"

#include <cmath>

#include "ops/attention/backends.hpp"
#include "tessera/tune/choose.hpp"

namespace tessera::ops {

const char* attention_kind_name(AttentionKind k) {
  return k == AttentionKind::gatv2 ? "gatv2" : "transformer";
}
AttentionKind parse_attention_kind(const std::string& s) {
  if (s == "gatv2") return AttentionKind::gatv2;
  if (s == "transformer") return AttentionKind::transformer;
  fail("attention: unknown kind '", s, "' (expected gatv2 or transformer)");
}

template <class I>
double AttentionArgs<I>::logit_scale() const {
  return scale != 0 ? scale : 1.0 / std::sqrt(double(channels));
}

namespace {

template <class I>
void check_matrix(const char* who, const char* name, const DenseView& m, int64_t rows,
                  const char* rows_what, int64_t width, DType dtype, const Device& dev,
                  const char* width_what = "heads*channels") {
  TESSERA_CHECK(m.rows == rows, who, ": ", name, " has ", m.rows, " rows but ", rows_what, " is ", rows);
  TESSERA_CHECK(m.cols == width, who, ": ", name, " has ", m.cols, " columns, expected ", width_what, " = ", width);
  TESSERA_CHECK(m.ld >= m.cols, who, ": ", name, " has leading dimension ", m.ld, " < ", m.cols, " columns");
  TESSERA_CHECK(m.data || rows == 0 || width == 0, who, ": ", name, " has no data");
  TESSERA_CHECK(m.dtype == dtype, who, ": ", name, " is ", dtype_name(m.dtype), " but query is ", dtype_name(dtype));
  TESSERA_CHECK(m.device == dev, who, ": ", name, " is on ", m.device.str(), " but A is on ", dev.str());
}

// Host graphs are checked entry by entry (a bad column would be an out-of-bounds read); device
// graphs are trusted (their builders validate on the host).
template <class I>
void check_graph(const char* who, const CsrView<I>& A) {
  TESSERA_CHECK(A.rows >= 0 && A.cols >= 0 && A.nnz >= 0, who, ": negative graph size");
  TESSERA_CHECK(A.rowptr || A.rows == 0, who, ": A has no row offsets");
  if (A.device.is_cuda()) return;
  TESSERA_CHECK(A.rows == 0 || A.rowptr[0] == 0, who, ": A.rowptr[0] = ", int64_t(A.rows ? A.rowptr[0] : 0), ", expected 0");
  if (A.rows) TESSERA_CHECK(int64_t(A.rowptr[A.rows]) == A.nnz, who, ": A.rowptr[rows] = ", int64_t(A.rowptr[A.rows]), " but nnz = ", A.nnz);
  for (int64_t i = 0; i < A.rows; ++i)
    TESSERA_CHECK(A.rowptr[i + 1] >= A.rowptr[i], who, ": non-monotone row offsets at row ", i);
  for (int64_t k = 0; k < A.nnz; ++k)
    TESSERA_CHECK(A.col[k] >= 0 && int64_t(A.col[k]) < A.cols, who, ": entry ", k, " has source ",
                  int64_t(A.col[k]), " out of range [0, ", A.cols, ")");
}

// need_out: the forward writes out; the backward never reads it (out may be absent).
template <class I>
void validate_common(const AttentionArgs<I>& a, const char* who, bool need_out) {
  check_graph(who, a.A);
  TESSERA_CHECK(a.heads >= 1, who, ": heads = ", a.heads, ", expected >= 1");
  TESSERA_CHECK(a.channels >= 1, who, ": channels = ", a.channels, ", expected >= 1");
  const int64_t w = a.heads * a.channels;
  const DType t = a.query.dtype;
  const Device& d = a.A.device;
  TESSERA_CHECK(a.kv_heads == 0 || a.kv_heads == 1 || a.kv_heads == a.heads, who, ": kv_heads = ", a.kv_heads,
                ", expected 1 (shared key and value) or heads = ", a.heads);
  if (a.shared_kv())
    TESSERA_CHECK(a.kind == AttentionKind::transformer && !a.has_edge_features(), who,
                  ": a key and value shared by the heads (kv_heads = 1) need the Transformer without edge features");
  const char* kv_what = a.shared_kv() ? "channels (one slice shared by the heads)" : "heads*channels";
  check_matrix<I>(who, "query", a.query, a.A.rows, "A.rows (targets)", w, t, d);
  check_matrix<I>(who, "key", a.key, a.A.cols, "A.cols (sources)", a.kv_width(), t, d, kv_what);
  if (a.kind == AttentionKind::transformer)
    check_matrix<I>(who, "value", a.value, a.A.cols, "A.cols (sources)", a.kv_width(), t, d, kv_what);
  else
    TESSERA_CHECK(a.value.data == nullptr, who, ": GATv2 takes its value from key (x_l); pass no value");
  if (need_out || a.out.data) check_matrix<I>(who, "out", a.out, a.A.rows, "A.rows (targets)", w, t, d);
  if (a.kind == AttentionKind::gatv2) TESSERA_CHECK(a.att, who, ": GATv2 needs the attention vector att");
  if (a.out_bias) {
    const uintptr_t acc = t == DType::f64 ? 8 : 4;  // the accumulation type's size
    TESSERA_CHECK(reinterpret_cast<uintptr_t>(a.out_bias) % acc == 0, who, ": out_bias is not aligned to its ", acc,
                  "-byte elements");
  }
  if (a.residual.data) {
    check_matrix<I>(who, "residual", a.residual, a.A.rows, "A.rows (targets)", w, t, d);
    TESSERA_CHECK(a.residual.data != a.out.data, who, ": residual must not be out itself (each row is read ",
                  "while out is written)");
  }
  TESSERA_CHECK(a.dropout >= 0 && a.dropout <= 1, who, ": dropout = ", a.dropout, ", expected in [0, 1]");
  TESSERA_CHECK(std::isfinite(a.negative_slope), who, ": negative_slope is not finite");
  TESSERA_CHECK(std::isfinite(a.scale), who, ": scale is not finite");
  if (a.has_edge_features()) {
    const int64_t D = a.edge_attr.cols;
    TESSERA_CHECK(D >= 1, who, ": edge_attr has no columns");
    check_matrix<I>(who, "edge_attr", a.edge_attr, a.A.nnz, "A.nnz (entries)", D, t, d, "its column count");
    TESSERA_CHECK(a.edge_weight.data, who, ": edge_attr given without edge_weight");
    check_matrix<I>(who, "edge_weight", a.edge_weight, w, "heads*channels", D, t, d, "edge_attr's columns");
  } else {
    TESSERA_CHECK(a.edge_weight.data == nullptr, who, ": edge_weight given without edge_attr");
  }
}

}  // namespace

template <class I>
void validate_attention(const AttentionArgs<I>& a, const char* who) {
  validate_common(a, who, true);
}

template <class I>
void validate_attention_backward(const AttentionBackwardArgs<I>& b) {
  const char* who = "attention_backward";
  const auto& a = b.fwd;
  validate_common(a, who, false);
  TESSERA_CHECK(a.lse, who, ": the forward's lse is required");
  const int64_t w = a.heads * a.channels;
  const DType t = a.query.dtype;
  const Device& d = a.A.device;
  check_matrix<I>(who, "dout", b.dout, a.A.rows, "A.rows (targets)", w, t, d);
  check_matrix<I>(who, "dquery", b.dquery, a.A.rows, "A.rows (targets)", w, t, d);
  const char* kv_what = a.shared_kv() ? "channels (one slice shared by the heads)" : "heads*channels";
  check_matrix<I>(who, "dkey", b.dkey, a.A.cols, "A.cols (sources)", a.kv_width(), t, d, kv_what);
  if (a.kind == AttentionKind::transformer)
    check_matrix<I>(who, "dvalue", b.dvalue, a.A.cols, "A.cols (sources)", a.kv_width(), t, d, kv_what);
  else
    TESSERA_CHECK(b.datt, who, ": GATv2 needs datt");
  if (a.has_edge_features()) {
    TESSERA_CHECK(b.dedge_attr.data, who, ": edge features need dedge_attr");
    check_matrix<I>(who, "dedge_attr", b.dedge_attr, a.A.nnz, "A.nnz (entries)", a.edge_attr.cols, t, d,
                    "edge_attr's columns");
    TESSERA_CHECK(b.dedge_weight, who, ": edge features need dedge_weight");
  }
  if (b.symmetric)
    TESSERA_CHECK(a.A.rows == a.A.cols, who, ": symmetric declared but A is ", a.A.rows, " x ", a.A.cols);
  if (b.transpose) {
    TESSERA_CHECK(b.transpose->sources == a.A.cols && b.transpose->nnz == a.A.nnz, who,
                  ": transpose is ", b.transpose->sources, " sources / ", b.transpose->nnz,
                  " entries but A has ", a.A.cols, " / ", a.A.nnz);
    TESSERA_CHECK(b.transpose->device == d, who, ": transpose is on ", b.transpose->device.str(),
                  " but A is on ", d.str());
  }
}

template <class I>
tune::Registry<AttentionArgs<I>>& attention_forward_registry() {
  static tune::Registry<AttentionArgs<I>> reg = [] {
    tune::Registry<AttentionArgs<I>> r("attention");
    r.add({"reference", tune::Backend::reference, nullptr,
           [](const AttentionArgs<I>& a, const Exec& e) { detail::attention_forward_reference(a, e); },
           "per-edge loops in double (the oracle)"});
    r.add({"cpu.fused", tune::Backend::cpu, nullptr,
           [](const AttentionArgs<I>& a, const Exec& e) { detail::attention_forward_cpu(a, e); },
           "OpenMP over targets, online softmax, no edge tensors"});
#ifdef TESSERA_WITH_CUDA
    r.add({"cuda.fused", tune::Backend::cuda,
           [](const AttentionArgs<I>& a) { return a.channels <= detail::kCudaAttentionMaxChannels; },
           [](const AttentionArgs<I>& a, const Exec& e) { detail::attention_forward_cuda(a, e); },
           "warp groups per (target, head), online softmax; heavy rows split over a block; edge "
           "features projected per entry"});
    r.add({"cuda.wsb", tune::Backend::cuda, [](const AttentionArgs<I>& a) { return detail::attention_wsb_eligible(a); },
           [](const AttentionArgs<I>& a, const Exec& e) { detail::attention_forward_cuda_wsb(a, e); },
           "tensor cores, Transformer f16/bf16, C in {16,32,64,128}, no dropout / weights / edge "
           "features / out_bias / residual / shared key and value: WSB 16-row windows, mma Q K^T and P V, bitmap mask, online softmax"});
    r.add({"cuda.multi_query", tune::Backend::cuda,
           [](const AttentionArgs<I>& a) { return detail::attention_multi_query_eligible(a); },
           [](const AttentionArgs<I>& a, const Exec& e) { detail::attention_forward_cuda_multi_query(a, e); },
           "Transformer with one key row that is also the value (kv_heads = 1, the folded layer), C in "
           "{32,64,128,256}, even heads, no weights / edge features: a warp per target and 2-8 heads, "
           "each entry's row loaded once for all of them; the heuristics take it wherever it is eligible"});
#endif
    r.set_heuristic([](const AttentionArgs<I>& a, const Device& d) -> std::string {
      if (!d.is_cuda()) return "cpu.fused";
#ifdef TESSERA_WITH_CUDA
      if (detail::attention_multi_query_eligible(a)) return "cuda.multi_query";
#endif
      return "cuda.fused";
    });
    return r;
  }();
  return reg;
}

template <class I>
tune::Registry<AttentionBackwardArgs<I>>& attention_backward_registry() {
  using B = AttentionBackwardArgs<I>;
  static tune::Registry<B> reg = [] {
    tune::Registry<B> r("attention_backward");
    // The symmetric path identifies an edge (j -> i) by walking row j, so it cannot reproduce a
    // mask keyed by edge position, nor find an entry's edge features: only without either.
    auto symmetric_ok = [](const B& b) {
      return b.symmetric && b.fwd.dropout == 0 && !b.fwd.has_edge_features() && b.fwd.A.rows == b.fwd.A.cols;
    };
    r.add({"reference", tune::Backend::reference, nullptr,
           [](const B& b, const Exec& e) { detail::attention_backward_reference(b, e); },
           "per-edge loops in double (the oracle)"});
    r.add({"cpu.fused.transpose", tune::Backend::cpu, nullptr,
           [](const B& b, const Exec& e) { detail::attention_backward_cpu(b, e, false); },
           "targets pass + sources pass over the transpose"});
    r.add({"cpu.fused.symmetric", tune::Backend::cpu, symmetric_ok,
           [](const B& b, const Exec& e) { detail::attention_backward_cpu(b, e, true); },
           "sources pass over A itself (symmetric graphs)"});
#ifdef TESSERA_WITH_CUDA
    auto fits = [](const B& b) { return b.fwd.channels <= detail::kCudaAttentionMaxChannels; };
    r.add({"cuda.fused.transpose", tune::Backend::cuda, fits,
           [](const B& b, const Exec& e) { detail::attention_backward_cuda(b, e, false); },
           "targets pass + sources pass over the (cached or built) transpose"});
    r.add({"cuda.fused.symmetric", tune::Backend::cuda,
           [=](const B& b) { return fits(b) && symmetric_ok(b); },
           [](const B& b, const Exec& e) { detail::attention_backward_cuda(b, e, true); },
           "sources pass over A itself: no transpose, no atomics"});
#endif
    r.set_heuristic([=](const B& b, const Device& d) -> std::string {
      const std::string walk = symmetric_ok(b) ? "symmetric" : "transpose";
      return (d.is_cuda() ? "cuda.fused." : "cpu.fused.") + walk;
    });
    return r;
  }();
  return reg;
}

// Tuner key of a pass ("attention" or "attention_backward"): kind, dtype, index type and heads;
// the graph's size class; the head width.
template <class I>
tune::Key attention_key(const char* pass, const AttentionArgs<I>& a, const Exec& exec) {
  const auto sig = tune::GraphSignature::of(a.A.rows, a.A.nnz, -1);
  return {tune::device_key(exec.device), std::string(pass) + "." + attention_kind_name(a.kind),
          std::string(dtype_name(a.query.dtype)) + "/" + index_name(index_of<I>::value) + "/H" + std::to_string(a.heads) +
              (a.shared_kv() ? "/kv1" : ""),
          sig.str(), tune::width_bucket(a.channels)};
}

template <class I>
void attention_forward(const AttentionArgs<I>& a, const Exec& exec, const std::string& variant) {
  validate_attention(a, "attention");
  TESSERA_CHECK(exec.device == a.A.device, "attention: exec is on ", exec.device.str(), " but A is on ", a.A.device.str());
  const auto& reg = attention_forward_registry<I>();
  reg.get(tune::choose(reg, attention_key("attention", a, exec), a, exec, variant).variant).run(a, exec);
}

template <class I>
void attention_backward(const AttentionBackwardArgs<I>& b, const Exec& exec, const std::string& variant) {
  validate_attention_backward(b);
  TESSERA_CHECK(exec.device == b.fwd.A.device, "attention_backward: exec is on ", exec.device.str(),
                " but A is on ", b.fwd.A.device.str());
  const auto& reg = attention_backward_registry<I>();
  reg.get(tune::choose(reg, attention_key("attention_backward", b.fwd, exec), b, exec, variant).variant).run(b, exec);
}

template <class I>
void build_attention_transpose(const CsrView<I>& A, I* colptr, I* row, I* perm, const Exec& exec) {
  check_graph("build_attention_transpose", A);
#ifdef TESSERA_WITH_CUDA
  if (A.device.is_cuda()) return detail::build_attention_transpose_cuda(A, colptr, row, perm, exec);
#endif
  TESSERA_CHECK(!A.device.is_cuda(), "build_attention_transpose: built without CUDA");
  detail::build_attention_transpose_cpu(A, colptr, row, perm);
}

void attention_clear_caches() {
#ifdef TESSERA_WITH_CUDA
  detail::attention_schedule_cache_clear();
#endif
}

#define TESSERA_INSTANTIATE(I)                                                                  \
  template struct AttentionArgs<I>;                                                             \
  template void validate_attention(const AttentionArgs<I>&, const char*);                      \
  template void validate_attention_backward(const AttentionBackwardArgs<I>&);                  \
  template tune::Registry<AttentionArgs<I>>& attention_forward_registry<I>();                  \
  template tune::Registry<AttentionBackwardArgs<I>>& attention_backward_registry<I>();         \
  template void attention_forward(const AttentionArgs<I>&, const Exec&, const std::string&);   \
  template void attention_backward(const AttentionBackwardArgs<I>&, const Exec&, const std::string&); \
  template void build_attention_transpose(const CsrView<I>&, I*, I*, I*, const Exec&);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::ops
