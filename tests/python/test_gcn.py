"""tessera.nn.GCNConv and the spmm op against PyG's semantics (plain-torch oracle in
pyg_reference.py), gradients in double, state_dict layout; against torch_geometric itself when it
is importable (the GPU machine); CUDA variants skipped with a message when there is no GPU."""
import os
import subprocess
import sys

import pytest
import torch

import tessera
from tessera.nn import GCNConv

import pyg_reference as ref

try:
    import torch_geometric  # noqa: F401
    from torch_geometric.nn import GCNConv as PygGCNConv
    HAVE_PYG = True
except Exception:  # not installed here (CPU box); present on the GPU machine
    HAVE_PYG = False

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device on this machine: GPU test skipped")
needs_pyg = pytest.mark.skipif(not HAVE_PYG, reason="torch_geometric is not installed: PyG comparison skipped")

CONFIGS = [
    dict(),
    dict(improved=True),
    dict(add_self_loops=False),
    dict(normalize=False),
    dict(bias=False),
    dict(cached=True),
]


def pair(in_c, out_c, dtype=torch.float32, **kw):
    """A tessera conv and the reference with identical parameters."""
    t = GCNConv(in_c, out_c, **kw).to(dtype)
    r = ref.RefGCNConv(in_c, out_c, **kw).to(dtype)
    r.load_state_dict(t.state_dict())
    return t, r


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default")
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_forward_matches_pyg_semantics(seed, kw, weighted):
    n, e, fin, fout = 157, 1300, 19, 13  # widths that are not multiples of 4/8/32
    edge_index = ref.random_graph(n, e, seed)
    w = torch.rand(e) + 0.1 if weighted else None
    x = torch.randn(n, fin)
    t, r = pair(fin, fout, **kw)
    with torch.no_grad():
        torch.nn.init.normal_(t.bias) if t.bias is not None else None
        r.load_state_dict(t.state_dict())
    for _ in range(2):  # second call exercises the cache when cached=True
        torch.testing.assert_close(t(x, edge_index, w), r(x, edge_index, w), rtol=1e-5, atol=1e-5)


def test_improved_without_weights_follows_pyg(seed):
    # PyG >= 2.3 adds the remaining loops before defaulting weights to one, so improved=True has
    # no effect without edge weights; with weights, missing loops get 2.
    edge_index = ref.random_graph(50, 300, seed)
    x = torch.randn(50, 8)
    t, r = pair(8, 4, improved=True)
    torch.testing.assert_close(t(x, edge_index), r(x, edge_index), rtol=1e-5, atol=1e-5)
    plain, _ = pair(8, 4)
    plain.load_state_dict(t.state_dict())
    torch.testing.assert_close(t(x, edge_index), plain(x, edge_index))


def test_backward_matches_pyg_semantics(seed):
    n, e = 120, 900
    edge_index = ref.random_graph(n, e, seed)
    w = (torch.rand(e) + 0.1).requires_grad_()
    w_ref = w.detach().clone().requires_grad_()
    x = torch.randn(n, 21, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    t, r = pair(21, 10)
    gy = torch.randn(n, 10)
    (t(x, edge_index, w) * gy).sum().backward()
    (r(x_ref, edge_index, w_ref) * gy).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w.grad, w_ref.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(t.lin.weight.grad, r.lin.weight.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(t.bias.grad, r.bias.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_spmm_op_gradcheck_double(seed, index_dtype):
    n, e = 40, 200
    edge_index = ref.random_graph(n, e, seed)
    g = tessera.Graph.from_edge_index(edge_index, num_nodes=n)
    rowptr, col = g.rowptr.to(index_dtype), g.col.to(index_dtype)
    values = torch.rand(g.nnz, dtype=torch.float64, requires_grad=True)
    x = torch.randn(n, 7, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(7, dtype=torch.float64, requires_grad=True)
    t_rowptr, t_col, perm = tessera.ops.csr_transpose(rowptr, col, n)
    assert t_rowptr.dtype == t_col.dtype == perm.dtype == index_dtype  # one index type, as the kernels read it

    def with_cached_transpose(v, x, b):
        return tessera.ops.spmm(rowptr, col, v, x, t_rowptr, t_col, perm, 0, 0, b)

    def without_transpose(v, x):
        return tessera.ops.spmm(rowptr, col, v, x)

    assert torch.autograd.gradcheck(with_cached_transpose, (values, x, bias), eps=1e-6, atol=1e-6)
    assert torch.autograd.gradcheck(without_transpose, (values, x), eps=1e-6, atol=1e-6)
    # The fused bias is the unfused one, and a bias alone (x, values constant) still gets its gradient.
    torch.testing.assert_close(with_cached_transpose(values, x, bias), without_transpose(values, x) + bias)
    y = tessera.ops.spmm(rowptr, col, values.detach(), x.detach(), None, None, None, 0, 0, bias)
    gy = torch.randn_like(y)
    (db,) = torch.autograd.grad(y, bias, gy)
    torch.testing.assert_close(db, gy.sum(0))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device on this machine: GPU test skipped"))])
def test_graph_memoizes_transposed_values_while_they_are_unchanged(seed, device):
    """dX reads the graph's memoized values[perm] (no gather per backward): the same dX as the
    gather, and a memo that follows the values when they change in place or are replaced."""
    n = 50
    edge_index = ref.random_graph(n, 300, seed)
    g = tessera.Graph.from_edge_index(edge_index, torch.rand(300), num_nodes=n).to(device)
    x = torch.randn(n, 9, device=device, requires_grad=True)
    gy = torch.randn(n, 9, device=device)

    def dx_of(graph, values=None):
        x.grad = None
        graph.spmm(x, values).backward(gy)
        return x.grad.clone()

    t_rowptr, t_col, perm = tessera.ops.csr_transpose(g.rowptr, g.col, n)
    want = tessera.ops.spmm(t_rowptr, t_col, g.values[perm.long()], gy)  # A^T dY with the values gathered
    assert torch.equal(dx_of(g), want)
    memo = g.transposed_values()
    assert g.transposed_values() is memo  # memoized
    assert torch.equal(dx_of(g, values=2 * g.values), 2 * want)  # other values: gathered, not the memo
    with torch.no_grad():
        g.values.mul_(3)  # in place: the version moves, the memo is rebuilt
    assert torch.equal(dx_of(g), tessera.ops.spmm(t_rowptr, t_col, g.values[perm.long()], gy))
    g.values = torch.rand(300, device=device)  # replaced
    assert torch.equal(dx_of(g), tessera.ops.spmm(t_rowptr, t_col, g.values[perm.long()], gy))
    with pytest.raises(RuntimeError, match="t_values .* need t_rowptr, t_col, t_perm and values"):
        tessera.ops.spmm(g.rowptr, g.col, g.values, x, None, None, None, 0, 0, None, g.values)


def test_spmm_op_rejects_a_bias_of_the_wrong_width():
    g = tessera.Graph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), num_nodes=2)
    with pytest.raises(RuntimeError, match="bias must be 1-D with one entry per feature"):
        tessera.ops.spmm(g.rowptr, g.col, None, torch.randn(2, 3), None, None, None, 0, 0, torch.zeros(4))


def test_gcnconv_gradcheck_double(seed):
    n, e = 30, 150
    edge_index = ref.random_graph(n, e, seed)
    conv = GCNConv(5, 3).double()
    w = (torch.rand(e, dtype=torch.float64) + 0.1).requires_grad_()
    x = torch.randn(n, 5, dtype=torch.float64, requires_grad=True)
    # Through gcn_norm too: the edge weights change the degrees.
    assert torch.autograd.gradcheck(lambda x, w: conv(x, edge_index, w), (x, w), eps=1e-6, atol=1e-6)


def test_state_dict_layout_is_pygs():
    conv = GCNConv(16, 8)
    sd = conv.state_dict()
    assert set(sd) == {"lin.weight", "bias"}
    assert sd["lin.weight"].shape == (8, 16) and sd["bias"].shape == (8,)
    assert set(GCNConv(16, 8, bias=False).state_dict()) == {"lin.weight"}
    # A state_dict laid out as PyG's (here produced by the reference) loads strictly.
    r = ref.RefGCNConv(16, 8)
    conv.load_state_dict(r.state_dict(), strict=True)
    torch.testing.assert_close(conv.lin.weight, r.lin.weight)


def test_graph_inputs_and_identity_keyed_cache(seed):
    n = 80
    a, b = ref.random_graph(n, 500, seed), ref.random_graph(n, 500, seed + 1)
    x = torch.randn(n, 6)
    conv = GCNConv(6, 4, cached=True)
    plain = GCNConv(6, 4)
    plain.load_state_dict(conv.state_dict())
    ga, gb = tessera.Graph.from_edge_index(a, num_nodes=n), tessera.Graph.from_edge_index(b, num_nodes=n)
    # Cached on the graph object: a second graph is never served the first one's normalization.
    torch.testing.assert_close(conv(x, ga), plain(x, a))
    torch.testing.assert_close(conv(x, gb), plain(x, b))
    torch.testing.assert_close(conv(x, ga), plain(x, a))
    assert len(ga._normalized) == 1 and ga.id != gb.id


def test_sparse_csr_input_appends_loops(seed):
    n, e = 60, 400
    edge_index = ref.random_graph(n, e, seed, self_loops=False)
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]  # "append" = "remaining" only without loops
    e = edge_index.size(1)
    w = torch.rand(e) + 0.1
    adj_t = torch.sparse_coo_tensor(edge_index.flip(0), w, (n, n)).coalesce()
    x = torch.randn(n, 5)
    t, r = pair(5, 3)
    # Without existing loops, "append" = add_remaining_self_loops; duplicates were summed by coalesce.
    torch.testing.assert_close(t(x, adj_t.to_sparse_csr()), r(x, adj_t.indices().flip(0), adj_t.values()),
                               rtol=1e-5, atol=1e-5)


def test_bad_input_raises_clear_errors():
    conv = GCNConv(4, 2)
    x = torch.randn(10, 4)
    with pytest.raises(RuntimeError, match=r"edge 1: target 10 out of range \[0, 10\)"):
        conv(x, torch.tensor([[0, 1], [2, 10]]))
    with pytest.raises(RuntimeError, match="source -1 out of range"):
        conv(x, torch.tensor([[0, -1], [2, 3]]))
    with pytest.raises(RuntimeError, match=r"shape \[2, E\]"):
        conv(x, torch.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="int64 or int32"):
        conv(x, torch.tensor([[0.0, 1.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="lazy"):
        GCNConv(-1, 4)


# Bad input to the raw C++ ops: the op raises tessera::Error, which has to reach Python as a
# RuntimeError. Run in a child process so that, should an exception crossing the torch boundary
# ever crash (as one did under torch 2.11), the report names the case instead of killing pytest.
# One child process per case: a C++ exception (or any crash) at the torch op boundary kills only
# that child, so the report names every failing case, not just the first.
_RAW_OP_PRELUDE = r"""
import re, sys, torch, tessera
ops = tessera.ops
g = tessera.Graph.from_edge_index(torch.tensor([[0, 1], [1, 2]]), num_nodes=3)
"""
_RAW_OP_CASES = [  # (name, expression, pattern of the expected RuntimeError, or None: must not raise)
    ("edge_index 1-D", "ops.edge_index_to_csr(torch.tensor([0, 1, 2]), 3, 3, True)", r"shape \[2, E\]"),
    ("edge_index float", "ops.edge_index_to_csr(torch.ones(2, 2), 3, 3, True)", "int64 or int32"),
    ("target out of range", "ops.edge_index_to_csr(torch.tensor([[0, 1], [2, 10]]), 10, 10, True)",
     r"edge 1: target 10 out of range"),
    ("x int64", "ops.spmm(g.rowptr, g.col, None, torch.ones(3, 2, dtype=torch.int64), None, None, None, 0, 0)",
     "float32, float64, float16 or bfloat16"),
    ("mixed index types", "ops.spmm(g.rowptr.long(), g.col.int(), None, torch.ones(3, 2), None, None, None, 0, 0)",
     "one index type"),
    ("rowptr 2-D", "ops.spmm(g.rowptr.view(1, -1), g.col, None, torch.ones(3, 2), None, None, None, 0, 0)",
     "rowptr must be 1-D"),
    ("gcn_norm rowptr 0-D", "ops.gcn_norm(torch.tensor(3), g.col, None, 3, 'remaining', 1.0, torch.float32)",
     "rowptr must be 1-D"),
    ("list of strings returned", "ops.graph_kernel_hyperparameter_names('delta:0.5', 'delta:0.5')", None),
]


@pytest.mark.parametrize("name,expr,pattern", _RAW_OP_CASES, ids=[c[0] for c in _RAW_OP_CASES])
def test_raw_op_errors_reach_python_as_runtime_errors(name, expr, pattern):
    code = _RAW_OP_PRELUDE + f"""
try:
    r = {expr}
except RuntimeError as e:
    print("raised:", e)
    sys.exit(0 if {pattern!r} is not None and re.search({pattern!r}, str(e)) else 3)
print("returned:", r)
sys.exit(0 if {pattern!r} is None else 4)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    detail = f"stdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    if r.returncode < 0:
        pytest.fail(f"{name}: child crashed with signal {-r.returncode} (a C++ exception or value crossing the "
                    f"torch op boundary?)\n{detail}")
    assert r.returncode == 0, f"{name}: expected {'an error matching ' + repr(pattern) if pattern else 'a value'}\n{detail}"


@needs_cuda
def test_cuda_matches_cpu(seed):
    n, e = 5000, 60000
    edge_index = ref.random_graph(n, e, seed)
    w = torch.rand(e) + 0.1
    x = torch.randn(n, 67)
    t, r = pair(67, 33, cached=True)
    gy = torch.randn(n, 33)
    xc = x.cuda().requires_grad_()
    tc = GCNConv(67, 33, cached=True).cuda()
    tc.load_state_dict(t.state_dict())
    yc = tc(xc, edge_index.cuda(), w.cuda())
    (yc * gy.cuda()).sum().backward()
    xr = x.clone().requires_grad_()
    yr = r(xr, edge_index, w)
    (yr * gy).sum().backward()
    torch.testing.assert_close(yc.cpu(), yr, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(xc.grad.cpu(), xr.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(tc.lin.weight.grad.cpu(), r.lin.weight.grad, rtol=1e-3, atol=1e-3)


@needs_cuda
def test_cuda_runs_on_current_stream(seed):
    edge_index = ref.random_graph(300, 3000, seed).cuda()
    x = torch.randn(300, 32, device="cuda")
    conv = GCNConv(32, 16).cuda()
    expected = conv(x, edge_index)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = conv(x, edge_index)
    torch.cuda.current_stream().wait_stream(s)
    torch.testing.assert_close(y, expected)


@needs_pyg
@pytest.mark.parametrize("kw", CONFIGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default")
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_against_torch_geometric(seed, kw, weighted, device):
    n, e, fin, fout = 400, 5000, 37, 23
    edge_index = ref.random_graph(n, e, seed).to(device)
    w = (torch.rand(e, device=device) + 0.1).requires_grad_() if weighted else None
    pyg = PygGCNConv(fin, fout, **kw).to(device)
    with torch.no_grad():
        if pyg.bias is not None:
            pyg.bias.normal_()
    ours = GCNConv(fin, fout, **kw).to(device)
    ours.load_state_dict(pyg.state_dict(), strict=True)  # PyG's state_dict loads unchanged
    x = torch.randn(n, fin, device=device, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    w2 = None if w is None else w.detach().clone().requires_grad_()
    gy = torch.randn(n, fout, device=device)
    for _ in range(2):
        y_pyg, y = pyg(x, edge_index, w), ours(x2, edge_index, w2)
        torch.testing.assert_close(y, y_pyg, rtol=1e-4, atol=1e-4)
    (y_pyg * gy).sum().backward()
    (y * gy).sum().backward()
    torch.testing.assert_close(x2.grad, x.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(ours.lin.weight.grad, pyg.lin.weight.grad, rtol=1e-3, atol=1e-3)
    if weighted and not kw.get("cached"):
        torch.testing.assert_close(w2.grad, w.grad, rtol=1e-3, atol=1e-4)


def test_ops_without_gradients_skip_autograd_and_compute_the_same(seed):
    """Under torch.no_grad (and in grad mode with no input requiring a gradient) the ops call their
    kernels directly instead of building an autograd node: same values, no graph attached; with
    an input requiring a gradient the node is still built."""
    n, F, H, C = 40, 6, 2, 3
    ei = torch.randint(0, n, (2, 300))
    g = tessera.Graph.from_edge_index(ei, num_nodes=n)
    w = torch.rand(g.nnz)
    bias = torch.randn(F)
    x = torch.randn(n, F)
    q, k, v = (torch.randn(n, H * C) for _ in range(3))

    def run(x, q):
        y = torch.ops.tessera.spmm(g.rowptr, g.col, w, x, None, None, None, g.id, 0, bias)
        r, _ = torch.ops.tessera.segment_reduce(g.rowptr, g.col, x, "max", g.id)
        a = torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, None, H, "transformer", 0.2, 0.0, 0.0, 0, False,
                                        False, None, None, None, False, g.id)[0]
        return y, r, a

    with_grad = run(x.clone().requires_grad_(), q.clone().requires_grad_())
    assert all(t.grad_fn is not None for t in with_grad)
    for outs in (run(x, q), None):
        if outs is None:
            with torch.no_grad():
                outs = run(x.clone().requires_grad_(), q.clone().requires_grad_())
        for got, want in zip(outs, with_grad):
            assert got.grad_fn is None and not got.requires_grad
            assert torch.equal(got, want.detach())


def test_large_cpu_outputs_are_on_huge_page_aligned_memory_and_correct(seed):
    """CPU outputs of 4 MB and more (here the [40000, 40] SpMM result and its dX, 6.4 MB each) are
    2 MB-aligned blocks advised for transparent huge pages (src/torch/outputs.hpp: first touch of
    a fresh 32 MB output cost 15.8 ms in 4 KB pages, 2.2 ms in huge pages on the development
    machine); they hold the right values, take in-place updates and carry autograd; a small output
    (below the threshold, torch's allocator) is computed the same."""
    n, f = 40000, 40
    deg = torch.randint(0, 9, (n,))
    rowptr = torch.cat([torch.zeros(1, dtype=torch.long), deg.cumsum(0)])
    col = torch.randint(0, n, (int(rowptr[-1]),))
    w = torch.rand(col.numel(), dtype=torch.float64)
    g = tessera.Graph(rowptr, col, w)
    x = torch.randn(n, f, dtype=torch.float64, requires_grad=True)
    y = g.spmm(x)
    rows = torch.repeat_interleave(torch.arange(n), deg)
    y_ref = torch.zeros(n, f, dtype=torch.float64).index_add_(0, rows, x.detach()[col] * w[:, None])
    torch.testing.assert_close(y, y_ref, rtol=1e-12, atol=1e-12)
    gy = torch.randn_like(y_ref)
    y.backward(gy)
    dx_ref = torch.zeros(n, f, dtype=torch.float64).index_add_(0, col, gy[rows] * w[:, None])
    torch.testing.assert_close(x.grad, dx_ref, rtol=1e-12, atol=1e-12)
    if os.environ.get("TESSERA_CPU_HUGE_OUTPUTS") != "0":
        assert y.data_ptr() % (2 << 20) == 0 and x.grad.data_ptr() % (2 << 20) == 0
    z = y.detach().add_(1.0)  # in place on the op's memory
    torch.testing.assert_close(z, y_ref + 1.0, rtol=1e-12, atol=1e-12)
    small = tessera.Graph(rowptr[:101], col[:int(rowptr[100])], w[:int(rowptr[100])], n).spmm(x.detach())
    torch.testing.assert_close(small, y_ref[:100], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layer", ["gcn", "gatv2", "transformer", "sage"])
def test_large_cpu_projections_match_torch_linear(seed, layer):
    """The layers' dense projections with large CPU outputs go through tessera.nn._linear (output
    and dx on the ops' huge-page memory): output and every gradient bitwise those of the same
    layer with torch's Linear where one projection reads x. Where several do (GATv2, Transformer:
    one node, one stacked GEMM, dx accumulated in place) the layer's output within float32
    rounding, and the projection node itself (outputs, dx, every weight and bias gradient, under
    random output gradients) within float32 rounding of the sums behind each entry. (Through the
    attention layers the gradients are not a fair comparison: the key bias has none at all, GATv2's
    LeakyReLU kink lets rounding flip an edge's branch, and both leave only cancellation noise or
    genuine jumps.) A Linear with a forward pre-hook (here torch.nn.utils.prune's weight mask)
    keeps its hook."""
    import tessera.nn._linear as L
    from tessera.nn import GATv2Conv, SAGEConv, TransformerConv
    n, f = 33000, 32  # [33000, 32] f32 outputs: 4.2 MB, above the 4 MB threshold
    make = {"gcn": lambda: GCNConv(f, f), "gatv2": lambda: GATv2Conv(f, 8, heads=4),
            "transformer": lambda: TransformerConv(f, 8, heads=4), "sage": lambda: SAGEConv(f, f)}[layer]
    mod = make()
    x = torch.randn(n, f, requires_grad=True)
    ei = torch.randint(0, n, (2, 4 * n))
    w = torch.randn(n, 32)
    eps = 2.0 ** -23
    single = layer in ("gcn", "sage")  # one projection per input: torch's own arithmetic, bitwise
    results = []
    for min_bytes in (L._MIN_BYTES, 1 << 62):  # tessera's path, then torch's Linear everywhere
        old, L._MIN_BYTES = L._MIN_BYTES, min_bytes
        try:
            x.grad = None
            mod.zero_grad()
            out = mod(x, ei)
            if single:  # the grouped layers' gradients are judged at the projection node below
                (out * w).sum().backward()
            results.append((out.detach(), single and x.grad.clone(),
                            {k: p.grad.clone() for k, p in mod.named_parameters() if single}))
        finally:
            L._MIN_BYTES = old
    (o1, dx1, g1), (o0, dx0, g0) = results
    if single:
        assert torch.equal(o1, o0) and torch.equal(dx1, dx0)
        for k in g0:
            assert torch.equal(g1[k], g0[k]), k
    else:
        assert (o1 - o0).abs().max() <= 8 * eps * o0.abs().max()
        lins = [mod.lin_l, mod.lin_r] if layer == "gatv2" else [mod.lin_query, mod.lin_key, mod.lin_value, mod.lin_skip]
        xs = x.detach().requires_grad_()
        gys = [torch.randn(n, lin.out_features) for lin in lins]
        got = []
        for grouped in (True, False):  # tessera's one node, then each Linear
            xs.grad = None
            for lin in lins:
                lin.zero_grad()
            ys = L.linears(lins, xs) if grouped else [lin(xs) for lin in lins]
            torch.autograd.backward(ys, gys)
            got.append(([y.detach() for y in ys], xs.grad.clone(),
                        [g.clone() for lin in lins for g in (lin.weight.grad, lin.bias.grad)]))
        (ys1, dxs1, ps1), (ys0, dxs0, ps0) = got

        def within(a, b, ulps, scale):  # a sum's rounding: at most eps x the sum of its terms' magnitudes
            return bool(((a - b).abs() <= ulps * eps * scale + 1e-30).all())

        xa = xs.detach().abs()
        assert all(within(a, b, 8, xa @ lin.weight.detach().abs().t()) for a, b, lin in zip(ys1, ys0, lins))
        assert within(dxs1, dxs0, 16, sum(gy.abs() @ lin.weight.detach().abs() for gy, lin in zip(gys, lins)))
        p_scales = [s for gy in gys for s in (gy.abs().t() @ xa, gy.abs().sum(0))]  # weight, bias
        assert all(within(a, b, 16, s) for a, b, s in zip(ps1, ps0, p_scales))
    lin = mod.lin if layer == "gcn" else mod.lin_l if layer in ("gatv2", "sage") else mod.lin_query
    if os.environ.get("TESSERA_CPU_HUGE_OUTPUTS") != "0":  # the projection did take tessera's path
        assert L.linear(lin, x.detach()).data_ptr() % (2 << 20) == 0
    import torch.nn.utils.prune as prune
    prune.l1_unstructured(lin, "weight", amount=1.0)  # the pre-hook masks every weight: out = bias
    bias = lin.bias if lin.bias is not None else torch.zeros(lin.out_features)
    torch.testing.assert_close(L.linear(lin, x.detach()), bias.detach().expand(n, -1), rtol=0, atol=0)
