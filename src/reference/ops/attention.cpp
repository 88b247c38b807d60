// Attention reference backend: the oracle. Obvious per-edge loops in double, edge tensors
// allowed (logits and alpha per edge are materialized), every dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/attention/backends.hpp"

namespace tessera::ops::detail {
namespace {

struct Mat {  // double-precision copy of a feature matrix
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double* row(int64_t i) { return v.data() + i * cols; }
  const double* row(int64_t i) const { return v.data() + i * cols; }
};

Mat load(const DenseView& m) {
  Mat out{m.rows, m.cols, std::vector<double>(size_t(m.rows * m.cols))};
  if (!m.data) return out;
  TESSERA_DISPATCH_FLOAT(m.dtype, T, [&] {
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t c = 0; c < m.cols; ++c) out.v[i * m.cols + c] = double(m.template as<T>()[i * m.ld + c]);
  });
  return out;
}
void store(const Mat& src, const DenseView& m) {
  TESSERA_DISPATCH_FLOAT(m.dtype, T, [&] {
    for (int64_t i = 0; i < m.rows; ++i)
      for (int64_t c = 0; c < m.cols; ++c) m.template as<T>()[i * m.ld + c] = T(src.v[i * m.cols + c]);
  });
}
// A key or value shared by every head (multi-query attention), repeated into each head's slice,
// so that the loops below read every head's own slice either way.
Mat per_head(Mat m, bool shared, int64_t heads) {
  if (!shared) return m;
  Mat out{m.rows, m.cols * heads, std::vector<double>(size_t(m.rows * m.cols * heads))};
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t h = 0; h < heads; ++h) std::copy(m.row(i), m.row(i) + m.cols, out.row(i) + h * m.cols);
  return out;
}
// The gradient of a shared key or value: the heads' slices summed.
Mat sum_heads(const Mat& m, bool shared, int64_t heads) {
  if (!shared) return m;
  const int64_t C = m.cols / heads;
  Mat out{m.rows, C, std::vector<double>(size_t(m.rows * C), 0.0)};
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t c = 0; c < C; ++c) out.row(i)[c] += m.row(i)[h * C + c];
  return out;
}
bool is_f64(const DenseView& m) { return m.dtype == DType::f64; }
double read_acc(const void* p, bool f64, int64_t i) {
  return f64 ? static_cast<const double*>(p)[i] : double(static_cast<const float*>(p)[i]);
}
void write_acc(void* p, bool f64, int64_t i, double x) {
  if (f64) static_cast<double*>(p)[i] = x; else static_cast<float*>(p)[i] = float(x);
}

// Everything the forward and backward share: inputs in double, per-edge logits and alpha.
template <class I>
struct Edges {
  const AttentionArgs<I>& a;
  int64_t H, C;
  Mat q, k, v;                 // v aliases k for GATv2 (copied)
  Mat ea, W;                   // edge features (nnz x D) and their projection (H*C x D), if any
  std::vector<double> eh;      // nnz x H*C: every entry's projected edge features (0 without)
  std::vector<double> att;
  std::vector<double> logit, alpha, lse;  // [k*H + h], [i*H + h]
  uint32_t threshold;
  double keep_scale;

  explicit Edges(const AttentionArgs<I>& args)
      : a(args), H(args.heads), C(args.channels), q(load(args.query)),
        k(per_head(load(args.key), args.shared_kv(), args.heads)),
        v(args.kind == AttentionKind::gatv2 ? k : per_head(load(args.value), args.shared_kv(), args.heads)),
        threshold(attention_dropout_threshold(args.dropout)),
        keep_scale(args.dropout >= 1 ? 0.0 : 1.0 / (1.0 - args.dropout)) {
    const bool f64 = is_f64(args.query);
    eh.assign(size_t(args.A.nnz * H * C), 0.0);
    if (args.has_edge_features()) {
      ea = load(args.edge_attr);
      W = load(args.edge_weight);
      for (int64_t e = 0; e < args.A.nnz; ++e)
        for (int64_t x = 0; x < H * C; ++x)
          for (int64_t t = 0; t < ea.cols; ++t) eh[size_t(e * H * C + x)] += W.row(x)[t] * ea.row(e)[t];
    }
    if (args.kind == AttentionKind::gatv2)
      for (int64_t c = 0; c < H * C; ++c) att.push_back(read_acc(args.att, f64, c));
    const auto& A = args.A;
    logit.assign(size_t(A.nnz * H), 0);
    alpha.assign(size_t(A.nnz * H), 0);
    lse.assign(size_t(A.rows * H), -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < A.rows; ++i)
      for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e)
        for (int64_t h = 0; h < H; ++h) logit[e * H + h] = score(i, A.col[e], e, h);
    for (int64_t i = 0; i < A.rows; ++i)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t b = A.rowptr[i], end = A.rowptr[i + 1];
        if (b == end) continue;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t e = b; e < end; ++e) m = std::max(m, logit[e * H + h]);
        double s = 0;
        for (int64_t e = b; e < end; ++e) s += std::exp(logit[e * H + h] - m);
        lse[i * H + h] = m + std::log(s);
        for (int64_t e = b; e < end; ++e) alpha[e * H + h] = std::exp(logit[e * H + h] - m) / s;
      }
  }
  double lrelu(double z) const { return z > 0 ? z : a.negative_slope * z; }
  double dlrelu(double z) const { return z > 0 ? 1.0 : a.negative_slope; }
  double edge(int64_t e, int64_t x) const { return eh[size_t(e * H * C + x)]; }
  double score(int64_t i, int64_t j, int64_t k_e, int64_t h) const {
    double e = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double qi = q.row(i)[h * C + c], kj = k.row(j)[h * C + c] + edge(k_e, h * C + c);
      e += a.kind == AttentionKind::gatv2 ? att[h * C + c] * lrelu(qi + kj) : qi * kj;
    }
    return a.kind == AttentionKind::gatv2 ? e : e * a.logit_scale();
  }
  // The message of entry e (source j) at feature x: value, plus the edge term for the Transformer.
  double value(int64_t j, int64_t e, int64_t x) const {
    return v.row(j)[x] + (a.kind == AttentionKind::transformer ? edge(e, x) : 0.0);
  }
  // Dropout factor of edge position e, head h (1 without dropout).
  double drop(int64_t e, int64_t h) const {
    if (threshold == 0) return 1.0;
    return attention_dropout_keep(a.dropout_seed, uint64_t(e), uint64_t(h), threshold) ? keep_scale : 0.0;
  }
};

}  // namespace

template <class I>
void attention_forward_reference(const AttentionArgs<I>& a, const Exec&) {
  Edges<I> E(a);
  const auto& A = a.A;
  const int64_t H = E.H, C = E.C;
  const bool f64 = is_f64(a.query);
  Mat out{A.rows, H * C, std::vector<double>(size_t(A.rows * H * C), 0.0)};
  for (int64_t i = 0; i < A.rows; ++i)
    for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e)
      for (int64_t h = 0; h < H; ++h) {
        const double w = E.alpha[e * H + h] * E.drop(e, h);
        for (int64_t c = 0; c < C; ++c) out.row(i)[h * C + c] += w * E.value(A.col[e], e, h * C + c);
      }
  if (a.out_bias)
    for (int64_t i = 0; i < A.rows; ++i)
      for (int64_t x = 0; x < H * C; ++x) out.row(i)[x] += read_acc(a.out_bias, f64, x);
  if (a.residual.data) {
    const Mat r = load(a.residual);
    for (int64_t i = 0; i < A.rows; ++i)
      for (int64_t x = 0; x < H * C; ++x) out.row(i)[x] += r.row(i)[x];
  }
  store(out, a.out);
  if (a.lse)
    for (int64_t x = 0; x < A.rows * H; ++x) write_acc(a.lse, f64, x, E.lse[x]);
  if (a.alpha)
    for (int64_t e = 0; e < A.nnz; ++e)
      for (int64_t h = 0; h < H; ++h)
        write_acc(a.alpha, f64, e * H + h,
                  E.alpha[e * H + h] * (a.alpha_after_dropout ? E.drop(e, h) : 1.0));
}

// Straight from the chain rule, independent of the fused kernels' shortcuts: the softmax
// backward uses sum_j alpha_ij dA_ij computed edge by edge, not <O, dO>, and ignores lse.
template <class I>
void attention_backward_reference(const AttentionBackwardArgs<I>& b, const Exec&) {
  const auto& a = b.fwd;
  Edges<I> E(a);
  const auto& A = a.A;
  const int64_t H = E.H, C = E.C;
  const bool gat = a.kind == AttentionKind::gatv2;
  const double scale = a.logit_scale();
  const Mat dO = load(b.dout);
  Mat dq{A.rows, H * C, std::vector<double>(size_t(A.rows * H * C), 0.0)};
  Mat dk{A.cols, H * C, std::vector<double>(size_t(A.cols * H * C), 0.0)};
  Mat dv{A.cols, H * C, std::vector<double>(size_t(A.cols * H * C), 0.0)};
  std::vector<double> datt(size_t(H * C), 0.0), dA(size_t(A.nnz * H), 0.0);
  std::vector<double> geh(size_t(A.nnz * H * C), 0.0);  // d loss / d eh (edge features)
  for (int64_t i = 0; i < A.rows; ++i)
    for (int64_t h = 0; h < H; ++h) {
      double D = 0;
      for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e) {
        const int64_t j = A.col[e];
        double dot = 0;
        for (int64_t c = 0; c < C; ++c) dot += dO.row(i)[h * C + c] * E.value(j, e, h * C + c);
        dA[e * H + h] = E.drop(e, h) * dot;               // d loss / d alpha (pre-dropout)
        D += E.alpha[e * H + h] * dA[e * H + h];
        const double w = E.alpha[e * H + h] * E.drop(e, h);  // d out / d value
        for (int64_t c = 0; c < C; ++c) {
          dv.row(j)[h * C + c] += w * dO.row(i)[h * C + c];
          if (!gat) geh[size_t(e * H * C + h * C + c)] += w * dO.row(i)[h * C + c];
        }
      }
      for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e) {
        const int64_t j = A.col[e];
        const double dS = E.alpha[e * H + h] * (dA[e * H + h] - D);  // d loss / d logit
        for (int64_t c = 0; c < C; ++c) {
          const int64_t x = h * C + c;
          if (gat) {
            const double z = E.q.row(i)[x] + E.k.row(j)[x] + E.edge(e, x);
            const double g = dS * E.att[x] * E.dlrelu(z);
            dq.row(i)[x] += g;
            dk.row(j)[x] += g;
            geh[size_t(e * H * C + x)] += g;
            datt[x] += dS * E.lrelu(z);
          } else {
            dq.row(i)[x] += dS * scale * (E.k.row(j)[x] + E.edge(e, x));
            dk.row(j)[x] += dS * scale * E.q.row(i)[x];
            geh[size_t(e * H * C + x)] += dS * scale * E.q.row(i)[x];
          }
        }
      }
    }
  if (gat) {  // x_l is both key and value
    for (size_t x = 0; x < dk.v.size(); ++x) dk.v[x] += dv.v[x];
    for (int64_t x = 0; x < H * C; ++x) write_acc(b.datt, is_f64(a.query), x, datt[x]);
  } else {
    store(sum_heads(dv, a.shared_kv(), H), b.dvalue);
  }
  store(dq, b.dquery);
  store(sum_heads(dk, a.shared_kv(), H), b.dkey);
  if (a.has_edge_features()) {
    const int64_t D = E.ea.cols;
    Mat dea{A.nnz, D, std::vector<double>(size_t(A.nnz * D), 0.0)};
    for (int64_t e = 0; e < A.nnz; ++e)
      for (int64_t x = 0; x < H * C; ++x)
        for (int64_t t = 0; t < D; ++t) {
          const double g = geh[size_t(e * H * C + x)];
          dea.row(e)[t] += E.W.row(x)[t] * g;
        }
    store(dea, b.dedge_attr);
    for (int64_t x = 0; x < H * C; ++x)
      for (int64_t t = 0; t < D; ++t) {
        double s = 0;
        for (int64_t e = 0; e < A.nnz; ++e) s += geh[size_t(e * H * C + x)] * E.ea.row(e)[t];
        write_acc(b.dedge_weight, is_f64(a.query), x * D + t, s);
      }
  }
}

template void attention_forward_reference(const AttentionArgs<int32_t>&, const Exec&);
template void attention_forward_reference(const AttentionArgs<int64_t>&, const Exec&);
template void attention_backward_reference(const AttentionBackwardArgs<int32_t>&, const Exec&);
template void attention_backward_reference(const AttentionBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::detail
