"""tessera.kernels.MarginalizedGraphKernel: closed form, a numpy dense solve of the defining
system (the oracle), symmetry / PSD, gradients against central differences, clear errors, and
MUTAG against the C++ CLI (`tessera kernel`)."""
import glob
import os
import subprocess

import numpy as np
import pytest
import torch

import tessera
from tessera.kernels import (Additive, Constant, KroneckerDelta, LabeledGraph, MarginalizedGraphKernel,
                             SquareExponential, TensorProduct)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("TESSERA_SHARED_DATA", os.path.join(REPO, "..", "shared", "data"))


def random_graph(rng, n, p=0.3, labels=3, edge_labels=2, weighted=True, attr_dim=2):
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    for i in range(n):  # no isolated nodes: the closed form assumes none
        if n > 1 and not any(i in e for e in edges):
            edges.append((i, (i + 1) % n))
    edges = sorted({(min(a, b), max(a, b)) for a, b in edges})
    return LabeledGraph.from_edges(
        n, edges,
        weights=rng.uniform(0.5, 2.0, len(edges)) if weighted else None,
        node_labels=rng.integers(0, labels, n),
        edge_labels=rng.integers(0, edge_labels, len(edges)),
        node_attrs=rng.normal(size=(n, attr_dim)).astype(np.float32))


def dense_adjacency(g):
    n = g.n
    A = np.zeros((n, n))
    L = np.zeros((n, n), dtype=np.int64)
    rp, col = g.rowptr.numpy(), g.col.numpy()
    w = np.ones(col.size) if g.weight is None else g.weight.numpy()
    el = np.zeros(col.size, dtype=np.int64) if g.edge_labels is None else g.edge_labels.numpy()
    for r in range(n):
        for k in range(rp[r], rp[r + 1]):
            A[r, col[k]] = np.float32(w[k])  # the core stores weights as float32
            L[r, col[k]] = el[k]
    return A, L


def numpy_kernel(g1, g2, q, hv, he, lmin=0):
    """Dense solve of (D V^-1 - W) x = D 1 for k_v = delta(hv) on labels, k_e = delta(he)."""
    A1, L1 = dense_adjacency(g1)
    A2, L2 = dense_adjacency(g2)
    d1, d2 = A1.sum(1), A2.sum(1)
    d1[d1 == 0] = 1
    d2[d2 == 0] = 1
    nl1, nl2 = g1.node_labels.numpy(), g2.node_labels.numpy()
    kv = np.where(nl1[:, None] == nl2[None, :], 1.0, hv).reshape(-1)
    ke = np.where(L1[:, None, :, None] == L2[None, :, None, :], 1.0, he)  # [i, i', j, j']
    W = (A1[:, None, :, None] * A2[None, :, None, :] * ke).reshape(g1.n * g2.n, g1.n * g2.n)
    D = np.kron(d1, d2) / (1 - q) ** 2
    x = np.linalg.solve(np.diag(D / kv) - W, D)
    return x.sum() - (kv.sum() if lmin else 0.0)


def test_closed_form_for_constant_kernels(seed):
    rng = np.random.default_rng(seed)
    graphs = [random_graph(rng, int(n), weighted=False) for n in rng.integers(2, 25, 6)]
    v, e, q = 0.7, 0.4, 0.05
    mgk = MarginalizedGraphKernel(Constant(v), Constant(e), q=q)
    K = mgk(graphs)
    n = np.array([g.n for g in graphs], dtype=np.float64)
    expect = np.outer(n, n) * v / (1 - v * e * (1 - q) ** 2)
    np.testing.assert_allclose(K, expect, rtol=1e-9)
    assert mgk.last_stats["converged"] == mgk.last_stats["pairs"] == len(graphs) * (len(graphs) + 1) / 2


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-5)])
def test_matches_numpy_dense_solve(seed, dtype, rtol):
    rng = np.random.default_rng(seed)
    graphs = [random_graph(rng, int(n)) for n in rng.integers(1, 12, 5)]
    q, hv, he = 0.1, 0.3, 0.4
    mgk = MarginalizedGraphKernel(KroneckerDelta(hv), KroneckerDelta(he), q=q, dtype=dtype)
    K = mgk(graphs)
    expect = np.array([[numpy_kernel(a, b, q, hv, he) for b in graphs] for a in graphs])
    np.testing.assert_allclose(K, expect, rtol=rtol)
    np.testing.assert_allclose(mgk.diag(graphs), np.diag(expect), rtol=rtol)
    # lmin = 1: measured against the unsubtracted size (the difference may cancel)
    K1 = MarginalizedGraphKernel(KroneckerDelta(hv), KroneckerDelta(he), q=q, dtype=dtype, lmin=1)(graphs)
    expect1 = np.array([[numpy_kernel(a, b, q, hv, he, lmin=1) for b in graphs] for a in graphs])
    assert np.max(np.abs(K1 - expect1) / np.abs(expect)) < rtol


def test_symmetric_psd_cross_and_normalized(seed):
    rng = np.random.default_rng(seed)
    graphs = [random_graph(rng, int(n)) for n in rng.integers(2, 15, 8)]
    nk = TensorProduct(KroneckerDelta(0.5), SquareExponential(1.0))
    ek = Additive(KroneckerDelta(0.3), Constant(0.8))
    mgk = MarginalizedGraphKernel(nk, ek, q=0.08, normalize=True)
    K = mgk(graphs)
    np.testing.assert_allclose(K, K.T, rtol=1e-12)
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=1e-10)
    assert np.linalg.eigvalsh(K).min() > -1e-9
    C = mgk(graphs[:3], graphs[3:])
    np.testing.assert_allclose(C, K[:3, 3:], rtol=1e-9)
    Kt = MarginalizedGraphKernel(nk, ek, q=0.08, normalize=True, as_tensor=True)(graphs)
    assert isinstance(Kt, torch.Tensor) and Kt.dtype == torch.float64
    np.testing.assert_allclose(Kt.numpy(), K, rtol=1e-12)


def test_gradients_match_central_differences(seed):
    rng = np.random.default_rng(seed)
    graphs = [random_graph(rng, int(n)) for n in rng.integers(2, 10, 3)]
    hv, he, l, q = 0.4, 0.3, 1.3, 0.1

    def make(hv, he, l, q):
        return MarginalizedGraphKernel(TensorProduct(KroneckerDelta(hv), SquareExponential(l)),
                                       KroneckerDelta(he), q=q)

    K, dK = make(hv, he, l, q)(graphs, eval_gradient=True)
    names = make(hv, he, l, q).hyperparameter_names
    assert dK.shape == (3, 3, len(names)) and len(names) == 4 and names[-1] == "q"
    theta = [hv, l, he, q]  # node terms, edge terms, q
    for h in range(4):
        eps = 1e-6
        up, dn = list(theta), list(theta)
        up[h] += eps
        dn[h] -= eps
        fd = (make(up[0], up[2], up[1], up[3])(graphs) - make(dn[0], dn[2], dn[1], dn[3])(graphs)) / (2 * eps)
        np.testing.assert_allclose(dK[:, :, h], fd, rtol=1e-5, atol=1e-6 * np.abs(K).max(), err_msg=names[h])


def test_bad_input_raises_clear_errors(seed):
    rng = np.random.default_rng(seed)
    g = random_graph(rng, 5)
    with pytest.raises(RuntimeError, match="q"):
        MarginalizedGraphKernel(q=1.5)([g])
    with pytest.raises(RuntimeError, match="kernel"):
        MarginalizedGraphKernel(node_kernel="delta:-1")([g])
    bad = LabeledGraph([0, 1, 1], [5])  # column outside the graph
    with pytest.raises(RuntimeError, match="col"):
        MarginalizedGraphKernel()([bad])
    with pytest.raises(ValueError, match="empty"):
        MarginalizedGraphKernel()([])


def read_tu(folder, name, limit):
    """Plain reader of a TU collection (first `limit` graphs): node and edge labels."""
    A = np.loadtxt(os.path.join(folder, f"{name}_A.txt"), delimiter=",", dtype=np.int64) - 1
    gi = np.loadtxt(os.path.join(folder, f"{name}_graph_indicator.txt"), dtype=np.int64) - 1
    nl = np.loadtxt(os.path.join(folder, f"{name}_node_labels.txt"), dtype=np.int64)
    el = np.loadtxt(os.path.join(folder, f"{name}_edge_labels.txt"), dtype=np.int64)
    graphs = []
    for g in range(limit):
        nodes = np.nonzero(gi == g)[0]
        base = nodes[0]
        mask = (gi[A[:, 0]] == g) & (A[:, 0] <= A[:, 1])
        edges = [(int(a - base), int(b - base)) for a, b in A[mask]]
        graphs.append(LabeledGraph.from_edges(len(nodes), edges, node_labels=nl[nodes], edge_labels=el[mask]))
    return graphs


def find_cli():
    hits = [p for p in glob.glob(os.path.join(REPO, "build*", "apps", "cli", "tessera")) if os.access(p, os.X_OK)]
    return max(hits, key=os.path.getmtime) if hits else None


def test_mutag_subset_matches_numpy_and_cli(tmp_path):
    folder = os.path.join(SHARED, "mutag")
    if not os.path.isdir(folder):
        pytest.skip(f"shared data set mutag not found under {SHARED}")
    limit = 12
    graphs = read_tu(folder, "MUTAG", limit)
    mgk = MarginalizedGraphKernel(KroneckerDelta(0.5), KroneckerDelta(0.5), q=0.05)
    K = mgk(graphs)
    for i, j in [(0, 0), (0, 5), (3, 11), (7, 9)]:
        np.testing.assert_allclose(K[i, j], numpy_kernel(graphs[i], graphs[j], 0.05, 0.5, 0.5), rtol=1e-9)
    cli = find_cli()
    if cli is None:
        pytest.skip("tessera CLI not built (build*/apps/cli/tessera)")
    out = tmp_path / "gram.npy"
    subprocess.run([cli, "kernel", folder, "--output", str(out), "--limit", str(limit), "--q", "0.05"],
                   check=True, capture_output=True)
    np.testing.assert_allclose(K, np.load(out), rtol=1e-10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu(seed):
    rng = np.random.default_rng(seed)
    graphs = [random_graph(rng, int(n)) for n in rng.integers(1, 40, 10)]
    args = dict(node_kernel=TensorProduct(KroneckerDelta(0.4), SquareExponential(1.5)),
                edge_kernel=KroneckerDelta(0.3), q=0.05)
    cpu = MarginalizedGraphKernel(**args)(graphs)
    np.testing.assert_allclose(MarginalizedGraphKernel(device="cuda", **args)(graphs), cpu, rtol=1e-9)
    np.testing.assert_allclose(MarginalizedGraphKernel(device="cuda", dtype="float32", **args)(graphs), cpu, rtol=1e-5)
