// The CPU SpMM and SDDMM row walks, the body of cpu/ops/spmm.cpp, which compiles them in an SSE2
// and an AVX2 copy through simd_copies.inl. Definitions only, no includes.

template <class T> using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Inline element loads: the generic half conversion lives in another translation unit and would
// cost a call per gathered element.
inline float load(float v) { return v; }
inline double load(double v) { return v; }
inline float load(bf16_t v) { return bf16_bits_to_float(v.bits); }
inline float load(half_t v) {
  const uint32_t h = v.bits;
  const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t bits;
  if (e == 0) {
    const float f = float(m) * 5.9604644775390625e-8f;  // subnormal (or zero): m * 2^-24
    return sign ? -f : f;
  }
  bits = e == 31 ? (sign | 0x7f800000u | (m << 13)) : (sign | ((e + 112u) << 23) | (m << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

int threads_of(const Exec& exec) { return exec.threads > 0 ? exec.threads : omp_get_max_threads(); }

template <class T, class I>
void spmm_typed(const SpmmArgs<I>& a, const Exec& exec) {
  using W = Acc<T>;
  const auto& A = a.A;
  const int64_t F = a.X.cols, ldx = a.X.ld, ldy = a.Y.ld;
  const T* __restrict X = a.X.template as<const T>();
  T* __restrict Y = a.Y.template as<T>();
  const W* wv = static_cast<const W*>(a.values);
  const float* wa = A.values;
  const W* __restrict bias = static_cast<const W*>(a.bias);
  const int64_t nnz = A.nnz, row_bytes = F * int64_t(sizeof(T));
#pragma omp parallel num_threads(threads_of(exec))
  {
    std::vector<W> buf(size_t(std::max<int64_t>(F, 1)));
    W* __restrict acc = buf.data();
#pragma omp for schedule(dynamic, 32)
    for (int64_t i = 0; i < A.rows; ++i) {
      std::fill(acc, acc + F, W(0));
      const int64_t beg = int64_t(A.rowptr[i]), end = int64_t(A.rowptr[i + 1]);
      for (int64_t k = beg; k < end; ++k) {
        if (k + kGatherAhead < nnz) prefetch_row(X + int64_t(A.col[k + kGatherAhead]) * ldx, row_bytes);
        const W w = wv ? wv[k] : wa ? W(wa[k]) : W(1);
        const T* __restrict x = X + int64_t(A.col[k]) * ldx;
#pragma omp simd
        for (int64_t f = 0; f < F; ++f) acc[f] += w * W(load(x[f]));
      }
      T* __restrict y = Y + i * ldy;
      if (bias) {
#pragma omp simd
        for (int64_t f = 0; f < F; ++f) acc[f] += bias[f];
      }
      if constexpr (std::is_same_v<T, W>) {
#pragma omp simd
        for (int64_t f = 0; f < F; ++f) y[f] = acc[f];
      } else {
        for (int64_t f = 0; f < F; ++f) y[f] = T(acc[f]);
      }
    }
  }
}

template <class T, class I>
void sddmm_typed(const SddmmArgs<I>& a, const Exec& exec) {
  using W = Acc<T>;
  const auto& A = a.A;
  const int64_t F = a.X.cols;
  W* dw = static_cast<W*>(a.dw);
#pragma omp parallel for schedule(dynamic, 32) num_threads(threads_of(exec))
  for (int64_t i = 0; i < A.rows; ++i) {
    const T* __restrict dy = a.dY.template as<const T>() + i * a.dY.ld;
    for (int64_t k = int64_t(A.rowptr[i]); k < int64_t(A.rowptr[i + 1]); ++k) {
      const T* __restrict x = a.X.template as<const T>() + int64_t(A.col[k]) * a.X.ld;
      W s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t f = 0; f < F; ++f) s += W(load(dy[f])) * W(load(x[f]));
      dw[k] = s;
    }
  }
}
