// Attention CPU backend: OpenMP over targets (forward, backward targets pass) and over sources
// (backward sources pass), one streaming walk per (node, head) with online softmax. No edge
// tensors: per-thread buffers of one head width only.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/attention/backends.hpp"

namespace tessera::ops::detail {
namespace {

template <class T, class Acc>
struct Rows {  // typed access to a strided feature matrix, one head at a time
  const T* p;
  int64_t ld, C;
  const T* at(int64_t i, int64_t h) const { return p + i * ld + h * C; }
};
template <class T, class Acc>
Rows<T, Acc> rows_of(const DenseView& m, int64_t C) { return {m.template as<T>(), m.ld, C}; }

template <class T, class Acc>
inline void load(Acc* dst, const T* src, int64_t C) {
  for (int64_t c = 0; c < C; ++c) dst[c] = Acc(src[c]);
}

// Shared per-call constants and the logit of one (target, source, head).
template <class T, class I, class Acc>
struct Ctx {
  const AttentionArgs<I>& a;
  int64_t H, C;
  Rows<T, Acc> q, k, v;
  const Acc* att;
  Acc slope, scale;
  uint32_t threshold;
  Acc keep_scale;
  explicit Ctx(const AttentionArgs<I>& args)
      : a(args), H(args.heads), C(args.channels), q(rows_of<T, Acc>(args.query, C)),
        k(rows_of<T, Acc>(args.key, C)),
        v(rows_of<T, Acc>(args.kind == AttentionKind::gatv2 ? args.key : args.value, C)),
        att(static_cast<const Acc*>(args.att)), slope(Acc(args.negative_slope)),
        scale(Acc(args.logit_scale())), threshold(attention_dropout_threshold(args.dropout)),
        keep_scale(args.dropout >= 1 ? Acc(0) : Acc(1.0 / (1.0 - args.dropout))) {}
  bool gat() const { return a.kind == AttentionKind::gatv2; }
  // qv: the target's row (accumulation type), kr: the source's row of head h.
  Acc logit(const Acc* qv, const T* kr, int64_t h) const {
    Acc e = 0;
    if (gat()) {
      const Acc* ah = att + h * C;
#pragma omp simd reduction(+ : e)  // lets the compiler vectorize the float sum
      for (int64_t c = 0; c < C; ++c) {
        const Acc z = qv[c] + Acc(kr[c]);
        e += ah[c] * (z > 0 ? z : slope * z);
      }
      return e;
    }
#pragma omp simd reduction(+ : e)
    for (int64_t c = 0; c < C; ++c) e += qv[c] * Acc(kr[c]);
    return e * scale;
  }
  Acc drop(int64_t edge, int64_t h) const {
    if (threshold == 0) return Acc(1);
    return attention_dropout_keep(a.dropout_seed, uint64_t(edge), uint64_t(h), threshold) ? keep_scale : Acc(0);
  }
};

int threads_of(const Exec& exec) { return exec.threads > 0 ? exec.threads : omp_get_max_threads(); }

template <class T, class I>
void forward(const AttentionArgs<I>& a, const Exec& exec) {
  using Acc = typename acc_of<T>::type;
  const Ctx<T, I, Acc> X(a);
  const auto& A = a.A;
  const int64_t H = X.H, C = X.C;
  const Acc ninf = -std::numeric_limits<Acc>::infinity();
  Acc* lse = static_cast<Acc*>(a.lse);
  Acc* alpha = static_cast<Acc*>(a.alpha);
  T* out = a.out.template as<T>();
  // Heads inside the edge loop: each source row (all H*C values, contiguous) is gathered once
  // per edge, not once per head.
  const size_t HC = static_cast<size_t>(H * C);
#pragma omp parallel num_threads(threads_of(exec))
  {
    std::vector<Acc> qv(HC), acc(HC), m(static_cast<size_t>(H)), s(static_cast<size_t>(H));
#pragma omp for schedule(dynamic, 16)
    for (int64_t i = 0; i < A.rows; ++i) {
      const int64_t b = A.rowptr[i], end = A.rowptr[i + 1];
      for (int64_t h = 0; h < H; ++h) load(qv.data() + h * C, X.q.at(i, h), C);
      std::fill(acc.begin(), acc.end(), Acc(0));
      std::fill(m.begin(), m.end(), ninf);
      std::fill(s.begin(), s.end(), Acc(0));
      for (int64_t e = b; e < end; ++e) {
        const int64_t j = A.col[e];
        for (int64_t h = 0; h < H; ++h) {
          const Acc l = X.logit(qv.data() + h * C, X.k.at(j, h), h);
          Acc* ah = acc.data() + h * C;
          if (l > m[h]) {  // new running max: rescale what was accumulated so far
            const Acc corr = m[h] == ninf ? Acc(0) : std::exp(m[h] - l);
            s[h] *= corr;
            for (int64_t c = 0; c < C; ++c) ah[c] *= corr;
            m[h] = l;
          }
          const Acc p = std::exp(l - m[h]);
          s[h] += p;
          const Acc w = p * X.drop(e, h);
          if (w != 0) {
            const T* vr = X.v.at(j, h);
            for (int64_t c = 0; c < C; ++c) ah[c] += w * Acc(vr[c]);
          }
        }
      }
      for (int64_t h = 0; h < H; ++h) {
        T* o = out + i * a.out.ld + h * C;
        const Acc inv = s[h] > 0 ? Acc(1) / s[h] : Acc(0);
        for (int64_t c = 0; c < C; ++c) o[c] = T(acc[h * C + c] * inv);
        const Acc l_i = s[h] > 0 ? m[h] + std::log(s[h]) : ninf;
        if (lse) lse[i * H + h] = l_i;
        if (alpha)
          for (int64_t e = b; e < end; ++e) {
            const Acc p = std::exp(X.logit(qv.data() + h * C, X.k.at(A.col[e], h), h) - l_i);
            alpha[e * H + h] = a.alpha_after_dropout ? p * X.drop(e, h) : p;
          }
      }
    }
  }
}

template <class T, class I>
void backward(const AttentionBackwardArgs<I>& bw, const Exec& exec, bool symmetric_path) {
  using Acc = typename acc_of<T>::type;
  const auto& a = bw.fwd;
  const Ctx<T, I, Acc> X(a);
  const auto& A = a.A;
  const int64_t H = X.H, C = X.C;
  const bool gat = X.gat();
  const Acc* lse = static_cast<const Acc*>(a.lse);
  const auto dO = rows_of<T, Acc>(bw.dout, C);
  const int nt = threads_of(exec);
  std::vector<Acc> delta(size_t(A.rows * H));
  std::vector<Acc> datt(gat ? size_t(H * C) : 0, Acc(0));

  // Pass 1, per target, one walk: Delta_i = sum_j alpha_ij dA_ij accumulated alongside the
  // D-free parts of dq and datt (dS = alpha (dA - Delta) is linear in Delta), so Delta is exact
  // even when out is stored in 16 bits, and out is never read.
#pragma omp parallel num_threads(nt)
  {
    const size_t Cs = static_cast<size_t>(C);
    std::vector<Acc> qv(Cs), dov(Cs), dq1(Cs), dq2(Cs), da1(Cs), da2(Cs), datt_local(datt.size(), Acc(0));
#pragma omp for schedule(dynamic, 16)
    for (int64_t i = 0; i < A.rows; ++i) {
      for (int64_t h = 0; h < H; ++h) {
        load(qv.data(), X.q.at(i, h), C);
        load(dov.data(), dO.at(i, h), C);
        for (auto* v : {&dq1, &dq2, &da1, &da2}) std::fill(v->begin(), v->end(), Acc(0));
        Acc D = 0;
        for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e) {
          const int64_t j = A.col[e];
          const T* kr = X.k.at(j, h);
          const T* vr = X.v.at(j, h);
          const Acc p = std::exp(X.logit(qv.data(), kr, h) - lse[i * H + h]);
          Acc dp = 0;
#pragma omp simd reduction(+ : dp)
          for (int64_t c = 0; c < C; ++c) dp += dov[c] * Acc(vr[c]);
          const Acc pdA = p * X.drop(e, h) * dp;  // alpha * dA; dS = pdA - alpha * Delta
          D += pdA;
          if (gat) {
            const Acc* ah = X.att + h * C;
            for (int64_t c = 0; c < C; ++c) {
              const Acc z = qv[c] + Acc(kr[c]);
              const Acc g = ah[c] * (z > 0 ? Acc(1) : X.slope), lz = z > 0 ? z : X.slope * z;
              dq1[c] += pdA * g;
              dq2[c] += p * g;
              da1[c] += pdA * lz;
              da2[c] += p * lz;
            }
          } else {
            for (int64_t c = 0; c < C; ++c) {
              dq1[c] += pdA * Acc(kr[c]);
              dq2[c] += p * Acc(kr[c]);
            }
          }
        }
        delta[i * H + h] = D;
        const Acc s = gat ? Acc(1) : X.scale;
        T* d = bw.dquery.template as<T>() + i * bw.dquery.ld + h * C;
        for (int64_t c = 0; c < C; ++c) d[c] = T(s * (dq1[c] - D * dq2[c]));
        if (gat)
          for (int64_t c = 0; c < C; ++c) datt_local[h * C + c] += da1[c] - D * da2[c];
      }
    }
    if (gat) {
#pragma omp critical(tessera_attention_datt)
      for (size_t x = 0; x < datt.size(); ++x) datt[x] += datt_local[x];
    }
  }
  if (gat)
    for (size_t x = 0; x < datt.size(); ++x) static_cast<Acc*>(bw.datt)[x] = datt[x];

  // Pass 2, per source j: walk the targets i of j's out-edges (transpose, or A when symmetric).
  std::vector<I> tptr, trow, tperm;
  const I* colptr = nullptr;
  const I* row = nullptr;
  const I* perm = nullptr;
  if (symmetric_path) {
    colptr = A.rowptr;
    row = A.col;
  } else if (bw.transpose) {
    colptr = bw.transpose->colptr;
    row = bw.transpose->row;
    perm = bw.transpose->perm;
  } else {
    tptr.resize(size_t(A.cols + 1));
    trow.resize(size_t(A.nnz));
    tperm.resize(size_t(A.nnz));
    build_attention_transpose_cpu(A, tptr.data(), trow.data(), tperm.data());
    colptr = tptr.data();
    row = trow.data();
    perm = tperm.data();
  }
#pragma omp parallel num_threads(nt)
  {
    std::vector<Acc> kv(static_cast<size_t>(C)), vv(static_cast<size_t>(C)), dk(static_cast<size_t>(C)), dv(static_cast<size_t>(C)), qv(static_cast<size_t>(C));
#pragma omp for schedule(dynamic, 16)
    for (int64_t j = 0; j < A.cols; ++j) {
      for (int64_t h = 0; h < H; ++h) {
        load(kv.data(), X.k.at(j, h), C);
        load(vv.data(), X.v.at(j, h), C);
        std::fill(dk.begin(), dk.end(), Acc(0));
        std::fill(dv.begin(), dv.end(), Acc(0));
        for (int64_t t = colptr[j]; t < colptr[j + 1]; ++t) {
          const int64_t i = row[t];
          const int64_t e = perm ? int64_t(perm[t]) : -1;
          load(qv.data(), X.q.at(i, h), C);
          const T* dor = dO.at(i, h);
          // The logit with the roles of the loaded rows swapped: q_i is the target's row.
          Acc l = 0;
          if (gat) {
            const Acc* ah = X.att + h * C;
            for (int64_t c = 0; c < C; ++c) {
              const Acc z = qv[c] + kv[c];
              l += ah[c] * (z > 0 ? z : X.slope * z);
            }
          } else {
            for (int64_t c = 0; c < C; ++c) l += qv[c] * kv[c];
            l *= X.scale;
          }
          const Acc p = std::exp(l - lse[i * H + h]);
          Acc dp = 0;
#pragma omp simd reduction(+ : dp)
          for (int64_t c = 0; c < C; ++c) dp += Acc(dor[c]) * vv[c];
          const Acc keep = e >= 0 ? X.drop(e, h) : Acc(1);
          const Acc dS = p * (keep * dp - delta[i * H + h]);
          const Acc pk = p * keep;
          if (gat) {
            const Acc* ah = X.att + h * C;
            for (int64_t c = 0; c < C; ++c) {
              const Acc z = qv[c] + kv[c];
              dk[c] += dS * ah[c] * (z > 0 ? Acc(1) : X.slope) + pk * Acc(dor[c]);
            }
          } else {
            for (int64_t c = 0; c < C; ++c) {
              dk[c] += dS * X.scale * qv[c];
              dv[c] += pk * Acc(dor[c]);
            }
          }
        }
        T* d = bw.dkey.template as<T>() + j * bw.dkey.ld + h * C;
        for (int64_t c = 0; c < C; ++c) d[c] = T(dk[c]);
        if (!gat) {
          T* dvr = bw.dvalue.template as<T>() + j * bw.dvalue.ld + h * C;
          for (int64_t c = 0; c < C; ++c) dvr[c] = T(dv[c]);
        }
      }
    }
  }
}

}  // namespace

template <class I>
void build_attention_transpose_cpu(const CsrView<I>& A, I* colptr, I* row, I* perm) {
  std::fill(colptr, colptr + A.cols + 1, I(0));
  for (int64_t e = 0; e < A.nnz; ++e) ++colptr[A.col[e] + 1];
  for (int64_t j = 0; j < A.cols; ++j) colptr[j + 1] += colptr[j];
  std::vector<I> next(colptr, colptr + A.cols);
  for (int64_t i = 0; i < A.rows; ++i)  // rows in order, so each source's list is by position
    for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e) {
      const I t = next[A.col[e]]++;
      row[t] = I(i);
      perm[t] = I(e);
    }
}

template <class I>
void attention_forward_cpu(const AttentionArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.query.dtype, T, [&] { forward<T, I>(a, exec); });
}
template <class I>
void attention_backward_cpu(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  TESSERA_DISPATCH_FLOAT(b.fwd.query.dtype, T, [&] { backward<T, I>(b, exec, symmetric_path); });
}

#define TESSERA_INSTANTIATE(I)                                                                    \
  template void build_attention_transpose_cpu(const CsrView<I>&, I*, I*, I*);                     \
  template void attention_forward_cpu(const AttentionArgs<I>&, const Exec&);                      \
  template void attention_backward_cpu(const AttentionBackwardArgs<I>&, const Exec&, bool);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::ops::detail
