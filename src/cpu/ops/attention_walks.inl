// The attention CPU walks (forward; backward's targets and sources passes) and their helpers, the
// body of cpu/ops/attention.cpp, which compiles them in an SSE2 and an AVX2 copy through
// simd_copies.inl. Definitions only, no includes.

template <class T, class Acc>
inline void load(Acc* __restrict dst, const T* __restrict src, int64_t C) {
#pragma omp simd
  for (int64_t c = 0; c < C; ++c) dst[c] = Acc(src[c]);
}

// GATv2 logit of one head: sum_c att[c] * LeakyReLU(x[c] + y[c]) (symmetric in x and y, so the
// targets pass (x = q_i) and the sources pass (x = k_j) compute bitwise the same value).
template <class T, class Acc>
inline Acc gat_logit(const Acc* __restrict x, const T* __restrict y, const Acc* __restrict att, Acc slope,
                     int64_t C) {
  Acc e = 0;
#pragma omp simd reduction(+ : e)
  for (int64_t c = 0; c < C; ++c) {
    // LeakyReLU(z) as z * lrelu'(z) (bitwise the same): a select between constants vectorizes,
    // `z > 0 ? z : slope * z` leaves a branch (the multiply could trap) and does not.
    const Acc z = x[c] + Acc(y[c]);
    e += att[c] * (z * (z > 0 ? Acc(1) : slope));
  }
  return e;
}
template <class T, class Acc>
inline Acc dot(const Acc* __restrict x, const T* __restrict y, int64_t C) {
  Acc e = 0;
#pragma omp simd reduction(+ : e)
  for (int64_t c = 0; c < C; ++c) e += x[c] * Acc(y[c]);
  return e;
}
template <class T, class Acc>
inline void axpy(Acc* __restrict acc, Acc w, const T* __restrict y, int64_t C) {
#pragma omp simd
  for (int64_t c = 0; c < C; ++c) acc[c] += w * Acc(y[c]);
}

// Shared per-call constants.
template <class T, class I, class Acc>
struct Ctx {
  const AttentionArgs<I>& a;
  int64_t H, C, HC;
  int64_t KS, KW;  // column step between heads' key/value slices (C, or 0 when shared) and row width
  const T *q, *k, *v;
  int64_t ldq, ldk, ldv;
  const Acc* att;
  Acc slope, scale;
  uint32_t threshold;
  Acc keep_scale;
  bool gat;
  const T* ea;    // edge features (nnz x D, ld lde) and their projection (H*C x D, ld ldw); ea null = none
  const T* W;
  int64_t D, lde, ldw;
  std::vector<Acc> Wt;  // the projection transposed (D x H*C): every edge-feature loop runs over H*C
  explicit Ctx(const AttentionArgs<I>& args)
      : a(args), H(args.heads), C(args.channels), HC(args.heads * args.channels),
        KS(args.shared_kv() ? 0 : args.channels), KW(args.kv_width()),
        q(args.query.template as<T>()), k(args.key.template as<T>()),
        v(args.kind == AttentionKind::gatv2 ? k : args.value.template as<T>()), ldq(args.query.ld),
        ldk(args.key.ld), ldv(args.kind == AttentionKind::gatv2 ? args.key.ld : args.value.ld),
        att(static_cast<const Acc*>(args.att)), slope(Acc(args.negative_slope)),
        scale(Acc(args.logit_scale())), threshold(attention_dropout_threshold(args.dropout)),
        keep_scale(args.dropout >= 1 ? Acc(0) : Acc(1.0 / (1.0 - args.dropout))),
        gat(args.kind == AttentionKind::gatv2), ea(args.edge_attr.template as<T>()),
        W(args.edge_weight.template as<T>()), D(args.edge_attr.cols), lde(args.edge_attr.ld),
        ldw(args.edge_weight.ld) {
    if (ea) {
      Wt.resize(static_cast<size_t>(D * HC));
      for (int64_t o = 0; o < HC; ++o)
        for (int64_t t = 0; t < D; ++t) Wt[size_t(t * HC + o)] = Acc(W[o * ldw + t]);
    }
  }
  bool edges() const { return ea != nullptr; }
  // The Transformer's edge terms factor through W: <x_h, W_h e> = <W_h^T x_h, e>. With
  // u = W_h^T q_i and W_h^T dO_i per row (H x D, from back()), an entry's logit and dA edge terms
  // cost D multiply-adds per head instead of its H*C x D projection. GATv2's LeakyReLU does not
  // factor: it projects every entry (project()).
  bool factored() const { return ea != nullptr && !gat; }
  void back(const Acc* __restrict x, Acc* __restrict u) const {
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < D; ++t) u[h * D + t] = dot(Wt.data() + t * HC + h * C, x + h * C, C);
  }
  // Transformer logit of head h with edge features, factored: (<x, y> + <u_h, edge_attr[e]>) scale
  // with one row loaded (x) and one stored (y), either role, so every pass computes the same value.
  Acc logit_factored(const Acc* x, const T* y, const Acc* u_h, int64_t e) const {
    return (dot(x, y, C) + dot(u_h, ea + e * lde, D)) * scale;
  }
  // eh = W edge_attr[e] (H*C), the entry's projected edge features.
  void project(int64_t e, Acc* __restrict eh) const {
    const T* __restrict x = ea + e * lde;
    std::fill(eh, eh + HC, Acc(0));
    for (int64_t t = 0; t < D; ++t) axpy(eh, Acc(x[t]), Wt.data() + t * HC, HC);
  }
  // GATv2 logit of head h with edge features: q (loaded) and k (stored) plus eh (loaded). The
  // targets and the sources pass both call this with the same operands, so they agree bitwise.
  Acc logit_edge(const Acc* __restrict q, const T* __restrict k, const Acc* __restrict eh, int64_t h,
                 Acc* __restrict tmp) const {
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) tmp[c] = q[c] + eh[c];
    return gat_logit<T, Acc>(tmp, k, att + h * C, slope, C);
  }
  // Logit of head h between a row loaded in the accumulation type and a stored row (either role).
  Acc logit(const Acc* loaded, const T* stored, int64_t h) const {
    return gat ? gat_logit<T, Acc>(loaded, stored, att + h * C, slope, C)
               : dot<T, Acc>(loaded, stored, C) * scale;
  }
  Acc drop(int64_t edge, int64_t h) const {
    if (threshold == 0) return Acc(1);
    return attention_dropout_keep(a.dropout_seed, uint64_t(edge), uint64_t(h), threshold) ? keep_scale : Acc(0);
  }
};

using cpu::prefetch_row;
// Entries ahead whose source row is prefetched (prefetch.hpp): more work per entry than the
// SpMM's walk; 2, 5 and 8 measured no better than 3 (R-MAT 2^16, H=4, C=32).
constexpr int64_t kAhead = 3;
// Most projected edge-feature values (deg x H*C) a targets-pass row keeps between its walks.
constexpr int64_t kKeptProjections = int64_t(1) << 18;

int threads_of(const Exec& exec) { return exec.threads > 0 ? exec.threads : omp_get_max_threads(); }

// Chunk boundaries over rows: a chunk closes once its entries plus a per-row overhead reach
// kChunkCost. Depends on the graph only, never on the thread count.
template <class I>
std::vector<int64_t> row_chunks(const I* ptr, int64_t rows) {
  constexpr int64_t kChunkCost = 4096, kRowCost = 8;
  std::vector<int64_t> b{0};
  int64_t cost = 0;
  for (int64_t i = 0; i < rows; ++i) {
    cost += int64_t(ptr[i + 1] - ptr[i]) + kRowCost;
    if (cost >= kChunkCost) {
      b.push_back(i + 1);
      cost = 0;
    }
  }
  if (b.back() != rows) b.push_back(rows);
  return b;
}

// Targets pass, one GATv2 entry e with edge features: dq += ...; g = d loss / d eh; the entry's
// dedge_attr = W^T g; its chunk's dedge_weight partial += g edge_attr^T; datt.
// P, G: the entry's alpha and alpha * dA per head, D: the row's Delta; eh: the entry's projection
// (H*C); g: scratch (H*C).
template <class T, class I, class Acc>
void edge_grad_row(const Ctx<T, I, Acc>& X, int64_t e, const T* kr, const Acc* qv, const Acc* P, const Acc* G,
                   const Acc* D, const Acc* eh, Acc* g, Acc* dq, Acc* datt, T* dea, Acc* dw) {
  const int64_t H = X.H, C = X.C, HC = X.HC, Dm = X.D;
  const Acc slope = X.slope;  // a local: the stores below cannot alias it
  for (int64_t h = 0; h < H; ++h) {
    const Acc dS = G[h] - P[h] * D[h];
    const Acc* __restrict q = qv + h * C;
    const T* __restrict k = kr + h * C;
    const Acc* __restrict e_h = eh + h * C;
    Acc* __restrict d = dq + h * C;
    Acc* __restrict gh = g + h * C;
    const Acc* __restrict at = X.att + h * C;
    Acc* __restrict da = datt + h * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) {
      const Acc z = (q[c] + e_h[c]) + Acc(k[c]);  // as logit_edge
      const Acc s = z > 0 ? Acc(1) : slope;
      gh[c] = dS * at[c] * s;
      d[c] += gh[c];
      da[c] += dS * (z * s);
    }
  }
  // dw is this chunk's partial of dedge_weight transposed (D x H*C), like Wt.
  const T* x = X.ea + e * X.lde;
  for (int64_t t = 0; t < Dm; ++t) {
    dea[t] = T(dot(X.Wt.data() + t * HC, g, HC));
    axpy(dw + t * HC, Acc(x[t]), g, HC);
  }
}

template <class T, class I>
void forward(const AttentionArgs<I>& a, const Exec& exec) {
  using Acc = typename acc_of<T>::type;
  const Ctx<T, I, Acc> X(a);
  const auto& A = a.A;
  const int64_t H = X.H, C = X.C, HC = X.HC;
  const Acc ninf = -std::numeric_limits<Acc>::infinity();
  Acc* lse = static_cast<Acc*>(a.lse);
  Acc* alpha = static_cast<Acc*>(a.alpha);
  T* out = a.out.template as<T>();
  const Acc* bias = static_cast<const Acc*>(a.out_bias);
  const T* res = a.residual.data ? a.residual.template as<T>() : nullptr;
  const auto chunks = row_chunks(A.rowptr, A.rows);
  const int64_t nchunks = int64_t(chunks.size()) - 1;
  const int64_t rowbytes = X.KW * int64_t(sizeof(T));  // a key or value row
#pragma omp parallel num_threads(threads_of(exec))
  {
    const size_t hc = static_cast<size_t>(HC), h1 = static_cast<size_t>(H);
    std::vector<Acc> qv(hc), acc(hc), m(h1), s(h1), L;  // L: the row's logits, then probabilities
    std::vector<Acc> eh(X.edges() && X.gat ? hc : 0), tmp(X.edges() && X.gat ? hc : 0),
        u(X.factored() ? h1 * size_t(X.D) : 0);
    // The Transformer's message edge term: sum_e w_e W edge_attr_e = W (sum_e w_e edge_attr_e), so
    // the row sums the weighted features (H x D) and projects them once.
    const bool edge_msg = X.factored();
    std::vector<Acc> wa(edge_msg ? h1 * size_t(X.D) : 0);
#pragma omp for schedule(dynamic, 1)
    for (int64_t chunk = 0; chunk < nchunks; ++chunk)
      for (int64_t i = chunks[size_t(chunk)]; i < chunks[size_t(chunk) + 1]; ++i) {
        const int64_t b = A.rowptr[i], end = A.rowptr[i + 1];
        if (L.size() < size_t((end - b) * H)) L.resize(size_t((end - b) * H));
        load(qv.data(), X.q + i * X.ldq, HC);
        if (X.factored()) X.back(qv.data(), u.data());
        std::fill(m.begin(), m.end(), ninf);
        // Walk 1: logits of the row into scratch, and their max per head (an exact max, so no
        // online rescaling of the accumulator).
        for (int64_t e = b; e < end; ++e) {
          if (e + kAhead < A.nnz) prefetch_row(X.k + int64_t(A.col[e + kAhead]) * X.ldk, rowbytes);
          const T* kr = X.k + int64_t(A.col[e]) * X.ldk;
          Acc* l = L.data() + (e - b) * H;
          if (X.edges() && X.gat) X.project(e, eh.data());
          for (int64_t h = 0; h < H; ++h) {
            l[h] = X.factored() ? X.logit_factored(qv.data() + h * C, kr + h * C, u.data() + h * X.D, e)
                   : X.edges()  ? X.logit_edge(qv.data() + h * C, kr + h * C, eh.data() + h * C, h, tmp.data())
                                : X.logit(qv.data() + h * C, kr + h * X.KS, h);
            m[h] = std::max(m[h], l[h]);
          }
        }
        // Walk 2: probabilities and the weighted sum of the values.
        std::fill(acc.begin(), acc.end(), Acc(0));
        std::fill(s.begin(), s.end(), Acc(0));
        for (int64_t e = b; e < end; ++e) {
          if (!X.gat && e + kAhead < end) prefetch_row(X.v + int64_t(A.col[e + kAhead]) * X.ldv, rowbytes);
          const T* vr = X.v + int64_t(A.col[e]) * X.ldv;
          Acc* l = L.data() + (e - b) * H;
          for (int64_t h = 0; h < H; ++h) {
            const Acc p = std::exp(l[h] - m[h]);
            s[h] += p;
            l[h] = p;
            const Acc w = p * X.drop(e, h);
            if (w != 0) {
              axpy(acc.data() + h * C, w, vr + h * X.KS, C);
              if (edge_msg) axpy(wa.data() + h * X.D, w, X.ea + e * X.lde, X.D);
            }
          }
        }
        if (edge_msg) {
          for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < X.D; ++t)
              axpy(acc.data() + h * C, wa[size_t(h * X.D + t)], X.Wt.data() + t * HC + h * C, C);
          std::fill(wa.begin(), wa.end(), Acc(0));
        }
        T* o = out + i * a.out.ld;
        const T* r = res ? res + i * a.residual.ld : nullptr;
        for (int64_t h = 0; h < H; ++h) {
          const Acc inv = s[h] > 0 ? Acc(1) / s[h] : Acc(0);
          for (int64_t c = 0; c < C; ++c) {
            const int64_t x = h * C + c;
            Acc y = acc[size_t(x)] * inv;
            if (bias) y += bias[x];
            if (r) y += Acc(r[x]);
            o[x] = T(y);
          }
          if (lse) lse[i * H + h] = s[h] > 0 ? m[h] + std::log(s[h]) : ninf;
        }
        if (alpha)
          for (int64_t e = b; e < end; ++e)
            for (int64_t h = 0; h < H; ++h) {
              const Acc p = L[size_t((e - b) * H + h)] / s[size_t(h)];
              alpha[e * H + h] = a.alpha_after_dropout ? p * X.drop(e, h) : p;
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
  const int64_t H = X.H, C = X.C, HC = X.HC;
  const bool gat = X.gat;
  const Acc slope = X.slope, scale = X.scale;
  const Acc* lse = static_cast<const Acc*>(a.lse);
  const T* dO = bw.dout.template as<T>();
  const int64_t ldo = bw.dout.ld;
  const int nt = threads_of(exec);
  std::vector<Acc> delta(size_t(A.rows * H));
  const int64_t rowbytes = HC * int64_t(sizeof(T)), kvbytes = X.KW * int64_t(sizeof(T));

  // Pass 1, per target i. Walk 1 recomputes alpha_ij = exp(e_ij - lse_i) and alpha_ij dA_ij into
  // row scratch and sums Delta_i (from the edges, so it stays exact when out is 16-bit; out is
  // never read); walk 2 then forms dS_ij = alpha_ij (dA_ij - Delta_i) and accumulates dq (and
  // this chunk's datt partial) with one accumulator set.
  const auto tchunks = row_chunks(A.rowptr, A.rows);
  const int64_t ntc = int64_t(tchunks.size()) - 1;
  std::vector<Acc> datt_part(gat ? size_t(ntc * HC) : 0, Acc(0));
  // Edge features: the entry's gradient g = d loss / d eh gives dedge_attr (per entry, in this
  // pass) and this chunk's partial of dedge_weight = sum g edge_attr^T (summed in chunk order).
  const bool edges = X.edges();
  const int64_t Dm = X.D;
  std::vector<Acc> dw_part(edges ? size_t(ntc * HC * Dm) : 0, Acc(0));
  T* dea = edges ? bw.dedge_attr.template as<T>() : nullptr;
  // Transformer: W_h^T q_i and W_h^T dO_i of every target (rows x H x D), for the sources pass.
  const bool factored = X.factored();
  std::vector<Acc> Uq(factored ? size_t(A.rows * H * Dm) : 0), Uo(factored ? size_t(A.rows * H * Dm) : 0);
#pragma omp parallel num_threads(nt)
  {
    const size_t hc = static_cast<size_t>(HC), h1 = static_cast<size_t>(H);
    std::vector<Acc> qv(hc), dov(hc), dq(hc), D(h1), P, G;  // P, G: the row's alpha, alpha * dA
    std::vector<Acc> eh(edges && gat ? hc : 0), tmp(edges && gat ? hc : 0), ge(edges && gat ? hc : 0);
    std::vector<Acc> EH;  // GATv2: the row's projections, kept from walk 1 for walk 2 when the row is small
    // Transformer rows: sum_j dS_ij e_ij and sum_j alpha'_ij e_ij per head (H x D), and one entry's
    // dedge_attr (D).
    const size_t hd = factored ? h1 * size_t(Dm) : 0;
    std::vector<Acc> s1(hd), s2(hd), de(factored ? size_t(Dm) : 0);
#pragma omp for schedule(dynamic, 1)
    for (int64_t chunk = 0; chunk < ntc; ++chunk) {
      Acc* dat = gat ? datt_part.data() + chunk * HC : nullptr;
      for (int64_t i = tchunks[size_t(chunk)]; i < tchunks[size_t(chunk) + 1]; ++i) {
        const int64_t b = A.rowptr[i], end = A.rowptr[i + 1];
        if (P.size() < size_t((end - b) * H)) {
          P.resize(size_t((end - b) * H));
          G.resize(size_t((end - b) * H));
        }
        load(qv.data(), X.q + i * X.ldq, HC);
        load(dov.data(), dO + i * ldo, HC);
        Acc* uq = factored ? Uq.data() + i * H * Dm : nullptr;
        Acc* uo = factored ? Uo.data() + i * H * Dm : nullptr;
        if (factored) {
          X.back(qv.data(), uq);
          X.back(dov.data(), uo);
        }
        const Acc* li = lse + i * H;
        std::fill(D.begin(), D.end(), Acc(0));
        // GATv2 projects each entry's features in walk 1; walk 2 needs them again. Rows up to
        // kKeptProjections values keep them (per thread, reused across rows), longer rows (hubs)
        // project twice rather than hold deg x H*C values.
        const bool keep = edges && gat && (end - b) * HC <= kKeptProjections;
        if (keep && EH.size() < size_t((end - b) * HC)) EH.resize(size_t((end - b) * HC));
        auto eh_of = [&](int64_t e) { return keep ? EH.data() + (e - b) * HC : eh.data(); };
        for (int64_t e = b; e < end; ++e) {
          if (e + kAhead < A.nnz) {
            const int64_t jn = A.col[e + kAhead];
            prefetch_row(X.k + jn * X.ldk, kvbytes);
            if (!gat) prefetch_row(X.v + jn * X.ldv, kvbytes);
          }
          const int64_t j = A.col[e];
          const T* kr = X.k + j * X.ldk;
          const T* vr = X.v + j * X.ldv;
          Acc* ehe = edges && gat ? eh_of(e) : nullptr;
          if (ehe) X.project(e, ehe);
          for (int64_t h = 0; h < H; ++h) {
            const Acc lg = factored ? X.logit_factored(qv.data() + h * C, kr + h * C, uq + h * Dm, e)
                           : edges  ? X.logit_edge(qv.data() + h * C, kr + h * C, ehe + h * C, h, tmp.data())
                                    : X.logit(qv.data() + h * C, kr + h * X.KS, h);
            const Acc p = std::exp(lg - li[h]);
            Acc dA = dot(dov.data() + h * C, vr + h * X.KS, C);
            if (factored) dA += dot(uo + h * Dm, X.ea + e * X.lde, Dm);  // the message is value + eh
            const Acc pdA = p * X.drop(e, h) * dA;
            D[size_t(h)] += pdA;
            P[size_t((e - b) * H + h)] = p;
            G[size_t((e - b) * H + h)] = pdA;
          }
        }
        std::fill(dq.begin(), dq.end(), Acc(0));
        for (int64_t e = b; e < end; ++e) {
          const T* kr = X.k + int64_t(A.col[e]) * X.ldk;
          if (edges && gat) {
            Acc* ehe = eh_of(e);
            if (!keep) X.project(e, ehe);
            edge_grad_row<T, I, Acc>(X, e, kr, qv.data(), P.data() + (e - b) * H, G.data() + (e - b) * H,
                                     D.data(), ehe, ge.data(), dq.data(), dat, dea + e * bw.dedge_attr.ld,
                                     dw_part.data() + chunk * HC * Dm);
            continue;
          }
          if (factored) {
            // g_h = scale dS q_i + alpha' dO_i, so dedge_attr_e = sum_h scale dS W_h^T q_i +
            // alpha' W_h^T dO_i; dq's edge term W_h sum_e dS e and dedge_weight wait for the row end.
            const T* x = X.ea + e * X.lde;
            std::fill(de.begin(), de.end(), Acc(0));
            for (int64_t h = 0; h < H; ++h) {
              const Acc dS = G[size_t((e - b) * H + h)] - P[size_t((e - b) * H + h)] * D[size_t(h)];
              const Acc pk = P[size_t((e - b) * H + h)] * X.drop(e, h);
              axpy(dq.data() + h * C, dS, kr + h * C, C);
              axpy(s1.data() + h * Dm, dS, x, Dm);
              axpy(s2.data() + h * Dm, pk, x, Dm);
              axpy(de.data(), dS * scale, uq + h * Dm, Dm);
              axpy(de.data(), pk, uo + h * Dm, Dm);
            }
            T* d = dea + e * bw.dedge_attr.ld;
            for (int64_t t = 0; t < Dm; ++t) d[t] = T(de[size_t(t)]);
            continue;
          }
          for (int64_t h = 0; h < H; ++h) {
            const Acc dS = G[size_t((e - b) * H + h)] - P[size_t((e - b) * H + h)] * D[size_t(h)];
            Acc* __restrict d = dq.data() + h * C;
            if (!gat) {
              axpy(d, dS, kr + h * X.KS, C);
              continue;
            }
            const Acc* __restrict q = qv.data() + h * C;
            const Acc* __restrict at = X.att + h * C;
            const T* __restrict k = kr + h * C;
            Acc* __restrict da = dat + h * C;
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) {
              const Acc z = q[c] + Acc(k[c]);
              const Acc g = z > 0 ? Acc(1) : slope;  // see gat_logit
              d[c] += dS * at[c] * g;
              da[c] += dS * (z * g);
            }
          }
        }
        if (factored) {  // the row's W_h sum_e dS e into dq, and its part of dedge_weight (D x H*C)
          Acc* dw = dw_part.data() + chunk * HC * Dm;
          for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < Dm; ++t) {
              const Acc a1 = s1[size_t(h * Dm + t)], a2 = s2[size_t(h * Dm + t)];
              axpy(dq.data() + h * C, a1, X.Wt.data() + t * HC + h * C, C);
              axpy(dw + t * HC + h * C, a1 * scale, qv.data() + h * C, C);
              axpy(dw + t * HC + h * C, a2, dov.data() + h * C, C);
            }
          std::fill(s1.begin(), s1.end(), Acc(0));
          std::fill(s2.begin(), s2.end(), Acc(0));
        }
        T* dqr = bw.dquery.template as<T>() + i * bw.dquery.ld;
        const Acc s = gat ? Acc(1) : scale;
        for (int64_t c = 0; c < HC; ++c) dqr[c] = T(s * dq[size_t(c)]);
        for (int64_t h = 0; h < H; ++h) delta[size_t(i * H + h)] = D[size_t(h)];
      }
    }
  }
  if (gat) {  // chunk partials in chunk order: the same sum for any thread count
    Acc* datt = static_cast<Acc*>(bw.datt);
    std::fill(datt, datt + HC, Acc(0));
    for (int64_t chunk = 0; chunk < ntc; ++chunk)
      for (int64_t x = 0; x < HC; ++x) datt[x] += datt_part[size_t(chunk * HC + x)];
  }
  if (edges) {
    Acc* dw = static_cast<Acc*>(bw.dedge_weight);
    std::fill(dw, dw + HC * Dm, Acc(0));
    for (int64_t chunk = 0; chunk < ntc; ++chunk)  // partials are D x H*C: transpose into H*C x D
      for (int64_t t = 0; t < Dm; ++t)
        for (int64_t o = 0; o < HC; ++o) dw[o * Dm + t] += dw_part[size_t(chunk * HC * Dm + t * HC + o)];
  }

  // Pass 2, per source j: walk the targets i of j's out-edges (transpose, or A when symmetric),
  // recomputing alpha_ij from lse_i and dS_ij from Delta_i; no atomics.
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
  const auto schunks = row_chunks(colptr, A.cols);
  const int64_t nsc = int64_t(schunks.size()) - 1;
#pragma omp parallel num_threads(nt)
  {
    const size_t hc = static_cast<size_t>(HC);
    const size_t kw = static_cast<size_t>(X.KW);
    std::vector<Acc> kv(kw), vv(gat ? 0 : kw), dk(hc), dv(gat ? 0 : hc);  // dk, dv: per head
    std::vector<Acc> eh(edges && gat ? hc : 0), tmp(edges && gat ? hc : 0), qa(edges && gat ? hc : 0);
#pragma omp for schedule(dynamic, 1)
    for (int64_t chunk = 0; chunk < nsc; ++chunk)
      for (int64_t j = schunks[size_t(chunk)]; j < schunks[size_t(chunk) + 1]; ++j) {
        load(kv.data(), X.k + j * X.ldk, X.KW);
        if (!gat) load(vv.data(), X.v + j * X.ldv, X.KW);
        const Acc* vj = gat ? kv.data() : vv.data();
        std::fill(dk.begin(), dk.end(), Acc(0));
        std::fill(dv.begin(), dv.end(), Acc(0));
        for (int64_t t = colptr[j]; t < colptr[j + 1]; ++t) {
          if (t + kAhead < A.nnz) {
            const int64_t in = row[t + kAhead];
            prefetch_row(X.q + in * X.ldq, rowbytes);
            prefetch_row(dO + in * ldo, rowbytes);
          }
          const int64_t i = row[t];
          const int64_t e = perm ? int64_t(perm[t]) : -1;
          const T* qr = X.q + i * X.ldq;
          const T* dor = dO + i * ldo;
          if (edges && gat) {  // the entry's edge features (perm is set: no symmetric path with them)
            X.project(e, eh.data());
            load(qa.data(), qr, HC);
          }
          const Acc* uq = factored ? Uq.data() + i * H * Dm : nullptr;
          const Acc* uo = factored ? Uo.data() + i * H * Dm : nullptr;
          for (int64_t h = 0; h < H; ++h) {
            const Acc lg = factored ? X.logit_factored(kv.data() + h * C, qr + h * C, uq + h * Dm, e)
                           : edges  ? X.logit_edge(qa.data() + h * C, X.k + j * X.ldk + h * C, eh.data() + h * C,
                                                   h, tmp.data())
                                    : X.logit(kv.data() + h * X.KS, qr + h * C, h);
            const Acc p = std::exp(lg - lse[i * H + h]);
            Acc dp = dot(vj + h * X.KS, dor + h * C, C);
            if (factored) dp += dot(uo + h * Dm, X.ea + e * X.lde, Dm);
            const Acc keep = e >= 0 ? X.drop(e, h) : Acc(1);
            const Acc dS = p * (keep * dp - delta[size_t(i * H + h)]);
            const Acc pk = p * keep;
            Acc* __restrict d = dk.data() + h * C;
            const T* __restrict qh = qr + h * C;
            const T* __restrict oh = dor + h * C;
            if (gat) {
              const Acc* __restrict kh = kv.data() + h * C;
              const Acc* __restrict at = X.att + h * C;
              const Acc* __restrict eh_h = edges ? eh.data() + h * C : nullptr;
#pragma omp simd
              for (int64_t c = 0; c < C; ++c) {
                const Acc z = edges ? (Acc(qh[c]) + eh_h[c]) + kh[c] : kh[c] + Acc(qh[c]);
                const Acc g = z > 0 ? Acc(1) : slope;
                d[c] += dS * at[c] * g + pk * Acc(oh[c]);
              }
            } else {
              axpy(d, dS * scale, qh, C);
              axpy(dv.data() + h * C, pk, oh, C);
            }
          }
        }
        if (X.KS == 0 && H > 1) {  // shared key and value: their gradients sum the heads' slices
          for (int64_t h = 1; h < H; ++h) {
            axpy(dk.data(), Acc(1), dk.data() + h * C, C);
            axpy(dv.data(), Acc(1), dv.data() + h * C, C);
          }
        }
        T* d = bw.dkey.template as<T>() + j * bw.dkey.ld;
        for (int64_t c = 0; c < X.KW; ++c) d[c] = T(dk[size_t(c)]);
        if (!gat) {
          T* dvr = bw.dvalue.template as<T>() + j * bw.dvalue.ld;
          for (int64_t c = 0; c < X.KW; ++c) dvr[c] = T(dv[size_t(c)]);
        }
      }
  }
}
