"""torch.ops.tessera.linear (x W^T + b (+ residual)) and the layers' use of it: CPU equals torch's
Linear (plus the residual), autograd
(gradcheck in double), clear errors; on CUDA, fp32 outputs and gradients within fp32-level error of
a double reference (the tf32x3 kernel), ineligible shapes and other dtypes through torch,
linears() making several projections of one input one node, and leaving them to torch when the
user allows TF32."""
import pytest
import torch

import tessera  # noqa: F401  (loads the op library)
from tessera.nn import _linear

ops = torch.ops.tessera
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device on this machine: GPU test skipped")


def test_cpu_is_torch_linear(seed):
    x, w, b = torch.randn(37, 20), torch.randn(9, 20), torch.randn(9)
    assert torch.equal(ops.linear(x, w, b), torch.nn.functional.linear(x, w, b))
    assert torch.equal(ops.linear(x, w), torch.nn.functional.linear(x, w))
    r = torch.randn(37, 9)
    assert torch.equal(ops.linear(x, w, b, r), torch.nn.functional.linear(x, w, b) + r)


def test_gradcheck_double(seed):
    x = torch.randn(11, 6, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    b = torch.randn(5, dtype=torch.float64, requires_grad=True)
    r = torch.randn(11, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, w, b: ops.linear(x, w, b), (x, w, b))
    assert torch.autograd.gradgradcheck(lambda x, w, b: ops.linear(x, w, b), (x, w, b))
    assert torch.autograd.gradcheck(lambda x, w, b, r: ops.linear(x, w, b, r), (x, w, b, r))
    assert torch.autograd.gradgradcheck(lambda x, w, b, r: ops.linear(x, w, b, r), (x, w, b, r))


def _linears_reference(x, ws, bs):
    return tuple(torch.nn.functional.linear(x, w, b) for w, b in zip(ws, bs))


def test_linears_op_cpu_is_the_stacked_linear_and_differentiable(seed):
    """tessera.linears on the CPU: the projections as column blocks of one stacked GEMM (equal to
    the Linears within float rounding), a missing bias included; gradients of x, every weight and
    present bias in double by gradcheck, and through create_graph by gradgradcheck."""
    x = torch.randn(23, 6, dtype=torch.float64, requires_grad=True)
    ws = [torch.randn(n, 6, dtype=torch.float64, requires_grad=True) for n in (4, 3, 5)]
    b0, b2 = (torch.randn(n, dtype=torch.float64, requires_grad=True) for n in (4, 5))

    def f(x, w0, w1, w2, b0, b2):
        return tuple(ops.linears(x, [w0, w1, w2], [b0, None, b2]))
    for got, want in zip(f(x, *ws, b0, b2), _linears_reference(x, ws, [b0, None, b2])):
        torch.testing.assert_close(got, want)
    assert torch.autograd.gradcheck(f, (x, *ws, b0, b2))
    assert torch.autograd.gradgradcheck(f, (x, *ws, b0, b2))
    # An output without a gradient leaves its weight's and bias's grads None.
    ys = ops.linears(x, ws, [b0, None, b2])
    ys[1].sum().backward()
    assert ws[0].grad is None and b0.grad is None and ws[1].grad is not None and x.grad is not None
    with torch.no_grad():
        assert all(y.grad_fn is None for y in ops.linears(x, ws, [b0, None, b2]))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
@pytest.mark.parametrize("m,k,outs", [(300, 20, (8, 12, 4)), (2708, 128, (256, 256))])
def test_linears_take_block_gradients_as_one_matrix(seed, device, m, k, outs):
    """Output gradients that are adjacent column blocks of one buffer, in the node's order (as the
    attention op returns them), take the one-matrix backward per run of such blocks: the same x,
    weight and bias gradients as separate gradient tensors (double on the CPU: to rounding; fp32 on
    CUDA: both within fp32 level of double); blocks out of order take the per-projection
    path. The second shape is GATv2's lin_l and lin_r at Cora's size with 4 heads of 64 (the weight
    gradient's rows split across the machine, a partial last slice)."""
    dt = torch.float64 if device == "cpu" else torch.float32
    x = torch.randn(m, k, dtype=dt, device=device, requires_grad=True)
    ws = [torch.randn(n, k, dtype=dt, device=device, requires_grad=True) for n in outs]
    bs = [torch.randn(n, dtype=dt, device=device, requires_grad=True) if i != 1 else None
          for i, n in enumerate(outs)]
    params = [x, *ws, *[b for b in bs if b is not None]]
    g_all = torch.randn(m, sum(outs), dtype=dt, device=device)
    tol = {} if device == "cpu" else {"rtol": 1e-5, "atol": 1e-4}

    def grads(gys):
        return torch.autograd.grad(ops.linears(x, ws, bs), params, gys)
    blocks = list(g_all.split(list(outs), dim=1))
    if device == "cpu":
        for a, b in zip(grads(blocks), grads([t.contiguous() for t in blocks])):
            torch.testing.assert_close(a, b)
    else:  # both paths against double (fp32 rounding scales with sum |terms|, which a fixed
        # tolerance cannot follow at K = 512): dx = dY [W_0; W_1; ...], dW_i = dY_i^T x, db_i
        for gys in (blocks, [t.contiguous() for t in blocks]):
            got = grads(gys)
            _fp32_level(got[0], g_all, torch.cat(ws).t(), None)
            for i in range(len(ws)):
                _fp32_level(got[1 + i], blocks[i].t(), x.detach().t(), None)
            for b, gb in zip([i for i, b in enumerate(bs) if b is not None], got[1 + len(ws):]):
                _column_sums_level(gb, blocks[b])
    if device == "cpu" and len(outs) == 3:  # the paths themselves: one dX and one dW product, against 1 + 2 and 3
        def products(gys):
            ys = ops.linears(x, ws, bs)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                torch.autograd.backward(ys, gys)
            names = [e.name for e in prof.events()]
            return names.count("aten::mm") + names.count("aten::addmm_")
        assert products(blocks) == 2 and products([t.contiguous() for t in blocks]) == 6
        # A run of two adjacent blocks, then a separate gradient: one product of each kind per run.
        partial = [blocks[0].detach(), blocks[1].detach(), blocks[2].contiguous()]
        assert products(partial) == 4
        for a, b in zip(grads(partial), grads([t.contiguous() for t in partial])):
            torch.testing.assert_close(a, b)
    if len(outs) != 3:
        return
    # Out of order: the blocks of a buffer laid out [12 | 8 | 4] do not match the node's order.
    other = torch.randn(300, 24, dtype=dt, device=device)
    shuffled = [other[:, 12:20], other[:, :12], other[:, 20:]]
    for a, b in zip(grads(shuffled), grads([t.contiguous() for t in shuffled])):
        torch.testing.assert_close(a, b, **tol)


def test_linears_op_bad_input_names_the_problem():
    x = torch.randn(5, 8)
    with pytest.raises(RuntimeError, match=r"linears: 2 weights but 1 biases"):
        ops.linears(x, [torch.randn(3, 8), torch.randn(2, 8)], [None])
    with pytest.raises(RuntimeError, match=r"linears: weight 1 must be \[out_features, 8\]"):
        ops.linears(x, [torch.randn(3, 8), torch.randn(2, 7)], [None, None])
    with pytest.raises(RuntimeError, match=r"linears: bias 0 must be \[3\]"):
        ops.linears(x, [torch.randn(3, 8)], [torch.randn(4)])
    with pytest.raises(RuntimeError, match=r"linears: weight 0 is Double"):
        ops.linears(x, [torch.randn(3, 8, dtype=torch.float64)], [None])
    with pytest.raises(RuntimeError, match=r"linears: no weights"):
        ops.linears(x, [], [])


def _heads_reference(x, w, b, x2=None, w2=None, b2=None):
    """tessera.linear_heads' definition in plain torch: head h's column block of x times w's row
    block h (+ b's block h), side by side, + x2 w2^T + b2."""
    heads = x.size(1) // w.size(1)
    bs = b.chunk(heads) if b is not None else [None] * heads
    y = torch.cat([torch.nn.functional.linear(xh, wh, bh) for xh, wh, bh in zip(x.chunk(heads, 1), w.chunk(heads), bs)], 1)
    return y if x2 is None else y + torch.nn.functional.linear(x2, w2, b2)


def test_linear_heads_is_the_per_head_products_and_differentiable(seed):
    """tessera.linear_heads(x, w, b, x2, w2, b2): each head's column block of x projected by its
    row block of w into its column block of the output (a block-diagonal product, the folded
    TransformerConv's W_v per head), plus the shared x2 w2^T + b2 (its lin_skip); large enough for
    the ops' output memory too. Gradients are the definition's (dx one buffer of the heads' blocks,
    the two biases each their own copy of dy's column sums), and the op is differentiable twice."""
    for rows, heads, k, c, k2 in ((37, 3, 5, 4, 6), (70000, 2, 24, 8, 3), (9, 1, 4, 5, 0)):
        x = torch.randn(rows, heads * k, dtype=torch.float64, requires_grad=True)
        w = torch.randn(heads * c, k, dtype=torch.float64, requires_grad=True)
        b = torch.randn(heads * c, dtype=torch.float64, requires_grad=True)
        for shared in (False, True):
            x2 = torch.randn(rows, k2, dtype=torch.float64, requires_grad=True) if shared else None
            w2 = torch.randn(heads * c, k2, dtype=torch.float64, requires_grad=True) if shared else None
            b2 = torch.randn(heads * c, dtype=torch.float64, requires_grad=True) if shared else None
            y = ops.linear_heads(x, w, b, x2, w2, b2)
            want = _heads_reference(x, w, b, x2, w2, b2)
            torch.testing.assert_close(y, want, rtol=1e-12, atol=1e-12)
            g = torch.randn_like(y)
            params = [x, w, b] + ([x2, w2, b2] if shared else [])
            got = torch.autograd.grad((y * g).sum(), params)
            ref = torch.autograd.grad((want * g).sum(), params)
            for u, v in zip(got, ref):
                torch.testing.assert_close(u, v, rtol=1e-10, atol=1e-10)
            if shared:
                assert got[2].data_ptr() != got[5].data_ptr(), "two biases' gradients must not share storage"
    y = ops.linear_heads(torch.randn(6, 8, dtype=torch.float64), torch.randn(6, 4, dtype=torch.float64))
    assert y.shape == (6, 6)  # no bias, no shared projection
    x = torch.randn(6, 6, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    x2 = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    w2 = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    f = lambda *t: ops.linear_heads(*t)
    assert torch.autograd.gradcheck(f, (x, w, b, x2, w2, None))
    assert torch.autograd.gradgradcheck(f, (x, w, b, x2, w2, None))
    assert torch.autograd.gradgradcheck(lambda a, u: ops.linear_heads(a, u), (x, w))


def test_linear_heads_bad_input_names_the_problem():
    x, w = torch.randn(5, 6), torch.randn(4, 3)
    with pytest.raises(RuntimeError, match="linear_heads: x must be 2-D"):
        ops.linear_heads(torch.randn(5), w)
    with pytest.raises(RuntimeError, match=r"linear_heads: weight must be \[heads out_features, in_features\] with "
                                           r"x's 6 columns a whole number of in_features, got shape \[4, 4\]"):
        ops.linear_heads(x, torch.randn(4, 4))
    with pytest.raises(RuntimeError, match="linear_heads: weight has 3 rows, not a multiple of the 2 heads"):
        ops.linear_heads(x, torch.randn(3, 3))
    with pytest.raises(RuntimeError, match=r"linear_heads: bias must be \[4\], got shape \[3\]"):
        ops.linear_heads(x, w, torch.randn(3))
    with pytest.raises(RuntimeError, match="linear_heads: x2 and weight2 come together"):
        ops.linear_heads(x, w, None, torch.randn(5, 2))
    with pytest.raises(RuntimeError, match="linear_heads: x2 must be 2-D with x's 5 rows"):
        ops.linear_heads(x, w, None, torch.randn(4, 2), torch.randn(4, 2))
    with pytest.raises(RuntimeError, match=r"linear_heads: weight2 must be \[4, 2\]"):
        ops.linear_heads(x, w, None, torch.randn(5, 2), torch.randn(4, 3))
    with pytest.raises(RuntimeError, match="linear_heads: weight2 is Double"):
        ops.linear_heads(x, w, None, torch.randn(5, 2), torch.randn(4, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="linear_heads: bias2 without x2"):
        ops.linear_heads(x, w, None, None, None, torch.randn(4))


def test_bad_input_names_the_problem():
    with pytest.raises(RuntimeError, match=r"weight must be \[out_features, 8\]"):
        ops.linear(torch.randn(5, 8), torch.randn(3, 7))
    with pytest.raises(RuntimeError, match=r"bias must be \[3\]"):
        ops.linear(torch.randn(5, 8), torch.randn(3, 8), torch.randn(4))
    with pytest.raises(RuntimeError, match="x must be 2-D"):
        ops.linear(torch.randn(5), torch.randn(3, 5))
    with pytest.raises(RuntimeError, match=r"residual must be \[5, 3\]"):
        ops.linear(torch.randn(5, 8), torch.randn(3, 8), None, torch.randn(5, 4))
    with pytest.raises(RuntimeError, match="residual is Double"):
        ops.linear(torch.randn(5, 8), torch.randn(3, 8), None, torch.randn(5, 3, dtype=torch.float64))


def test_column_sums_op(seed):
    t = torch.randn(33, 7)
    assert torch.equal(ops.column_sums(t), t.sum(0))
    with pytest.raises(RuntimeError, match=r"column_sums: expected a 2-D tensor .* got shape \[33\]"):
        ops.column_sums(torch.randn(33))


def _fp32_level(got, x, w, b, r=None):
    """|got - exact| <= (2^-19 + K 2^-24) (sum_k |x w| + |b| + |r|) per element, exact in double: the
    products' split error plus fp32 summation's own bound over K terms (one TF32 pass, ~2^-12, fails
    it for K up to ~1000; H200: K = 1024 measured 2^-19.0, K <= 260 2^-20 and below)."""
    xd, wd = x.double(), w.double()
    want = xd @ wd.t() + (b.double() if b is not None else 0) + (r.double() if r is not None else 0)
    mag = xd.abs() @ wd.abs().t() + (b.double().abs() if b is not None else 0) + \
        (r.double().abs() if r is not None else 0)
    err = (got.double() - want).abs()
    bound = 2.0 ** -19 + x.size(1) * 2.0 ** -24
    assert bool((err <= mag * bound + 1e-30).all()), f"worst |err| / sum|x w| = {(err / mag).max().item():.3g}"


def _column_sums_level(got, dy):
    """A bias gradient against dy's column sums in double: |err| <= M 2^-24 sum_m |dy| per column,
    fp32 summation's bound over the M rows."""
    g = dy.double()
    assert bool(((got.double() - g.sum(0)).abs() <= g.abs().sum(0) * dy.size(0) * 2.0 ** -24).all())


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
@pytest.mark.parametrize("dtype,bias", [(torch.float64, True), (torch.float32, False), (torch.float32, True)])
def test_linear_add_is_out_plus_the_projection(seed, device, dtype, bias, monkeypatch):
    """_linear.linear_add(lin, x, out) is out + lin(x), with the gradients of out, x and lin's
    parameters; where the types match off CUDA fp32's tensor-core rule it writes into out itself
    (addmm_: no projection buffer), and a Linear with a forward hook is called as itself."""
    lin = torch.nn.Linear(24, 10, bias=bias).to(device, dtype)
    x = torch.randn(53, 24, device=device, dtype=dtype, requires_grad=True)
    base = torch.randn(53, 10, device=device, dtype=dtype, requires_grad=True)
    out = base * 2  # a fresh output, as the layers pass
    with monkeypatch.context() as m:
        if not _linear._tensor_cores(x):  # no projection of its own: the GEMM accumulates into out
            m.setattr(_linear, "linear", lambda *a, **k: pytest.fail("linear_add made a projection"))
        got = _linear.linear_add(lin, x, out)
    want = base.detach() * 2 + lin(x.detach())
    tol = {"atol": 1e-12, "rtol": 1e-12} if dtype == torch.float64 else {"atol": 1e-4, "rtol": 1e-4}
    torch.testing.assert_close(got.detach(), want, **tol)
    if not _linear._tensor_cores(x):
        assert got.data_ptr() == out.data_ptr()
    g = torch.randn_like(got)
    got.backward(g)
    grads = (x.grad, base.grad, lin.weight.grad) + ((lin.bias.grad,) if bias else ())
    x2, base2 = x.detach().clone().requires_grad_(), base.detach().clone().requires_grad_()
    lin2 = torch.nn.Linear(24, 10, bias=bias).to(device, dtype)
    lin2.load_state_dict(lin.state_dict())
    (base2 * 2 + lin2(x2)).backward(g)
    wants = (x2.grad, base2.grad, lin2.weight.grad) + ((lin2.bias.grad,) if bias else ())
    for a, b in zip(grads, wants):
        torch.testing.assert_close(a, b, **tol)
    calls = []
    lin.register_forward_hook(lambda m, i, o: calls.append(1))
    with torch.no_grad():
        torch.testing.assert_close(_linear.linear_add(lin, x, base * 2), want, **tol)
    assert calls == [1]


def test_linear_add_follows_autocast(seed):
    """Under CPU autocast (bf16) the projection is autocast's, not an in-place fp32 GEMM: the sum
    comes back in bf16 for a bf16 out, as out + lin(x) would."""
    lin = torch.nn.Linear(16, 8)
    x = torch.randn(40, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = torch.nn.functional.linear(torch.randn(40, 16), torch.randn(8, 16))  # bf16
        want = out + lin(x)
        got = _linear.linear_add(lin, x, out)
    assert got.dtype == want.dtype == torch.bfloat16
    torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)


def test_prepared_weights_follow_their_parameters(seed):
    """PreparedWeights (the layers' projections without autograd): a group's weights and biases
    stacked in its order (zeros for a Linear without a bias), kept while the parameters are
    unchanged, made again after an in-place change (an optimizer step), load_state_dict, a new
    Parameter or a swapped .data; one memo per group; copies and pickles start empty. No split on
    the CPU (no kernel reads one)."""
    import copy
    import pickle
    lins = [torch.nn.Linear(6, 4), torch.nn.Linear(6, 3, bias=False)]
    p = _linear.PreparedWeights()

    def check():
        w, b, split = p.get(lins)
        assert torch.equal(w, torch.cat([lin.weight for lin in lins])) and split is None
        assert torch.equal(b, torch.cat([lins[0].bias, torch.zeros(3)]))
        assert not w.requires_grad and not b.requires_grad
        return w
    w = check()
    assert p.get(lins)[0] is w  # kept
    with torch.no_grad():
        lins[1].weight.mul_(2)
    assert check() is not w
    w = p.get(lins)[0]
    lins[0].load_state_dict(torch.nn.Linear(6, 4).state_dict())
    assert check() is not w
    w = p.get(lins)[0]
    lins[0].bias = torch.nn.Parameter(torch.randn(4))
    assert check() is not w
    w = p.get(lins)[0]
    lins[1].weight.data = torch.randn(3, 6)
    assert check() is not w
    one = p.get(lins[:1])
    assert torch.equal(one[0], lins[0].weight) and torch.equal(one[1], lins[0].bias)
    assert len(p._memos) == 2 and p.get(lins[:1])[0] is one[0]
    assert copy.deepcopy(p)._memos == {} and pickle.loads(pickle.dumps(p))._memos == {}
    # The split op's own checks (on the CPU it returns an empty tensor: no kernel reads a split).
    assert ops.linear_split_weight(torch.randn(3, 4), torch.randn(3, 5)).numel() == 0
    with pytest.raises(RuntimeError, match=r"linear_split_weight: weight must be 2-D"):
        ops.linear_split_weight(torch.randn(3))
    with pytest.raises(RuntimeError, match=r"linear_split_weight: weight2 must be \[3, in_features2\]"):
        ops.linear_split_weight(torch.randn(3, 4), torch.randn(2, 5))


@needs_cuda
@pytest.mark.parametrize("m,k,n", [(2708, 128, 768), (19717, 128, 256), (300, 20, 20), (2708, 128, 256)])
def test_cuda_weight_split_is_the_kernels_own(seed, m, k, n):
    """tessera.linear_split_weight: on a compute capability 9.0 device the weight as the wgmma kernels
    read it (2 tf32 parts, N and K rounded up to their tiles), elsewhere empty; tessera.linear with it
    is bitwise the call without it (the same kernel, which then launches no split), with and without
    a residual; a split of another weight is refused by name. Shapes: the resident kernel (Cora's
    q, k, v stacked), the streaming one (PubMed), and ones the mma.sync tiles take (which ignore it)."""
    x, w, b = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda"), torch.randn(n, device="cuda")
    r = torch.randn(m, n, device="cuda")
    split = ops.linear_split_weight(w)
    if torch.cuda.get_device_capability() == (9, 0):
        assert split.numel() == 2 * (-(-n // 128) * 128) * (-(-k // 32) * 32)
    else:
        assert split.numel() == 0
    assert ops.linear_split_weight(w.cpu()).numel() == 0
    for res in (None, r):
        assert torch.equal(ops.linear(x, w, b, res, split), ops.linear(x, w, b, res))
    if split.numel():
        other = ops.linear_split_weight(torch.randn(n + 128, k, device="cuda"))
        with pytest.raises(RuntimeError, match=r"linear: the weight split has \d+ bytes but W"):
            ops.linear(x, w, b, None, other)
        with pytest.raises(RuntimeError, match=r"linear: weight_split must be what linear_split_weight returned"):
            ops.linear(x, w, b, None, split.double())


@needs_cuda
@pytest.mark.parametrize("m,n,k", [(1000, 36, 20), (517, 130, 68), (4099, 256, 256), (129, 1024, 128), (7, 2, 4)])
def test_cuda_fp32_matches_double(seed, m, n, k):
    x = torch.randn(m, k, device="cuda", requires_grad=True)
    w = torch.randn(n, k, device="cuda", requires_grad=True)
    b = torch.randn(n, device="cuda", requires_grad=True)
    y = ops.linear(x, w, b)
    _fp32_level(y, x, w, b)
    gy = torch.randn_like(y)
    y.backward(gy)
    _fp32_level(x.grad, gy, w.t(), None)  # dx = dy W through the same kernel
    # dw = dy^T x: on the H200 tessera's wgmma weight gradient (three tf32 products, as forward),
    # elsewhere cuBLAS; both within the fp32-level bound over the m rows it sums.
    _fp32_level(w.grad, gy.t(), x.detach().t(), None)
    # db = column sums of dy in fp32: against double, within fp32 summation error (two fp32
    # summation orders, e.g. torch's sum(0) and the gemv behind column_sums, differ by more than
    # assert_close's fp32 defaults at m = 4099).
    assert bool(((b.grad.double() - gy.double().sum(0)).abs() <= gy.double().abs().sum(0) * m * 2.0 ** -24).all())


@needs_cuda
@pytest.mark.parametrize("m,heads,k,c,k2", [(3000, 8, 128, 128, 128), (3000, 2, 128, 256, 128), (517, 2, 32, 128, 36),
                                            (1000, 4, 64, 64, 128), (70, 3, 20, 7, 0)])
def test_linear_heads_cuda_fp32_matches_double(seed, m, heads, k, c, k2):
    """tessera.linear_heads on CUDA fp32 (one launch of the kernel with heads and the shared second
    input where it takes them: C a multiple of 128 and K of 32; per head and one shared product
    otherwise), within the kernel's fp32-level bound against the double definition, and its
    gradients: each head's dx block = dy_h w_h through the same kernel, dw_h = dy_h^T x_h, the shared
    input's dx2 = dy w2, dw2 = dy^T x2."""
    x = torch.randn(m, heads * k, device="cuda", requires_grad=True)
    w = torch.randn(heads * c, k, device="cuda", requires_grad=True)
    b = torch.randn(heads * c, device="cuda")
    x2 = torch.randn(m, k2, device="cuda", requires_grad=True) if k2 else None
    w2 = torch.randn(heads * c, k2, device="cuda", requires_grad=True) if k2 else None
    b2 = torch.randn(heads * c, device="cuda") if k2 else None
    y = ops.linear_heads(x, w, b, x2, w2, b2)
    gy = torch.randn_like(y)
    y.backward(gy)
    xd = x.detach()
    for h in range(heads):
        xh, wh, g = xd[:, h * k:(h + 1) * k], w.detach()[h * c:(h + 1) * c], gy[:, h * c:(h + 1) * c]
        bh = b[h * c:(h + 1) * c] + (b2[h * c:(h + 1) * c] if k2 else 0)
        if k2:  # one product over [x_h | x2] against [w_h | w2_h]
            _fp32_level(y[:, h * c:(h + 1) * c], torch.cat([xh, x2.detach()], 1),
                        torch.cat([wh, w2.detach()[h * c:(h + 1) * c]], 1), bh)
        else:
            _fp32_level(y[:, h * c:(h + 1) * c], xh, wh, bh)
        _fp32_level(x.grad[:, h * k:(h + 1) * k], g, wh.t(), None)
        _fp32_level(w.grad[h * c:(h + 1) * c], g.t(), xh.t(), None)
    if k2:
        _fp32_level(x2.grad, gy, w2.detach().t(), None)
        _fp32_level(w2.grad, gy.t(), x2.detach().t(), None)


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_bias_gradient_is_the_column_sums(seed, dtype):
    """db through column_sums (cuBLAS gemv against a ones vector on CUDA): the column sums of dy
    in double within fp32 summation error, for contiguous and strided (column-sliced) gradients,
    on the default and on a side stream, from 3 to 70000 rows."""
    for m in (3, 1000, 70000):
        x = torch.randn(m, 20, device="cuda", dtype=dtype)
        w = torch.randn(36, 20, device="cuda", dtype=dtype, requires_grad=True)
        b = torch.randn(36, device="cuda", dtype=dtype, requires_grad=True)
        for gy in (torch.randn(m, 36, device="cuda", dtype=dtype),
                   torch.randn(m, 80, device="cuda", dtype=dtype)[:, 7:43]):
            for stream in (torch.cuda.current_stream(), torch.cuda.Stream()):
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    b.grad = None
                    ops.linear(x, w, b).backward(gy)
                    want = gy.double().sum(0)
                    bound = gy.double().abs().sum(0) * (m * 2.0 ** -24 if dtype == torch.float32 else 1e-12)
                    assert bool(((b.grad.double() - want).abs() <= bound + 1e-30).all())
                torch.cuda.current_stream().wait_stream(stream)


@needs_cuda
def test_cuda_residual(seed):
    x = torch.randn(517, 68, device="cuda", requires_grad=True)
    w = torch.randn(130, 68, device="cuda", requires_grad=True)
    b = torch.randn(130, device="cuda", requires_grad=True)
    r = torch.randn(517, 130, device="cuda", requires_grad=True)
    y = ops.linear(x, w, b, r)
    _fp32_level(y, x, w, b, r)
    gy = torch.randn_like(y)
    y.backward(gy)
    assert torch.equal(r.grad, gy)  # dresidual = dy
    _fp32_level(x.grad, gy, w.t(), None)
    # A strided residual (a column slice) is made contiguous, not misread.
    big = torch.randn(517, 140, device="cuda")
    with torch.no_grad():
        _fp32_level(ops.linear(x, w, b, big[:, 5:135]), x, w, b, big[:, 5:135])


@needs_cuda
@pytest.mark.parametrize("m,k,outs", [(4099, 128, (256, 256)), (2708, 128, (256, 256)), (517, 68, (130, 36, 130)),
                                     (7, 4, (2, 6))])
def test_cuda_linears_are_one_node(seed, m, k, outs):
    """Several projections of one x (GATv2's lin_l/lin_r, the Transformer's q/k/v) as one op and node
    (tessera.linears): a kernel per column block of one output, dx accumulated through the kernel's
    residual epilogue, db by column sums. Each
    output, dx and dW within fp32-level error of double; db within fp32 summation error; a bias-free Linear
    and an output that gets no gradient (its parameters' grads stay None) included."""
    lins = [torch.nn.Linear(k, o, bias=i != 1).cuda() for i, o in enumerate(outs)]
    x = torch.randn(m, k, device="cuda", requires_grad=True)
    with torch.no_grad():  # no node, the same op
        for y, lin in zip(_linear.linears(lins, x), lins):
            assert y.grad_fn is None
            _fp32_level(y, x, lin.weight, lin.bias)
    ys = _linear.linears(lins, x)
    assert ys[0].grad_fn is ys[-1].grad_fn  # one node
    for y, lin in zip(ys, lins):
        _fp32_level(y, x, lin.weight, lin.bias)
    used = [0, len(lins) - 1] if len(lins) > 2 else list(range(len(lins)))
    gys = {i: torch.randn_like(ys[i]) for i in used}
    torch.autograd.backward([ys[i] for i in used], [gys[i] for i in used])
    gy_cat = torch.cat([gys[i] for i in used], dim=1)
    w_cat = torch.cat([lins[i].weight for i in used])
    _fp32_level(x.grad, gy_cat, w_cat.t(), None)
    for i, lin in enumerate(lins):
        if i not in used:
            assert lin.weight.grad is None and (lin.bias is None or lin.bias.grad is None)
            continue
        _fp32_level(lin.weight.grad, gys[i].t(), x.detach().t(), None)  # dW = dy^T x (see above)
        if lin.bias is not None:
            _column_sums_level(lin.bias.grad, gys[i])


@needs_cuda
def test_cuda_linears_op_with_a_block_the_kernel_cannot_take(seed):
    """An odd width puts the next column block off the kernel's 8-byte alignment: the op then runs
    the stacked GEMM (torch's), with the same outputs and gradients as the Linears."""
    x = torch.randn(300, 64, device="cuda", requires_grad=True)
    ws = [torch.randn(n, 64, device="cuda", requires_grad=True) for n in (33, 64)]
    bs = [torch.randn(33, device="cuda", requires_grad=True), None]
    ys = ops.linears(x, ws, bs)
    want = _linears_reference(x, ws, bs)
    for y, r in zip(ys, want):
        torch.testing.assert_close(y, r, rtol=1e-5, atol=1e-5)
    gys = [torch.randn_like(y) for y in ys]
    got = torch.autograd.grad(ys, [x, *ws, bs[0]], gys)
    ref = torch.autograd.grad(want, [x, *ws, bs[0]], gys)
    for g, r in zip(got, ref):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-4)


@needs_cuda
def test_cuda_column_sums_keep_their_ones_and_allow_capture(seed):
    """CUDA column sums are cuBLAS's gemv against a kept vector of ones (src/torch/cuda/column_sums.cpp):
    right sums for shorter and longer inputs than before, strided rows, one row, float64, and inside a captured CUDA graph whose rows outnumber
    the kept ones (made per call there), replayed after the kept vector has grown."""
    def check(t, got):
        want = t.double().sum(0)
        assert bool(((got.double() - want).abs() <= t.double().abs().sum(0) * 2.0 ** -20 + 1e-30).all())
    for rows in (1000, 37, 70001, 1):
        t = torch.randn(rows, 24, device="cuda")
        check(t, ops.column_sums(t))
        check(t[:, 3:11], ops.column_sums(t[:, 3:11]))  # rows strided: a column block
        check(t.double(), ops.column_sums(t.double()))
    big = torch.randn(3_000_001, 2, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = ops.column_sums(big)
    check(big, ops.column_sums(big))  # eager: grows the kept vector
    out.fill_(0)
    graph.replay()
    torch.cuda.synchronize()
    check(big, out)


@needs_cuda
def test_cuda_other_cases_are_torch():
    # K = 67 (not a multiple of 4) and float64: torch's own linear, bitwise.
    x, w = torch.randn(300, 67, device="cuda"), torch.randn(40, 67, device="cuda")
    assert torch.equal(ops.linear(x, w), torch.nn.functional.linear(x, w))
    xd, wd = x.double(), w.double()
    assert torch.equal(ops.linear(xd, wd), torch.nn.functional.linear(xd, wd))
    # A strided x (a column slice) is made contiguous, not misread.
    big = torch.randn(300, 72, device="cuda")
    _fp32_level(ops.linear(big[:, 4:68], w[:, :64]), big[:, 4:68], w[:, :64], None)


def test_fp32_exact_reads_this_torchs_settings():
    """Whether CUDA fp32 projections go to tessera's kernel or to the user's TF32 is read from this
    torch's settings, on any torch: before 2.9 torch.backends.cuda.matmul has no fp32_precision and
    raises AssertionError for it (every CUDA fp32 layer call raised, torch 1.13 to 2.8). Runs
    without a GPU: the settings are host state."""
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert _linear._fp32_exact()
        torch.set_float32_matmul_precision("high")
        assert not _linear._fp32_exact()
    finally:
        torch.set_float32_matmul_precision(old)


@needs_cuda
def test_linears_respects_tf32_opt_in():
    lin = torch.nn.Linear(64, 32).cuda()
    x = torch.randn(500, 64, device="cuda")
    want = ops.linear(x, lin.weight, lin.bias)
    assert torch.equal(_linear.linear(lin, x), want)
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        assert torch.equal(_linear.linear(lin, x), lin(x))  # the user's TF32 through the Linear
        # The per-head products too: torch's linear per head, the shared one added (cuBLAS's TF32).
        xh, wh, bh = torch.randn(500, 128, device="cuda"), torch.randn(64, 64, device="cuda"), torch.randn(64, device="cuda")
        w2, b2 = torch.randn(64, 64, device="cuda"), torch.randn(64, device="cuda")
        assert torch.equal(_linear.heads_product(xh, wh, bh, x, w2, b2), _heads_reference(xh, wh, bh, x, w2, b2))
    finally:
        torch.set_float32_matmul_precision(old)
