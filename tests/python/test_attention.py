"""tessera.nn.GATv2Conv / TransformerConv against PyG semantics (plain-torch oracle, and PyG itself
where torch_geometric is installed): outputs, every parameter gradient, attention weights,
gradcheck of the raw op in double, dropout determinism, state_dict layout."""
import pytest
import torch

import tessera
from tessera.nn import GATv2Conv, TransformerConv
from tessera.nn.gatv2 import AttentionGraph, self_loop_edge_attr

import pyg_attention_reference as ref
from pyg_reference import SparseTensorStandIn, sparse_adjacency


def random_edges(n_src, n_dst, e, device="cpu"):
    """Duplicates, self-loops and isolated nodes included."""
    src = torch.randint(0, max(n_src - 1, 1), (e,), device=device)
    dst = torch.randint(0, max(n_dst - 1, 1), (e,), device=device)
    loops = torch.arange(0, min(n_src, n_dst) - 1, 4, device=device)
    ei = torch.cat([torch.stack([src, dst]), torch.stack([loops, loops]), torch.stack([src[:5], dst[:5]])], 1)
    return ei


def grads(mod, out, w):
    mod.zero_grad()
    (out * w).sum().backward()
    return {n: p.grad.clone() for n, p in mod.named_parameters() if p.grad is not None}


def check_module(mod, oracle, x, ei, tol):
    out = mod(x, ei)
    w = torch.randn_like(out)
    g = grads(mod, out, w)
    out_ref, _, _ = oracle(mod, x, ei)
    g_ref = grads(mod, out_ref, w)
    torch.testing.assert_close(out, out_ref, rtol=tol, atol=tol)
    assert g.keys() == g_ref.keys()
    for n in g:
        torch.testing.assert_close(g[n], g_ref[n], rtol=tol, atol=tol, msg=lambda m: f"grad of {n}: {m}")


@pytest.mark.parametrize("heads,channels,concat,share,residual", [
    (1, 8, True, False, False), (3, 5, True, True, False), (2, 7, False, False, True), (4, 16, True, False, True)])
def test_gatv2_matches_pyg_semantics(seed, heads, channels, concat, share, residual):
    n = 60
    mod = GATv2Conv(12, channels, heads=heads, concat=concat, share_weights=share, residual=residual).double()
    x = torch.randn(n, 12, dtype=torch.float64)
    check_module(mod, ref.gatv2_conv, x, random_edges(n, n, 300), 1e-9)


def test_gatv2_bipartite_and_attention_weights(seed):
    mod = GATv2Conv((6, 9), 4, heads=2).double()
    xs, xd = torch.randn(30, 6, dtype=torch.float64), torch.randn(20, 9, dtype=torch.float64)
    ei = random_edges(30, 20, 100)
    check_module(mod, ref.gatv2_conv, (xs, xd), ei, 1e-9)
    out, (ei_used, alpha) = mod((xs, xd), ei, return_attention_weights=True)
    _, ei_ref, alpha_ref = ref.gatv2_conv(mod, (xs, xd), ei)
    assert torch.equal(ei_used, ei_ref)
    torch.testing.assert_close(alpha, alpha_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("heads,channels,concat,beta,root", [
    (1, 8, True, False, True), (3, 6, True, True, True), (2, 5, False, True, True), (4, 4, True, False, False)])
def test_transformer_matches_pyg_semantics(seed, heads, channels, concat, beta, root):
    n = 50
    mod = TransformerConv(10, channels, heads=heads, concat=concat, beta=beta, root_weight=root).double()
    x = torch.randn(n, 10, dtype=torch.float64)
    ei = random_edges(n, n, 250)
    check_module(mod, ref.transformer_conv, x, ei, 1e-9)
    _, (_, alpha) = mod(x, ei, return_attention_weights=True)
    torch.testing.assert_close(alpha, ref.transformer_conv(mod, x, ei)[2], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("heads,channels,concat,beta,root,bipartite,full", [
    (1, 12, True, False, True, False, False), (3, 16, True, True, True, False, False),
    (2, 14, False, False, True, True, False), (4, 11, True, False, False, True, False),
    (2, 12, True, False, True, False, True), (2, 12, True, False, True, True, True)])
def test_transformer_folded_matches_pyg_semantics(seed, heads, channels, concat, beta, root, bipartite, full,
                                                   monkeypatch):
    """The folded form (TransformerConv._folded_attention, forced): outputs, every parameter gradient
    (lin_key.bias: zero, PyG's is rounding noise) and attention weights, on graphs with duplicate
    edges and empty rows (b_v after the product) or without (b_v inside it). With the root weight,
    concatenated heads and no beta, lin_skip is added inside the last product (_plain_skip)."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", "1")
    n_src, n_dst = (40, 30) if bipartite else (50, 50)
    mod = TransformerConv((10, 7) if bipartite else 10, channels, heads=heads, concat=concat, beta=beta,
                          root_weight=root).double()
    x = (torch.randn(n_src, 10, dtype=torch.float64), torch.randn(n_dst, 7, dtype=torch.float64)) if bipartite \
        else torch.randn(n_src, 10, dtype=torch.float64)
    ei = random_edges(n_src, n_dst, 200)
    if full:  # an entry in every row
        ei = torch.cat([ei, torch.stack([torch.arange(n_dst) % n_src, torch.arange(n_dst)])], 1)
    assert bool((torch.bincount(ei[1], minlength=n_dst) == 0).any()) != full  # an empty row: no b_v there
    check_module(mod, ref.transformer_conv, x, ei, 1e-9)
    _, (_, alpha) = mod(x, ei, return_attention_weights=True)
    torch.testing.assert_close(alpha, ref.transformer_conv(mod, x, ei)[2], rtol=1e-9, atol=1e-12)


def test_transformer_folds_where_heads_are_wider_than_the_input(seed, monkeypatch):
    """On the CPU the folded form runs where C > K on any graph and where C = K on graphs of at least
    FOLD_CPU_EQUAL_MIN_ENTRIES entries (lowered here), never where C < K nor with dropout in
    training; forced off, the unfolded one; both give PyG's semantics (float32 tolerance)."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", "")  # the rule, whatever TESSERA_TRANSFORMER_FOLD says
    monkeypatch.setattr(transformer, "FOLD_CPU_EQUAL_MIN_ENTRIES", 4096)
    calls = []
    real = TransformerConv._folded_attention
    monkeypatch.setattr(TransformerConv, "_folded_attention", lambda *a: calls.append(1) or real(*a))
    x = torch.randn(600, 8)
    ei, small = random_edges(600, 600, 4096), random_edges(600, 600, 300)
    wide, equal, narrow = TransformerConv(8, 16, heads=2), TransformerConv(8, 8, heads=2), TransformerConv(8, 4, heads=3)
    for mod, edges, folds in ((wide, ei, True), (wide, small, True), (equal, ei, True), (equal, small, False),
                              (narrow, ei, False)):
        calls.clear()
        check_module(mod, ref.transformer_conv, x, edges, 1e-4)
        assert bool(calls) == folds, (mod, edges.size(1))
    calls.clear()
    monkeypatch.setattr(transformer, "_FOLD", "0")
    check_module(wide, ref.transformer_conv, x, ei, 1e-4)
    assert not calls
    monkeypatch.setattr(transformer, "_FOLD", "1")
    dropping = TransformerConv(8, 16, heads=2, dropout=0.5).train()
    dropping(x, small)
    assert not calls  # training with dropout: the value bias would need each row's sum of alpha
    dropping.eval()
    dropping(x, small)
    assert calls


def test_transformer_folded_operators_kept_without_autograd_until_a_parameter_changes(seed, monkeypatch):
    """Without autograd the folded form keeps its query operators (TransformerConv._folded_operators,
    with the last product's split and bias) for the next call, and makes them again after anything
    that changes lin_key.weight, lin_query's or lin_value's parameters: an optimizer step,
    load_state_dict, an in-place init or change, a new Parameter, a swapped .data (as Module.to()
    does), another dtype; with autograd on it never uses them. Every output is PyG's semantics."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", "1")
    monkeypatch.setattr(transformer, "_FOLD_MEMO", True)
    made = []
    real_bmm = torch.bmm
    monkeypatch.setattr(torch, "bmm", lambda *a, **k: made.append(1) or real_bmm(*a, **k))
    mod = TransformerConv(10, 12, heads=2).double()
    x = torch.randn(50, 10, dtype=torch.float64)
    ei = random_edges(50, 50, 250)

    def infer(expect_made):
        made.clear()
        with torch.no_grad():
            out = mod(x, ei)
        assert bool(made) == expect_made
        torch.testing.assert_close(out, ref.transformer_conv(mod, x, ei)[0], rtol=1e-9, atol=1e-9)

    infer(True)
    infer(False)  # kept
    opt = torch.optim.SGD(mod.parameters(), lr=0.1)
    check_module(mod, ref.transformer_conv, x, ei, 1e-9)  # autograd on: made afresh, gradients flow
    opt.step()  # lin_key.weight, lin_query.* move: their version counters too
    infer(True)
    infer(False)
    other = TransformerConv(10, 12, heads=2).double()
    mod.load_state_dict(other.state_dict())
    infer(True)
    torch.nn.init.normal_(mod.lin_query.bias)
    infer(True)
    fresh = torch.nn.Parameter(torch.randn_like(mod.lin_key.weight))
    with torch.no_grad():
        while fresh._version < mod.lin_key.weight._version:  # the same version: only its storage differs
            fresh.add_(0)
    mod.lin_key.weight = fresh
    infer(True)
    old = mod.lin_key.weight
    same_storage = torch.nn.Parameter(old.data)  # its own version counter, from 0
    with torch.no_grad():
        while same_storage._version < old._version:  # new values, same version: only the object differs
            same_storage.mul_(1.5)
    mod.lin_key.weight = same_storage
    infer(True)
    infer(False)
    mod.lin_query.weight.data = torch.randn_like(mod.lin_query.weight)  # as Module.to() does: same object and version
    infer(True)
    infer(False)
    with torch.no_grad():  # the last product's weight: its kept split (CUDA) is made again too
        mod.lin_value.weight.mul_(2)
    infer(True)
    infer(False)
    made.clear()
    with torch.no_grad():
        mod.float()(x.float(), ei)
    assert made  # new tensors, another dtype
    monkeypatch.setattr(transformer, "_FOLD_MEMO", False)
    mod.double()
    infer(True)
    infer(True)
    monkeypatch.setattr(transformer, "_FOLD_MEMO", True)
    with torch.inference_mode():  # parameters made here have no version counter: never kept
        made_here = TransformerConv(10, 12, heads=2).double()
        for _ in range(2):
            made.clear()
            out = made_here(x, ei)
            assert made
            torch.testing.assert_close(out, ref.transformer_conv(made_here, x, ei)[0], rtol=1e-9, atol=1e-9)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the CUDA fold rule runs on the GPU machine")
def test_transformer_fold_rule_on_cuda_follows_size_and_autograd(seed, monkeypatch):
    """On CUDA the folded form runs where C >= K on graphs of at least FOLD_CUDA_MIN_ENTRIES entries,
    and with autograd off (inference) from FOLD_CUDA_INFERENCE_MIN_ENTRIES (both lowered here); the
    two forms agree to float32 rounding, and the folded inference output is PyG's semantics. With
    autograd off the layer runs as one op (TransformerConv._inference), folded or not."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", "")
    monkeypatch.setattr(transformer, "FOLD_CUDA_INFERENCE_MIN_ENTRIES", 2000)
    monkeypatch.setattr(transformer, "FOLD_CUDA_MIN_ENTRIES", 8000)
    calls = []  # one entry per folded call: the Python path's _folded_attention, or the one op folded
    real, real_one_op = TransformerConv._folded_attention, TransformerConv._inference
    monkeypatch.setattr(TransformerConv, "_folded_attention", lambda *a: calls.append(1) or real(*a))

    def one_op(mod, x, g, fold, *rest):
        if fold:
            calls.append(1)
        return real_one_op(mod, x, g, fold, *rest)
    monkeypatch.setattr(TransformerConv, "_inference", one_op)
    x = torch.randn(700, 64, device="cuda")
    mid, large = random_edges(700, 700, 4000, "cuda"), random_edges(700, 700, 9000, "cuda")
    wide, narrow = TransformerConv(64, 64, heads=8).cuda(), TransformerConv(64, 32, heads=4).cuda()
    for mod, edges, grad_folds, inference_folds in ((wide, mid, False, True), (wide, large, True, True),
                                                    (narrow, large, False, False)):
        calls.clear()
        trained = mod(x, edges)
        assert bool(calls) == grad_folds, (mod, edges.size(1), "autograd on")
        calls.clear()
        with torch.no_grad():
            inferred = mod(x, edges)
        assert bool(calls) == inference_folds, (mod, edges.size(1), "autograd off")
        torch.testing.assert_close(inferred, trained.detach(), rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        calls.clear()
        out = wide(x, mid)
        assert calls
        torch.testing.assert_close(out, ref.transformer_conv(wide, x, mid)[0], rtol=1e-4, atol=1e-4)


def inference_is_training(mod, x, ei, tol, ref_tol):
    """The layer's output without autograd (the prepared projections' path) against its
    training-mode output (to tol) and PyG's semantics (to ref_tol); returns the training-mode one."""
    oracle = ref.gatv2_conv if isinstance(mod, GATv2Conv) else ref.transformer_conv
    trained = mod(x, ei)
    with torch.no_grad():
        inferred = mod(x, ei)
        torch.testing.assert_close(inferred, trained.detach(), rtol=tol, atol=tol)
        torch.testing.assert_close(inferred, oracle(mod, x, ei)[0], rtol=ref_tol, atol=ref_tol)
    return trained


def optimizer_step(mod, out):
    """One SGD step on a random loss of out: every parameter's values and version counter move.
    Small enough to keep the layer well conditioned in fp32: lr = 0.5 on a Cora-size output took
    weights to about 100 and the logits with them, where fp32 rounding moves single attention
    weights (the fp32 CPU layer, no tensor cores, then differed from PyG's semantics in double by 0.024,
    against 6e-7 before the step; 7e-7 after a step of lr = 1e-3, which still moves the weights
    by up to about 0.2)."""
    (out * torch.randn_like(out)).sum().backward()
    torch.optim.SGD(mod.parameters(), lr=1e-3).step()


@pytest.mark.parametrize("cls,kwargs,fold", [(GATv2Conv, {}, ""), (GATv2Conv, {"residual": True, "concat": False}, ""),
                                             (GATv2Conv, {"share_weights": True}, ""),
                                             (TransformerConv, {}, "0"), (TransformerConv, {"beta": True}, "0"),
                                             (TransformerConv, {}, "1"), (TransformerConv, {"concat": False}, "1"),
                                             (TransformerConv, {"full": True}, "1")])
def test_prepared_projections_are_the_layers_own(seed, cls, kwargs, fold, monkeypatch):
    """The layers' inference path with prepared projections (_linear.PreparedWeights, the folded
    form's kept splits and bias), which runs on CUDA fp32, taken here on the CPU in double: the
    tensor-core test forced true and a stand-in split that the CPU ops ignore. The outputs are the
    training-mode ones (to rounding) and PyG's semantics, groups of Linears are stacked once and
    kept, and an optimizer step or an in-place change of a projection makes them again."""
    import tessera.nn._linear as linear_mod
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", fold)
    monkeypatch.setattr(transformer, "_FOLD_MEMO", True)
    monkeypatch.setattr(linear_mod, "_PREPARED", True)
    monkeypatch.setattr(linear_mod, "_tensor_cores", lambda x: True)
    stand_in = torch.zeros(1, dtype=torch.float64)
    monkeypatch.setattr(linear_mod, "weight_split", lambda w, w2=None: stand_in)
    monkeypatch.setattr(transformer, "weight_split", lambda w, w2=None: stand_in)
    stacked = []
    real_stack = linear_mod._stack
    monkeypatch.setattr(linear_mod, "_stack", lambda lins: stacked.append(len(lins)) or real_stack(lins))
    kwargs = dict(kwargs)
    full = kwargs.pop("full", False)  # every row with an entry: the folded b_v inside the last product
    mod = cls(12, 12 if fold == "1" else 6, heads=3, **kwargs).double()
    x, ei = torch.randn(60, 12, dtype=torch.float64), random_edges(60, 60, 300)
    if full:
        ei = torch.cat([ei, torch.arange(60).repeat(2, 1)], 1)

    def agree():
        return inference_is_training(mod, x, ei, 1e-12, 1e-9)
    agree()
    # GATv2: lin_l and lin_r (and res) as one group, one Linear when shared; the unfolded
    # Transformer: q, k, v and, on the CPU, lin_skip (_project's early skip; on CUDA it is a group of
    # its own after the attention); folded: no Linear group (its products are kept apart).
    want = {GATv2Conv: [1 if kwargs.get("share_weights") else 3 if kwargs.get("residual") else 2],
            TransformerConv: [4] if fold == "0" else []}[cls]
    assert stacked == want
    stacked.clear()
    agree()
    assert stacked == []  # kept
    optimizer_step(mod, agree())
    agree()
    assert stacked == want  # made again
    with torch.no_grad():
        (mod.lin_l if cls is GATv2Conv else mod.lin_value).weight.mul_(-1)
    agree()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the prepared projections run on the GPU machine")
@pytest.mark.parametrize("cls,kwargs,fold", [(GATv2Conv, {}, ""), (GATv2Conv, {"residual": True, "concat": False}, ""),
                                             (TransformerConv, {}, "0"), (TransformerConv, {"beta": True}, "0"),
                                             (TransformerConv, {}, "1")])
def test_cuda_inference_projects_with_prepared_weights(seed, cls, kwargs, fold, monkeypatch):
    """Without autograd on CUDA fp32 the layers project each group of Linears reading one input in
    one product from weights stacked and split once (_linear.PreparedWeights; the folded
    Transformer keeps its query operator's split): the output is the training-mode one, a second
    call launches no weight split on a compute capability 9.0 device and one projection kernel per
    group, and after an optimizer step (and an in-place change of one weight) the output follows
    the new parameters and PyG's semantics."""
    import tessera.nn._linear as linear_mod
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", fold)
    monkeypatch.setattr(transformer, "_ONE_OP", True)  # the defaults, whatever the environment says
    monkeypatch.setattr(transformer, "_SKIP_STACKED", True)
    monkeypatch.setattr(linear_mod, "_PREPARED", True)  # the default, whatever TESSERA_LINEAR_PREPARED says
    # Folded: C = 128, a whole wgmma tile of columns per head, so the per-head product is one launch
    # (at C = 64 it is a product per head on the mma.sync kernel: 6 launches in gpu_20261206h).
    mod = cls(64, 128 if fold == "1" else 32, heads=4, **kwargs).cuda()
    x, ei = torch.randn(2708, 64, device="cuda"), random_edges(2708, 2708, 12000, "cuda")

    def agree():
        return inference_is_training(mod, x, ei, 1e-5, 1e-4)
    agree()
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        mod(x, ei)
        torch.cuda.synchronize()
    kernels = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if torch.cuda.get_device_capability() == (9, 0):
        assert not any("split_weight" in k for k in kernels), kernels
    # q, k, v (+ GATv2's res) one product; the unfolded Transformer's skip in it too without the beta
    # gate (the one op's skip_stacked), else a product apart
    groups = 1 + (1 if cls is TransformerConv and fold == "0" and kwargs.get("beta") else 0)
    products = [k for k in kernels if ("linear_wgmma" in k or "tf32x3" in k) and "split_weight" not in k]
    assert len(products) == groups + (1 if cls is TransformerConv and fold == "1" else 0), kernels
    optimizer_step(mod, agree())
    agree()
    with torch.no_grad():
        (mod.lin_r if cls is GATv2Conv else mod.lin_skip).weight.mul_(-1)
    agree()


class CountedOps:
    """torch.ops.tessera with its transformer_inference calls counted (calls: one entry each)."""
    def __init__(self, calls: list):
        self.calls = calls

    def __getattr__(self, name):
        return getattr(torch.ops.tessera, name)

    def transformer_inference(self, *args, **kwargs):
        self.calls.append(1)
        return torch.ops.tessera.transformer_inference(*args, **kwargs)


def one_op_calls(monkeypatch):
    """A list that grows by one on every TransformerConv call that runs as one op: the whole forward
    (_inference) or a repeat of its last one-op call (_RepeatCall)."""
    import tessera.nn.transformer as transformer
    calls = []
    monkeypatch.setattr(transformer, "_ops", CountedOps(calls))
    return calls


ONE_OP_CASES = [({}, "0", False, False), ({"concat": False}, "0", False, False), ({"root_weight": False}, "0", False, False),
                ({"bias": False}, "0", False, False), ({}, "1", False, False), ({}, "1", False, True),
                ({"concat": False}, "1", False, False), ({"root_weight": False}, "1", True, False),
                ({"bias": False}, "1", True, True), ({"concat": False}, "1", True, True)]


@pytest.mark.parametrize("kwargs,fold,bipartite,full", ONE_OP_CASES)
def test_transformer_inference_as_one_op_is_the_layers_forward(seed, kwargs, fold, bipartite, full, monkeypatch):
    """Without autograd the Transformer's forward runs as one op (tessera.transformer_inference), which
    the layer takes on CUDA fp32; taken here on the CPU in double (the tensor-core test forced true,
    no kept splits): unfolded (q, k, v one stacked product) and folded (with empty rows, b_v as a
    rank-1 update, or without, b_v + b_skip in the last product), heads concatenated or averaged,
    with and without the root weight and biases, bipartite where folded; unfolded with the root
    weight and heads concatenated, the skip is the stacked product's fourth block, added in the
    attention's write (_skip_stacked). Its output is the training-mode one and PyG's semantics,
    before and after an optimizer step, an in-place change of a weight and new Parameters in place
    of each Linear's (the kept stacks made again)."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", fold)
    monkeypatch.setattr(transformer, "_ONE_OP", True)
    monkeypatch.setattr(transformer, "_SKIP_STACKED", True)
    monkeypatch.setattr(transformer, "_tensor_cores", lambda x: True)
    calls = one_op_calls(monkeypatch)
    stacked, real_stacked = [], TransformerConv._skip_stacked

    def spy(self, fold_):
        stacked.append(real_stacked(self, fold_))
        return stacked[-1]
    monkeypatch.setattr(TransformerConv, "_skip_stacked", spy)
    n_src, n_dst = (50, 40) if bipartite else (60, 60)
    mod = TransformerConv((12, 9) if bipartite else 12, 12 if fold == "1" else 5, heads=3, **kwargs).double()
    x = (torch.randn(n_src, 12, dtype=torch.float64), torch.randn(n_dst, 9, dtype=torch.float64)) if bipartite \
        else torch.randn(n_src, 12, dtype=torch.float64)
    ei = random_edges(n_src, n_dst, 300)
    if full:  # an entry in every row
        ei = torch.cat([ei, torch.stack([torch.arange(n_dst) % n_src, torch.arange(n_dst)])], 1)
    assert bool((torch.bincount(ei[1], minlength=n_dst) == 0).any()) != full

    def agree():
        return inference_is_training(mod, x, ei, 1e-12, 1e-9)
    agree()
    assert len(calls) == 1  # the no-grad call, not the training-mode one
    optimizer_step(mod, agree())
    agree()
    with torch.no_grad():
        mod.lin_value.weight.mul_(-1)
        mod.lin_skip.weight.mul_(0.5)
    agree()
    # New Parameters in place of each Linear's: a memo that did not key on one would keep the old weights.
    for lin in (mod.lin_query, mod.lin_key, mod.lin_value, mod.lin_skip):
        for name, p in list(lin.named_parameters(recurse=False)):
            setattr(lin, name, torch.nn.Parameter(p.detach() * 1.5 + 0.25))
        agree()
    assert len(calls) == 8
    want = fold == "0" and kwargs.get("concat", True) and kwargs.get("root_weight", True)
    # Seven whole forwards: agree() before the optimizer step repeats the first call (_RepeatCall),
    # but for a pair (x_src, x_dst), which a repeat does not take.
    assert stacked == [want] * (8 if bipartite else 7)


def test_transformer_inference_skip_stacked_or_a_second_product_alike(seed, monkeypatch):
    """The one op's unfolded skip as the stacked product's fourth block (added in the attention's
    write) and as a second product give the same output (double, the CPU, the tensor-core test
    forced), on a graph with empty rows, where the output is the skip alone. The kept weights are
    keyed on the form, so switching it makes them again."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", "0")
    monkeypatch.setattr(transformer, "_ONE_OP", True)
    monkeypatch.setattr(transformer, "_tensor_cores", lambda x: True)
    calls = one_op_calls(monkeypatch)
    mod = TransformerConv(12, 5, heads=3).double()
    x, ei = torch.randn(60, 12, dtype=torch.float64), random_edges(60, 60, 100)
    empty = torch.bincount(ei[1], minlength=60) == 0
    assert bool(empty.any())
    outs = []
    for on in (True, False, True):
        monkeypatch.setattr(transformer, "_SKIP_STACKED", on)
        with torch.no_grad():
            outs.append(mod(x, ei))
    assert len(calls) == 3
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(outs[2], outs[0], rtol=0, atol=0)
    with torch.no_grad():
        torch.testing.assert_close(outs[0][empty], mod.lin_skip(x[empty]), rtol=1e-12, atol=1e-12)


def test_transformer_inference_one_op_only_where_it_applies(seed, monkeypatch):
    """The one op is taken without autograd only: not with attention weights, the beta gate, edge
    features, dropout in training, the unfolded form on bipartite input, a Linear with a hook, TF32
    allowed (the real tensor-core test: False on the CPU) or TESSERA_TRANSFORMER_ONE_OP=0. Each of
    those still gives the training-mode output."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", "0")
    calls = one_op_calls(monkeypatch)
    x, ei = torch.randn(40, 8), random_edges(40, 40, 150)
    mod = TransformerConv(8, 4, heads=2)
    with torch.no_grad():
        mod(x, ei)
    assert not calls  # the CPU: no tensor cores
    monkeypatch.setattr(transformer, "_tensor_cores", lambda x: True)

    def runs_as_one_op(m, *args, **kw):
        calls.clear()
        want = m(*args, **kw)
        with torch.no_grad():
            got = m(*args, **kw)
        torch.testing.assert_close(got, want.detach() if isinstance(want, torch.Tensor) else got, rtol=1e-5, atol=1e-5)
        return bool(calls)
    assert runs_as_one_op(mod, x, ei)
    with torch.no_grad():
        calls.clear()
        mod(x, ei, return_attention_weights=True)
        assert not calls
    assert not runs_as_one_op(TransformerConv(8, 4, heads=2, beta=True), x, ei)
    ea = torch.randn(ei.size(1), 3)
    assert not runs_as_one_op(TransformerConv(8, 4, heads=2, edge_dim=3), x, ei, ea)
    assert not runs_as_one_op(TransformerConv((8, 6), 4, heads=2), (x, torch.randn(40, 6)), ei)
    hooked = TransformerConv(8, 4, heads=2)
    hooked.lin_key.register_forward_hook(lambda *a: None)
    assert not runs_as_one_op(hooked, x, ei)
    dropping = TransformerConv(8, 4, heads=2, dropout=0.5).train()
    with torch.no_grad():
        calls.clear()
        dropping(x, ei)
        assert not calls
    monkeypatch.setattr(transformer, "_ONE_OP", False)
    assert not runs_as_one_op(mod, x, ei)


@pytest.mark.parametrize("fold", ["0", "1"])
def test_transformer_inference_repeats_only_what_is_unchanged(seed, fold, monkeypatch):
    """A no-grad call that reads what the layer's last one-op call read passes that call's arguments
    again (_RepeatCall: no whole forward); each change below makes the next call a whole forward or
    no one op at all, with the output PyG's semantics after it: edge_index modified in place, or
    another tensor of the same values; x with other rows; a weight changed in place, a new
    Parameter, a new Linear; the module put in training mode (dropout 0: one op, otherwise not);
    a hook on a Linear; TF32 allowed (the tensor-core test false); grad mode on; attention weights
    asked for; the module switch (TESSERA_TRANSFORMER_REPEAT=0). A whole call on another graph drops
    the record, which would keep that graph's tensors alive."""
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", fold)
    monkeypatch.setattr(transformer, "_ONE_OP", True)
    cores = [True]
    monkeypatch.setattr(transformer, "_tensor_cores", lambda x: cores[0])
    ops = one_op_calls(monkeypatch)
    whole, real = [], TransformerConv._inference
    monkeypatch.setattr(TransformerConv, "_inference", lambda *a: whole.append(1) or real(*a))
    n = 50
    mod = TransformerConv(6, 8 if fold == "1" else 3, heads=2).double().eval()
    x, ei = torch.randn(n, 6, dtype=torch.float64), random_edges(n, n, 200)

    def call(*args, dropped=False, **kwargs):
        """'repeat', 'whole' or None (no one op), checking the output against PyG's semantics (not
        where attention dropout runs)."""
        ops.clear()
        whole.clear()
        with torch.no_grad():
            out = mod(*args, **kwargs)
        out = out[0] if isinstance(out, tuple) else out
        if not dropped:
            torch.testing.assert_close(out, ref.transformer_conv(mod, *args[:2])[0], rtol=1e-9, atol=1e-9)
        return None if not ops else "whole" if whole else "repeat"
    assert call(x, ei) == "whole"
    assert call(x, ei) == call(torch.randn_like(x), ei) == "repeat"  # other values of x: the same arguments
    ei[0, :5] = (ei[0, :5] + 1) % n
    assert call(x, ei) == "whole" and call(x, ei) == "repeat"
    ei = ei.clone()
    assert call(x, ei) == "whole"
    assert call(torch.randn(n + 3, 6, dtype=torch.float64), ei) == "whole" and call(x, ei) == "whole"
    with torch.no_grad():
        mod.lin_key.weight.mul_(-1)
    assert call(x, ei) == "whole" and call(x, ei) == "repeat"
    mod.lin_value.bias = torch.nn.Parameter(torch.randn(mod.lin_value.bias.shape, dtype=torch.float64))
    assert call(x, ei) == "whole"
    mod.lin_skip = torch.nn.Linear(6, mod.lin_skip.out_features).double()
    assert call(x, ei) == "whole" and call(x, ei) == "repeat"
    mod.train()
    assert call(x, ei) == "whole" and call(x, ei) == "repeat"
    mod.dropout = 0.5
    assert call(x, ei, dropped=True) is None
    mod.eval()
    assert call(x, ei) == "whole"
    handle = mod.lin_query.register_forward_hook(lambda *a: None)
    assert call(x, ei) is None
    handle.remove()  # as the last one-op call read it again
    assert call(x, ei) == "repeat"
    cores[0] = False
    assert call(x, ei) is None
    cores[0] = True
    assert call(x, ei) == "repeat" and call(x, ei, return_attention_weights=True) is None
    ops.clear()
    mod(x, ei)  # grad mode on: the training path
    assert not ops
    assert call(x, ei) == "repeat"
    mod(x, ei.clone())  # training on another graph: the record of this one is dropped, not kept alive
    assert mod._repeat is None and call(x, ei) == "whole" and call(x, ei) == "repeat"
    monkeypatch.setattr(transformer, "_REPEAT", False)
    assert call(x, ei) == "whole" and call(x, ei) == "whole"


def test_transformer_inference_under_grad_mode_and_without(seed):
    """The one op in grad mode records its inner ops' nodes: gradients reach x and the stacked weights
    as they do through the layer's own training path. Without autograd its inner ops run below their
    Autograd kernels (transformer_inference_op.cpp): the same output, a plain tensor (not an
    inference-mode one) that later ops can differentiate through."""
    ops = torch.ops.tessera
    mod = TransformerConv(7, 5, heads=3).double()
    x, ei = torch.randn(50, 7, dtype=torch.float64), random_edges(50, 50, 160)
    g = AttentionGraph.from_edge_index(ei, 50, 50)
    lins = (mod.lin_query, mod.lin_key, mod.lin_value, mod.lin_skip)
    w_in = torch.cat([lin.weight.detach() for lin in lins]).requires_grad_()
    b_in = torch.cat([lin.bias.detach() for lin in lins])

    def op(x_in):
        return ops.transformer_inference(x_in, x_in, g.rowptr, g.col, g.graph.id, 3, True, w_in, b_in,
                                         skip_stacked=True)
    xg = x.clone().requires_grad_()
    got = op(xg)
    got.sum().backward()
    xl = x.clone().requires_grad_()
    want = mod(xl, ei)
    want.sum().backward()
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(xg.grad, xl.grad, rtol=1e-10, atol=1e-10)
    dw = torch.cat([lin.weight.grad for lin in lins])
    torch.testing.assert_close(w_in.grad, dw, rtol=1e-10, atol=1e-10)
    with torch.no_grad():
        plain = op(x)
    assert not plain.requires_grad and not plain.is_inference()
    torch.testing.assert_close(plain, got.detach(), rtol=0, atol=0)
    scale = torch.ones(15, dtype=torch.float64, requires_grad=True)
    (plain * scale).sum().backward()
    torch.testing.assert_close(scale.grad, plain.sum(0), rtol=1e-12, atol=1e-12)


def test_transformer_inference_op_names_bad_arguments():
    """The op's own checks: the stacked weights' shapes, the unfolded form's one input, dtypes."""
    ops = torch.ops.tessera
    x = torch.randn(10, 6)
    rowptr, col = torch.zeros(11, dtype=torch.int32), torch.zeros(0, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="w_in must be"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(13, 6))
    with pytest.raises(RuntimeError, match="one x"):
        ops.transformer_inference(x, x.clone(), rowptr, col, 0, 2, True, torch.randn(12, 6))
    with pytest.raises(RuntimeError, match="b_in must be"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(12, 6), torch.randn(5))
    with pytest.raises(RuntimeError, match="w_skip is Double on cpu but x_dst is Float"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(12, 6), None, None,
                                  torch.randn(4, 6, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="w_value must be"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(12, 6), None, None, None, None, None,
                                  torch.randn(5, 6))
    # The skip stacked as w_in's fourth block: 4 heads C rows, heads concatenated, no second w_skip.
    with pytest.raises(RuntimeError, match=r"\[W_q; W_k; W_v; W_skip\]"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(12, 6), skip_stacked=True)
    with pytest.raises(RuntimeError, match="heads concatenated"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, False, torch.randn(16, 6), skip_stacked=True)
    with pytest.raises(RuntimeError, match="no separate w_skip"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(16, 6), None, None, torch.randn(4, 6),
                                  skip_stacked=True)
    with pytest.raises(RuntimeError, match="unfolded form"):
        ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(12, 6), w_value=torch.randn(4, 6),
                                  skip_stacked=True)
    assert ops.transformer_inference(x, x, rowptr, col, 0, 2, True, torch.randn(16, 6), skip_stacked=True).shape \
        == (10, 4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the one-op forward runs on the GPU machine")
@pytest.mark.parametrize("kwargs,fold,bipartite,full", ONE_OP_CASES)
@pytest.mark.parametrize("prepared", [False, True])
def test_cuda_transformer_inference_runs_as_one_op(seed, kwargs, fold, bipartite, full, prepared, monkeypatch):
    """On CUDA fp32 without autograd the Transformer's forward is one op (tessera.transformer_inference):
    its output is the training-mode one and PyG's semantics (fp32 tolerance) at Cora's size, before
    and after an optimizer step; the kernels it launches are the products (q, k, v one of them, with
    the skip where it is stacked: one product then), the attention and the skip, with kept weight
    splits (TESSERA_LINEAR_PREPARED) or without."""
    import tessera.nn._linear as linear_mod
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", fold)
    monkeypatch.setattr(transformer, "_ONE_OP", True)
    monkeypatch.setattr(transformer, "_SKIP_STACKED", True)
    monkeypatch.setattr(linear_mod, "_PREPARED", prepared)
    calls = one_op_calls(monkeypatch)
    n_src, n_dst, k_src = 2708, (2000 if bipartite else 2708), 64
    mod = TransformerConv((k_src, 48) if bipartite else k_src, 128 if fold == "1" else 32, heads=4, **kwargs).cuda()
    x = (torch.randn(n_src, k_src, device="cuda"), torch.randn(n_dst, 48, device="cuda")) if bipartite \
        else torch.randn(n_src, k_src, device="cuda")
    ei = random_edges(n_src, n_dst, 12000, "cuda")
    if full:
        ei = torch.cat([ei, torch.stack([torch.arange(n_dst, device="cuda") % n_src,
                                         torch.arange(n_dst, device="cuda")])], 1)

    def agree():
        return inference_is_training(mod, x, ei, 1e-5, 1e-4)
    agree()
    assert len(calls) == 1
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        mod(x, ei)
        torch.cuda.synchronize()
    kernels = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if prepared and torch.cuda.get_device_capability() == (9, 0):
        assert not any("split_weight" in k for k in kernels), kernels
    if fold == "0" and kwargs.get("concat", True) and kwargs.get("root_weight", True):
        assert len([k for k in kernels if "linear" in k and "split" not in k]) == 1, kernels  # the skip stacked
    optimizer_step(mod, agree())
    agree()


def test_float32_layers_match_within_float_tolerance(seed):
    x = torch.randn(80, 16)
    ei = random_edges(80, 80, 500)
    check_module(GATv2Conv(16, 8, heads=4), ref.gatv2_conv, x, ei, 1e-4)
    check_module(TransformerConv(16, 8, heads=4), ref.transformer_conv, x, ei, 1e-4)


@pytest.mark.parametrize("kind", ["gatv2", "transformer"])
def test_raw_op_gradcheck_in_double(seed, kind):
    g = tessera.Graph.from_edge_index(random_edges(9, 7, 25), num_nodes=7, num_src=9)
    H, C = 2, 3
    q = torch.randn(7, H * C, dtype=torch.float64, requires_grad=True)
    k = torch.randn(9, H * C, dtype=torch.float64, requires_grad=True)
    v = torch.randn(9, H * C, dtype=torch.float64, requires_grad=True) if kind == "transformer" else None
    att = torch.randn(H * C, dtype=torch.float64, requires_grad=True) if kind == "gatv2" else None
    t_rowptr, t_col, perm, _ = g.transpose()

    def f(q, k, v, att):
        return torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, att, H, kind, 0.2, 0.0, 0.0, 0, False, False,
                                           t_rowptr, t_col, perm, False, 0)[0]

    inputs = (q, k, v, att)
    assert torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the CUDA multi-query kernels run on the GPU machine"))])
def test_raw_op_shared_key_value_is_every_head_reading_one_slice(seed, device):
    """A key and value as wide as one head (multi-query attention): the same as the key and value
    repeated for every head, and their gradients are the heads' gradients summed; with attention
    weights, dropout determinism, and gradcheck in double on the CPU. GATv2 refuses it."""
    n_src, n_dst, H, C = 300, 200, 4, 32
    g = tessera.Graph.from_edge_index(random_edges(n_src, n_dst, 3000, device), num_nodes=n_dst, num_src=n_src)
    t_rowptr, t_col, perm, _ = g.transpose()
    dt = torch.float64 if device == "cpu" else torch.float32
    q = torch.randn(n_dst, H * C, dtype=dt, device=device, requires_grad=True)
    k = torch.randn(n_src, C, dtype=dt, device=device, requires_grad=True)
    v = torch.randn(n_src, C, dtype=dt, device=device, requires_grad=True)

    def f(q, k, v, dropout=0.0, seed=0):
        return torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, None, H, "transformer", 0.2, 0.0, dropout, seed,
                                           True, False, t_rowptr, t_col, perm, False, 0)

    out, lse, alpha = f(q, k, v)
    want, want_lse, want_alpha = f(q, k.repeat(1, H), v.repeat(1, H))
    tol = dict(rtol=1e-10, atol=1e-10) if dt == torch.float64 else dict(rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(out, want, **tol)
    torch.testing.assert_close(lse, want_lse, **tol)
    torch.testing.assert_close(alpha, want_alpha, **tol)
    gy = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), gy)
    ref_grads = torch.autograd.grad(want, (q, k, v), gy)
    for u, w in zip(got, ref_grads):
        torch.testing.assert_close(u, w, **tol)
    a, b = f(q, k, v, 0.3, 11)[0], f(q, k, v, 0.3, 11)[0]
    assert torch.equal(a, b)
    torch.testing.assert_close(a, f(q, k.repeat(1, H), v.repeat(1, H), 0.3, 11)[0], **tol)
    if device == "cpu":
        small = tessera.Graph.from_edge_index(random_edges(9, 7, 25), num_nodes=7, num_src=9)
        st = small.transpose()
        args = (torch.randn(7, 6, dtype=torch.float64, requires_grad=True),
                torch.randn(9, 3, dtype=torch.float64, requires_grad=True),
                torch.randn(9, 3, dtype=torch.float64, requires_grad=True))
        assert torch.autograd.gradcheck(
            lambda q, k, v: torch.ops.tessera.attention(small.rowptr, small.col, q, k, v, None, 2, "transformer", 0.2,
                                                        0.0, 0.0, 0, False, False, st[0], st[1], st[2], False, 0)[0],
            args, eps=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="kv_heads = 1"):
        torch.ops.tessera.attention(g.rowptr, g.col, q, k, None, torch.randn(H * C, dtype=dt, device=device), H,
                                    "gatv2", 0.2, 0.0, 0.0, 0, False, False)


@pytest.mark.parametrize("kind", ["gatv2", "transformer"])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the CUDA fused bias runs on the GPU machine"))])
def test_raw_op_bias_and_residual_are_added_to_every_row(seed, kind, device):
    """bias= adds [H*C] to every output row inside the op and residual= [N_dst, H*C] its own row to
    each (isolated targets get them alone); the bias's gradient is the column sums of the output's
    gradient, the residual's that gradient itself; gradcheck in double on the CPU. A strided
    residual (a column block, as the Transformer's one op passes it) is read in place."""
    g = tessera.Graph.from_edge_index(random_edges(9, 7, 25, device), num_nodes=7, num_src=9)
    H, C = 2, 3
    dt = torch.float64 if device == "cpu" else torch.float32
    q = torch.randn(7, H * C, dtype=dt, device=device, requires_grad=True)
    k = torch.randn(9, H * C, dtype=dt, device=device, requires_grad=True)
    v = torch.randn(9, H * C, dtype=dt, device=device, requires_grad=True) if kind == "transformer" else None
    att = torch.randn(H * C, dtype=dt, device=device, requires_grad=True) if kind == "gatv2" else None
    b = torch.randn(H * C, dtype=dt, device=device, requires_grad=True)
    r = torch.randn(7, 2 * H * C, dtype=dt, device=device)[:, H * C:].requires_grad_()  # strided rows
    t_rowptr, t_col, perm, _ = g.transpose()

    def f(q, k, v, att, b, r=None):
        return torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, att, H, kind, 0.2, 0.0, 0.0, 0, False, False,
                                           t_rowptr, t_col, perm, False, 0, None, None, b, r)[0]

    with_bias, with_both, plain = f(q, k, v, att, b), f(q, k, v, att, b, r), f(q, k, v, att, None)
    torch.testing.assert_close(with_bias, plain + b)
    torch.testing.assert_close(with_both, plain + b + r)
    gy = torch.randn_like(plain)
    grads = torch.autograd.grad(with_both, (q, k, b, r), gy)
    grads_plain = torch.autograd.grad(plain, (q, k), gy)
    torch.testing.assert_close(grads[0], grads_plain[0])
    torch.testing.assert_close(grads[1], grads_plain[1])
    torch.testing.assert_close(grads[2], gy.sum(0))
    torch.testing.assert_close(grads[3], gy)
    with torch.no_grad():  # the op's no-autograd path adds it too
        torch.testing.assert_close(f(q, k, v, att, None, r), plain + r)
    if device == "cpu":
        assert torch.autograd.gradcheck(f, (q, k, v, att, b, r), eps=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="bias must be"):
        f(q, k, v, att, b[:-1])
    with pytest.raises(RuntimeError, match="residual must be"):
        f(q, k, v, att, b, r[:-1])


@pytest.mark.parametrize("kind", ["gatv2", "transformer"])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the CUDA backward runs on the GPU machine"))])
@pytest.mark.parametrize("n,H,C,e", [(40, 2, 8, 160), (2708, 4, 64, 10556)])
def test_input_gradients_are_laid_out_like_the_inputs(seed, kind, device, n, H, C, e):
    """q, k (and v) as adjacent column blocks of one tensor (the projection node's output, in its
    order): their gradients are the same blocks of one new buffer, equal to the gradients of
    separate copies (same kernels, same order: bitwise); q and k one tensor, or blocks that are not
    adjacent or not of one tensor, get separate gradients. Also at Cora's size with 4 heads of 64
    (heavy rows, many items per warp), which the GATv2 layer's CUDA path runs this way."""
    g = tessera.Graph.from_edge_index(random_edges(n, n, e, device), num_nodes=n)
    t_rowptr, t_col, perm, _ = g.transpose()
    att = torch.randn(H * C, device=device) if kind == "gatv2" else None
    blocks = 2 if kind == "gatv2" else 3

    def attend(q, k, v):
        return torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, att, H, kind, 0.2, 0.0, 0.0, 0, False, False,
                                           t_rowptr, t_col, perm, False, 0)[0]
    gy = torch.randn(n, H * C, device=device)
    # The node's output holds q, k (, v) alone, or one more block after them (a residual or skip
    # projection of the same input): the gradients' buffer is as wide as q, k (, v) together.
    for extra in (0, 1):
        y = torch.randn(n, (blocks + extra) * H * C, device=device, requires_grad=True)
        parts = y.split(H * C, dim=1)
        k, q = parts[0], parts[1]  # GATv2's node order: lin_l (key) first, then lin_r (query)
        v = parts[2] if kind == "transformer" else None
        ins = [t for t in (q, k, v) if t is not None]
        got = torch.autograd.grad(attend(q, k, v), ins, gy)
        assert all(d.stride() == (blocks * H * C, 1) for d in got)
        assert got[1].data_ptr() - got[0].data_ptr() == -H * C * got[0].element_size()  # dk left of dq
        copies = [t.detach().clone().requires_grad_() for t in ins]
        want = torch.autograd.grad(attend(*copies, *([None] if kind == "gatv2" else [])), copies, gy)
        for a, b in zip(got, want):
            assert torch.equal(a, b)
    # q and k one tensor (GATv2 with shared weights): separate gradient buffers, summed by autograd
    # (one buffer for both would have each pass overwrite the other's rows). A block of the buffer
    # unused: separate, contiguous gradients.
    if kind == "gatv2":
        x = torch.randn(n, H * C, device=device, requires_grad=True)
        (dx,) = torch.autograd.grad(attend(x, x, None), (x,), gy)
        qc, kc = (x.detach().clone().requires_grad_() for _ in range(2))
        dq, dk = torch.autograd.grad(attend(qc, kc, None), (qc, kc), gy)
        torch.testing.assert_close(dx, dq + dk)
    else:
        q2, k2 = y[:, :H * C], y[:, H * C:2 * H * C]
        d = torch.autograd.grad(attend(q2, k2, y[:, :H * C].detach().clone().requires_grad_()), (q2, k2), gy)
        assert all(t.is_contiguous() for t in d)


@pytest.mark.parametrize("kind,dropout", [("gatv2", 0.0), ("transformer", 0.0), ("gatv2", 0.4), ("transformer", 0.4)])
def test_raw_op_gradcheck_with_edge_features(seed, kind, dropout):
    """Edge features through the fused CPU kernels: gradients of every input, edge_attr and
    edge_weight included, with a fixed dropout mask (seed passed to the op)."""
    g = tessera.Graph.from_edge_index(random_edges(9, 7, 25), num_nodes=7, num_src=9)
    H, C, D = 2, 3, 2
    q = torch.randn(7, H * C, dtype=torch.float64, requires_grad=True)
    k = torch.randn(9, H * C, dtype=torch.float64, requires_grad=True)
    v = torch.randn(9, H * C, dtype=torch.float64, requires_grad=True) if kind == "transformer" else None
    att = torch.randn(H * C, dtype=torch.float64, requires_grad=True) if kind == "gatv2" else None
    ea = torch.randn(g.nnz, D, dtype=torch.float64, requires_grad=True)
    ew = torch.randn(H * C, D, dtype=torch.float64, requires_grad=True)
    t_rowptr, t_col, perm, _ = g.transpose()

    def f(q, k, v, att, ea, ew):
        return torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, att, H, kind, 0.2, 0.0, dropout, 1234, False,
                                           False, t_rowptr, t_col, perm, False, 0, ea, ew)[0]

    assert torch.autograd.gradcheck(f, (q, k, v, att, ea, ew), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("cls,oracle", [(GATv2Conv, ref.gatv2_conv_edge), (TransformerConv, ref.transformer_conv_edge)])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the CUDA fused edge path runs on the GPU machine"))])
def test_edge_features_run_fused(seed, device, cls, oracle):
    """Edge features go through the fused kernels on every device (the op is watched: a layer that
    built lin_edge(edge_attr) itself would not call it with edge_attr); outputs, attention weights,
    and the x, edge_attr and parameter gradients match the plain-torch oracle in double."""
    n = 40
    mod = cls(6, 5, heads=3, edge_dim=4).double().to(device)
    x = torch.randn(n, 6, dtype=torch.float64, device=device, requires_grad=True)
    ei = random_edges(n, n, 200, device)
    ea = torch.randn(ei.size(1), 4, dtype=torch.float64, device=device, requires_grad=True)
    import tessera.nn.gatv2 as gat_mod
    calls, real_ops = [], gat_mod._ops

    class Watch:  # torch.ops.tessera, recording whether each attention call carries edge_attr
        def __getattr__(self, name):
            return getattr(real_ops, name)

        def attention(self, *args):
            calls.append(args[19] is not None)  # edge_attr, the schema's 20th argument
            return real_ops.attention(*args)

    gat_mod._ops = Watch()
    try:
        out, (ei_used, alpha) = mod(x, ei, ea, return_attention_weights=True)
    finally:
        gat_mod._ops = real_ops
    assert calls == [True], "the fused op must run once, with the edge features"
    w = torch.randn_like(out)
    g = grads(mod, out, w)
    gx, gea = x.grad.clone(), ea.grad.clone()
    x.grad = ea.grad = None
    out_ref, ei_ref, alpha_ref = oracle(mod, x, ei, ea)
    g_ref = grads(mod, out_ref, w)
    assert torch.equal(ei_used, ei_ref)
    for got, want in ((out, out_ref), (alpha, alpha_ref), (gx, x.grad), (gea, ea.grad)):
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
    assert g.keys() == g_ref.keys()
    for name in g:
        torch.testing.assert_close(g[name], g_ref[name], rtol=1e-9, atol=1e-9, msg=lambda m: f"grad of {name}: {m}")


@pytest.mark.parametrize("cls,kwargs", [(GATv2Conv, {}), (GATv2Conv, {"residual": True, "concat": False}),
                                        (TransformerConv, {}), (TransformerConv, {"beta": True})])
def test_inference_matches_training_mode_output(seed, cls, kwargs):
    """The layers add bias / residual / root weight into their fresh output in place, with and
    without autograd (the op's backward does not keep its output): the same values either way,
    and the parameters untouched. The gradients through those in-place adds are checked against
    the oracles above."""
    mod = cls(8, 4, heads=3, **kwargs)
    x, ei = torch.randn(30, 8), random_edges(30, 30, 120)
    params = {n: p.detach().clone() for n, p in mod.named_parameters()}
    out_grad = mod(x, ei)
    assert out_grad.requires_grad
    with torch.no_grad():
        out_inf = mod(x, ei)
    torch.testing.assert_close(out_inf, out_grad.detach(), rtol=0, atol=0)
    for n, p in mod.named_parameters():
        assert torch.equal(p, params[n]), n


@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
def test_dropout_is_reproducible_and_only_in_training(seed, cls):
    mod = cls(8, 4, heads=2, dropout=0.5)
    x = torch.randn(40, 8)
    ei = random_edges(40, 40, 200)
    torch.manual_seed(seed)
    a = mod(x, ei)
    torch.manual_seed(seed)
    b = mod(x, ei)
    assert torch.equal(a, b)
    c = mod(x, ei)
    assert not torch.equal(a, c)
    mod.eval()
    assert torch.equal(mod(x, ei), mod(x, ei))
    # backward runs and reproduces the forward's mask (gradients finite and deterministic)
    mod.train()
    torch.manual_seed(seed)
    g1 = torch.autograd.grad(mod(x, ei).sum(), list(mod.parameters()))
    torch.manual_seed(seed)
    g2 = torch.autograd.grad(mod(x, ei).sum(), list(mod.parameters()))
    for u, w in zip(g1, g2):
        assert torch.equal(u, w) and torch.isfinite(u).all()


def test_state_dict_layout_is_pygs():
    assert set(GATv2Conv(5, 3, heads=2, residual=True).state_dict()) == {
        "lin_l.weight", "lin_l.bias", "lin_r.weight", "lin_r.bias", "att", "res.weight", "bias"}
    assert GATv2Conv(5, 3, heads=2).att.shape == (1, 2, 3)
    assert set(TransformerConv(5, 3, heads=2, beta=True).state_dict()) == {
        "lin_key.weight", "lin_key.bias", "lin_query.weight", "lin_query.bias", "lin_value.weight",
        "lin_value.bias", "lin_skip.weight", "lin_skip.bias", "lin_beta.weight"}


def check_module_edge(mod, oracle, x, ei, ea, tol):
    """Outputs, attention weights and the gradients of every parameter and of edge_attr."""
    ea = ea.detach().clone().requires_grad_()
    out, (ei_used, alpha) = mod(x, ei, ea, return_attention_weights=True)
    w = torch.randn_like(out)
    g = grads(mod, out, w)
    g["edge_attr"], ea.grad = ea.grad, None
    out_ref, ei_ref, alpha_ref = oracle(mod, x, ei, ea)
    g_ref = grads(mod, out_ref, w)
    g_ref["edge_attr"] = ea.grad
    torch.testing.assert_close(out, out_ref, rtol=tol, atol=tol)
    assert torch.equal(ei_used, ei_ref)
    torch.testing.assert_close(alpha, alpha_ref, rtol=tol, atol=tol)
    assert g.keys() == g_ref.keys() and "lin_edge.weight" in g
    for n in g:
        torch.testing.assert_close(g[n], g_ref[n], rtol=tol, atol=tol, msg=lambda m: f"grad of {n}: {m}")


@pytest.mark.parametrize("heads,channels,concat,edge_dim", [(1, 8, True, 1), (3, 5, False, 4), (2, 7, True, 3)])
def test_gatv2_edge_features_match_pyg_semantics(seed, heads, channels, concat, edge_dim):
    n = 50
    mod = GATv2Conv(12, channels, heads=heads, concat=concat, edge_dim=edge_dim).double()
    x = torch.randn(n, 12, dtype=torch.float64)
    ei = random_edges(n, n, 250)
    ea = torch.randn(ei.size(1), edge_dim, dtype=torch.float64)
    check_module_edge(mod, ref.gatv2_conv_edge, x, ei, ea.view(-1) if edge_dim == 1 else ea, 1e-9)
    assert set(mod.state_dict()) == {"lin_l.weight", "lin_l.bias", "lin_r.weight", "lin_r.bias", "att",
                                     "lin_edge.weight", "bias"}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_gatv2_mean_fill_of_16_bit_features_is_accumulated_in_float(seed, dtype):
    # A node with 4096 in-edges of features near 1: summed in the features' own type the running
    # sum stops growing near 2048 (f16) or 256 (bf16) and the mean comes out far too small.
    n, hub = 30, 7
    targets = torch.cat([torch.full((4096,), hub), torch.randint(0, n, (500,))])
    ea = (1 + 0.1 * torch.rand(targets.numel(), 3, dtype=torch.float64))
    exact = torch.zeros(n, 3, dtype=torch.float64).index_add_(0, targets, ea) / \
        torch.bincount(targets, minlength=n).clamp(min=1).unsqueeze(1).double()
    fill = self_loop_edge_attr(ea.to(dtype), targets, n, "mean")
    assert fill.dtype == dtype
    torch.testing.assert_close(fill.double(), exact.to(dtype).double(), rtol=0, atol=0.01)


def test_gatv2_fill_ignores_edges_without_a_loop():
    # Edges aimed at the spill row num_nodes (removed self-loops, and targets without a loop in a
    # bipartite graph) take no part in any loop's features.
    ea = torch.tensor([[1.0], [3.0], [100.0], [200.0], [5.0]], dtype=torch.float64)
    targets = torch.tensor([0, 0, 2, 2, 1])
    for fill, want in (("mean", [2.0, 5.0]), ("add", [4.0, 5.0]), ("max", [3.0, 5.0])):
        got = self_loop_edge_attr(ea, targets, 2, fill)
        torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float64).unsqueeze(1), msg=fill)


def test_gatv2_bipartite_edge_features_align_with_their_edges(seed):
    # More targets than sources: loops only for the first n_src nodes; every CSR entry must carry
    # its own edge's features (checked through the attention weights against edge-order logits).
    n_src, n_dst = 20, 35
    mod = GATv2Conv((6, 5), 4, heads=2, edge_dim=3).double()
    x = (torch.randn(n_src, 6, dtype=torch.float64), torch.randn(n_dst, 5, dtype=torch.float64))
    ei = random_edges(n_src, n_dst, 120)
    ea = torch.randn(ei.size(1), 3, dtype=torch.float64)
    out, (ei_used, alpha) = mod(x, ei, ea, return_attention_weights=True)
    keep = ei[0] != ei[1]
    loops = torch.arange(n_src)
    assert torch.equal(ei_used, torch.cat([ei[:, keep], torch.stack([loops, loops])], 1))
    kept = ea[keep]
    mean = self_loop_edge_attr(kept, ei[1][keep].clamp(max=n_src), n_src, "mean")
    ea_used = torch.cat([kept, mean])
    x_l, x_r = mod.lin_l(x[0]), mod.lin_r(x[1])
    e = torch.nn.functional.leaky_relu(x_l[ei_used[0]] + x_r[ei_used[1]] + mod.lin_edge(ea_used), mod.negative_slope)
    logits = (e.view(-1, 2, 4) * mod.att).sum(-1)
    want = torch.exp(logits - torch.zeros(n_dst, 2, dtype=torch.float64).index_reduce_(
        0, ei_used[1], logits, "amax", include_self=False)[ei_used[1]])
    want = want / torch.zeros(n_dst, 2, dtype=torch.float64).index_add_(0, ei_used[1], want)[ei_used[1]]
    torch.testing.assert_close(alpha, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_attention_graph_select_gathers_rows_and_scatters_their_gradient(seed, index_dtype):
    table = torch.randn(40, 3, dtype=torch.float64, requires_grad=True)
    source = torch.cat([torch.randint(0, 40, (60,)), torch.tensor([7, 7, 7, 39, 0])]).to(index_dtype)
    g = AttentionGraph(torch.tensor([0], dtype=index_dtype), torch.empty(0, dtype=index_dtype), 40)
    got = g.select(table, source)
    torch.testing.assert_close(got, table.detach()[source.long()], rtol=0, atol=0)
    w = torch.randn_like(got)
    (dt,) = torch.autograd.grad((got * w).sum(), table)
    torch.testing.assert_close(dt, torch.zeros(40, 3, dtype=torch.float64).index_add_(0, source.long(), w))


@pytest.mark.parametrize("form", ["int32", "sorted by target"])
@pytest.mark.parametrize("cls,oracle", [(GATv2Conv, ref.gatv2_conv_edge), (TransformerConv, ref.transformer_conv_edge)])
def test_edge_features_of_other_edge_index_forms(seed, cls, oracle, form):
    n = 50
    mod = cls(12, 5, heads=2, edge_dim=3).double()
    x = torch.randn(n, 12, dtype=torch.float64)
    ei = random_edges(n, n, 250)
    if form == "sorted by target":
        ei = ei[:, torch.argsort(ei[1] * n + ei[0])]  # ties by source
    ea = torch.randn(ei.size(1), 3, dtype=torch.float64)
    if form == "int32":  # the layer takes it; the oracle indexes with int64
        torch.testing.assert_close(mod(x, ei.int(), ea), oracle(mod, x, ei, ea)[0], rtol=1e-9, atol=1e-9)
        return
    check_module_edge(mod, oracle, x, ei, ea, 1e-9)
    if cls is TransformerConv:  # GATv2's own graph holds the added self-loops, so it still permutes
        assert mod._graph_cache._graph.perm is None


@pytest.mark.parametrize("heads,channels,concat,beta", [(1, 8, True, False), (3, 5, False, True), (2, 7, True, True)])
def test_transformer_edge_features_match_pyg_semantics(seed, heads, channels, concat, beta):
    n = 50
    mod = TransformerConv(12, channels, heads=heads, concat=concat, beta=beta, edge_dim=3).double()
    x = torch.randn(n, 12, dtype=torch.float64)
    ei = random_edges(n, n, 250)
    ea = torch.randn(ei.size(1), 3, dtype=torch.float64)
    check_module_edge(mod, ref.transformer_conv_edge, x, ei, ea, 1e-9)


def test_edge_feature_misuse_raises():
    x, ei = torch.randn(5, 4), torch.tensor([[0, 1], [1, 2]])
    with pytest.raises(ValueError):
        GATv2Conv(4, 4)(x, ei, torch.randn(2, 3))
    with pytest.raises(ValueError):
        TransformerConv(4, 4, edge_dim=3)(x, ei)
    with pytest.raises(ValueError):
        TransformerConv(4, 4, edge_dim=3)(x, ei, torch.randn(5, 3))


@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
def test_constructor_arguments_are_checked(cls):
    name = cls.__name__
    conv = cls((3, 5), 4, heads=2, aggr="add", node_dim=0)  # PyG's MessagePassing keywords: accepted
    assert conv((torch.randn(6, 3), torch.randn(6, 5)), torch.tensor([[0, 1], [1, 2]])).shape == (6, 8)
    with pytest.raises(NotImplementedError, match=f"tessera {name}: unsupported arguments \\['flow'\\]"):
        cls(4, 4, flow="target_to_source")
    for bad in (-1, (4, -1), (0, 4)):
        with pytest.raises(ValueError, match=f"tessera {name} needs positive in_channels"):
            cls(bad, 4)


@pytest.mark.parametrize("cls_name,edge_dim,fold", [("GATv2Conv", None, ""), ("TransformerConv", None, ""),
                                                    ("GATv2Conv", 3, ""), ("TransformerConv", 3, ""),
                                                    ("TransformerConv", None, "1")])
def test_against_pyg_when_installed(seed, cls_name, edge_dim, fold, monkeypatch):
    pyg = pytest.importorskip("torch_geometric.nn")
    import tessera.nn.transformer as transformer
    monkeypatch.setattr(transformer, "_FOLD", fold)  # "1": the folded TransformerConv, on the GPU too
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ours = getattr(tessera.nn, cls_name)(16, 8, heads=4, edge_dim=edge_dim).to(device)
    theirs = getattr(pyg, cls_name)(16, 8, heads=4, edge_dim=edge_dim).to(device)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(200, 16, device=device)
    ei = random_edges(200, 200, 2000, device)
    ea = torch.randn(ei.size(1), edge_dim, device=device) if edge_dim else None
    a, b = ours(x, ei, ea), theirs(x, ei, ea)
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    w = torch.randn_like(a)
    pa, pb = dict(ours.named_parameters()), dict(theirs.named_parameters())
    names = sorted(set(pa) & set(pb))
    ga = torch.autograd.grad((a * w).sum(), [pa[n] for n in names])
    gb = torch.autograd.grad((b * w).sum(), [pb[n] for n in names])
    for n, u, v in zip(names, ga, gb):
        torch.testing.assert_close(u, v, rtol=1e-3, atol=1e-4, msg=lambda m: f"grad of {n}: {m}")


@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the layers' CUDA path runs on the GPU machine"))])
def test_layer_gradients_at_cora_size_match_double(seed, cls, device):
    """The whole layer's output and every gradient (x and each parameter) in fp32 against the same
    layer in float64 on the CPU, at Cora's size with 4 heads of 64 over 128 input features and a
    400-entry hub: on CUDA the projections, the attention and their backward run as one node each
    (column blocks of one buffer), which the other tests' small graphs do not reach. Errors
    relative to each tensor's largest entry.
    GATv2's gradient is not continuous: LeakyReLU's slope jumps at z = x_r[i] + x_l[j] = 0, so an
    (entry, channel) whose z lies within rounding of 0 takes the other slope in one precision, and
    moves one channel of the parameter gradients and the two nodes' rows of dx by O(1) (on the
    development machine's CPU, fp32 against float64 at this size: 3 of 8 seeds, up to 2e-2 on
    lin_r.weight; bench/results/gpu_20261206f). So for GATv2 at most 2% of each gradient's entries
    may be off, where a wrong row, tile or layout moves them all; the Transformer's is smooth, so
    all of it within 1e-4."""
    n, K, H, C = 2708, 128, 4, 64
    hub = torch.randint(0, n, (400,), device=device)  # a node of 400 in-edges and one of 400 out-edges
    ei = torch.cat([random_edges(n, n, 10556, device), torch.stack([hub, torch.zeros_like(hub)]),
                    torch.stack([torch.ones_like(hub), hub])], 1)
    mod = cls(K, C, heads=H).to(device)
    ref64 = cls(K, C, heads=H).double()
    ref64.load_state_dict({k: v.double().cpu() for k, v in mod.state_dict().items()})
    x = torch.randn(n, K, device=device)
    gy = torch.randn(n, H * C, device=device)
    got, want = {}, {}
    for m, xi, store in ((mod, x.clone().requires_grad_(), got),
                         (ref64, x.double().cpu().requires_grad_(), want)):
        out = m(xi, ei.cpu() if m is ref64 else ei)
        out.backward(gy.double().cpu() if m is ref64 else gy)
        store["out"], store["x"] = out.detach(), xi.grad
        store.update({k: p.grad for k, p in m.named_parameters() if p.grad is not None})
    assert got.keys() == want.keys()
    for k in want:
        if k == "lin_key.bias":  # exactly zero (the softmax cancels q_i . b_k): both sides' rounding noise
            continue
        err = (got[k].double().cpu() - want[k]).abs() / want[k].abs().max().clamp_min(1e-30)
        if cls is GATv2Conv and k != "out":
            off = (err > 1e-4).double().mean().item()
            assert off <= 0.02, f"GATv2Conv on {device}: {off:.1%} of {k} is more than 1e-4 off the float64 layer"
        else:
            assert err.max().item() < 1e-4, \
                f"{cls.__name__} on {device}: {k} is {err.max().item():.1e} off the float64 layer (of its largest entry)"


@pytest.mark.parametrize("cls,oracle", [(GATv2Conv, ref.gatv2_conv), (TransformerConv, ref.transformer_conv)])
def test_graph_cache_follows_in_place_edits_and_sizes(seed, cls, oracle):
    n = 40
    mod = cls(6, 4, heads=2).double()
    x = torch.randn(n, 6, dtype=torch.float64)
    ei = random_edges(n, n, 150)
    torch.testing.assert_close(mod(x, ei), oracle(mod, x, ei)[0], rtol=1e-9, atol=1e-9)
    ei[0, :20] = torch.randint(0, n, (20,))  # same tensor, new contents: the cached CSR is stale
    torch.testing.assert_close(mod(x, ei), oracle(mod, x, ei)[0], rtol=1e-9, atol=1e-9)
    x2 = torch.randn(n + 7, 6, dtype=torch.float64)  # more nodes, same edges
    torch.testing.assert_close(mod(x2, ei), oracle(mod, x2, ei)[0], rtol=1e-9, atol=1e-9)


def test_gatv2_on_a_tessera_graph_builds_its_looped_graph_once(seed):
    n = 40
    mod = GATv2Conv(6, 4, heads=2).double()
    x = torch.randn(n, 6, dtype=torch.float64)
    ei = random_edges(n, n, 150)
    g = tessera.Graph.from_edge_index(ei, num_nodes=n)
    rows = torch.repeat_interleave(torch.arange(n), g.rowptr[1:] - g.rowptr[:-1])
    ei_csr = torch.stack([g.col.long(), rows])  # the graph's edges, as the oracle takes them
    torch.testing.assert_close(mod(x, g), ref.gatv2_conv(mod, x, ei_csr)[0], rtol=1e-9, atol=1e-9)
    looped = mod._graph_cache._graph
    mod(x, g)
    assert mod._graph_cache._graph is looped, "the same tessera.Graph rebuilt its looped CSR"
    g2 = g.with_values(None)  # a new identity: a new build
    torch.testing.assert_close(mod(x, g2), ref.gatv2_conv(mod, x, ei_csr)[0], rtol=1e-9, atol=1e-9)
    assert mod._graph_cache._graph is not looped


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the WSB tensor-core variant runs on the GPU machine")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_transformer_half_on_wsb_tensor_cores_matches_oracle(seed, dtype, monkeypatch):
    """TransformerConv in half precision with its forward forced onto cuda.wsb (training mode,
    dropout 0, so the CSR backward runs from its lse) against the double oracle and against the
    same layer on cuda.fused."""
    n = 300
    mod = TransformerConv(32, 32, heads=2).cuda()
    x = torch.randn(n, 32, device="cuda")
    ei = random_edges(n, n, 4000, "cuda")  # duplicates: the multiplicity path
    out_ref, _, _ = ref.transformer_conv(mod.double(), x.double(), ei)
    w = torch.randn_like(out_ref)
    g_ref = grads(mod, out_ref, w)
    mod = mod.to(dtype)
    xh = x.to(dtype)
    results = {}
    for variant in ("cuda.fused", "cuda.wsb"):
        monkeypatch.setenv("TESSERA_VARIANT_ATTENTION", variant)
        out = mod(xh, ei)
        results[variant] = (out.double(), {k: v.double() for k, v in grads(mod, out, w.to(dtype)).items()})
    tol = 2e-2 if dtype == torch.float16 else 8e-2
    for variant, (out, g) in results.items():
        torch.testing.assert_close(out, out_ref, rtol=tol, atol=tol, msg=lambda m: f"{variant} out: {m}")
        for k in g_ref:
            # lin_key.bias adds q_i . b to every logit of row i, which the softmax ignores: its exact
            # gradient is zero and the half-precision one rounding noise, so it is measured against
            # the scale of the key weights' gradient.
            scale = g_ref["lin_key.weight" if k == "lin_key.bias" else k].abs().max().item()
            err = (g[k] - g_ref[k]).abs().max().item() / scale
            assert err < tol, f"{variant} grad of {k}: max error {err:.3g} of its largest entry"
    monkeypatch.setenv("TESSERA_VARIANT_ATTENTION", "cuda.wsb")
    with pytest.raises(RuntimeError, match="cuda.wsb"):
        TransformerConv(32, 32, heads=2, dropout=0.5).cuda().to(dtype).train()(xh, ei)  # dropout: refused


def sparse_entries(adj):
    """(targets, sources, values) of a COO or CSR tensor, in storage order."""
    if adj.layout == torch.sparse_coo:
        rows, cols = adj.indices()
        return rows, cols, adj.values()
    crow = adj.crow_indices()
    rows = torch.repeat_interleave(torch.arange(crow.numel() - 1), crow[1:] - crow[:-1])
    return rows, adj.col_indices(), adj.values()


@pytest.mark.parametrize("layout", ["coo", "csr", "SparseTensor"])
@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
def test_sparse_adjacency_is_its_distinct_edges(seed, cls, layout):
    """PyG's layers take adj_t in place of edge_index: the same output and gradients as the distinct
    edges given as edge_index (a sparse tensor holds each edge once), bipartite included; with
    a torch.sparse adj_t the attention weights come back as a sparse tensor of adj_t's layout."""
    n_src, n_dst = 30, 20
    mod = cls((6, 9), 4, heads=2).double()
    x = (torch.randn(n_src, 6, dtype=torch.float64), torch.randn(n_dst, 9, dtype=torch.float64))
    coo = sparse_adjacency(random_edges(n_src, n_dst, 100), n_src, n_dst, "coo")
    adj = coo if layout == "coo" else coo.to_sparse_csr()
    distinct = coo.indices().flip(0)  # [sources; targets]
    given = SparseTensorStandIn(adj) if layout == "SparseTensor" else adj
    out = mod(x, given)
    w = torch.randn_like(out)
    g = grads(mod, out, w)
    out_ref = mod(x, distinct)
    g_ref = grads(mod, out_ref, w)
    torch.testing.assert_close(out, out_ref, rtol=1e-12, atol=1e-12)
    for n in g_ref:
        torch.testing.assert_close(g[n], g_ref[n], rtol=1e-12, atol=1e-12, msg=lambda m: f"grad of {n}: {m}")
    if layout == "SparseTensor":
        with pytest.raises(NotImplementedError, match="SparseTensor"):
            mod(x, given, return_attention_weights=True)
        return
    _, (adj_alpha, alpha) = mod(x, adj, return_attention_weights=True)
    _, (ei_ref, alpha_ref) = mod(x, distinct, return_attention_weights=True)
    if cls is TransformerConv:  # PyG 2.8: adj_t itself, alpha in its entry order
        assert adj_alpha is adj
        rows, cols, _ = sparse_entries(adj)
        torch.testing.assert_close(alpha, alpha_ref, rtol=1e-12, atol=1e-12)  # distinct is in that order too
        assert torch.equal(torch.stack([cols, rows]), ei_ref)
        return
    assert adj_alpha.layout == adj.layout and adj_alpha.shape == (n_dst, n_src, 2)
    rows, cols, values = sparse_entries(adj_alpha)
    assert torch.equal(values, alpha) and rows.numel() == ei_ref.size(1)
    key = rows * n_src + cols
    assert bool((key[1:] > key[:-1]).all()), "entries sorted by (target, source), each once"
    dense = torch.zeros(n_dst, n_src, 2, dtype=torch.float64)
    dense[ei_ref[1], ei_ref[0]] = alpha_ref
    torch.testing.assert_close(values, dense[rows, cols], rtol=1e-12, atol=1e-12)


def test_sparse_adjacency_misuse_raises():
    x = torch.randn(6, 4)
    ei = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    adj = sparse_adjacency(ei, 6, 6, "coo").float()
    for cls in (GATv2Conv, TransformerConv):
        with pytest.raises(ValueError, match="adjacency is 5 x 5"):
            cls(4, 3)(x, sparse_adjacency(ei, 5, 5, "coo").float())
        with pytest.raises(NotImplementedError, match="sparse_csc"):
            cls(4, 3)(x, adj.to_sparse_csc())
        with pytest.raises(NotImplementedError, match="edge_attr with a sparse adjacency"):
            cls(4, 3, edge_dim=2)(x, adj, torch.randn(4, 2))


@pytest.mark.parametrize("cls_name", ["GATv2Conv", "TransformerConv"])
def test_sparse_adjacency_against_pyg_when_installed(seed, cls_name):
    pyg = pytest.importorskip("torch_geometric.nn")
    from torch_geometric.utils import to_torch_csc_tensor
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ours = getattr(tessera.nn, cls_name)(16, 8, heads=4).to(device)
    theirs = getattr(pyg, cls_name)(16, 8, heads=4).to(device)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(200, 16, device=device)
    ei = random_edges(200, 200, 2000, device)
    adj_t = to_torch_csc_tensor(torch.unique(ei, dim=1), size=(200, 200)).t()
    (a, (adj_a, alpha_a)), (b, (adj_b, alpha_b)) = (m(x, adj_t, return_attention_weights=True) for m in (ours, theirs))
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    if cls_name == "TransformerConv":  # PyG 2.8: adj_t itself, alpha in its entry order
        assert adj_a is adj_t and adj_b is adj_t
        torch.testing.assert_close(alpha_a, alpha_b, rtol=1e-4, atol=1e-5)
        return
    ea, eb = sparse_entries(adj_a.cpu()), sparse_entries(adj_b.cpu())
    order_a, order_b = (torch.argsort(r * 200 + c) for r, c, _ in (ea, eb))
    for u, v in zip(ea, eb):
        torch.testing.assert_close(u[order_a], v[order_b], rtol=1e-4, atol=1e-5)
