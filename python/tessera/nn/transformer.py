"""tessera.nn.TransformerConv: a drop-in for torch_geometric.nn.TransformerConv (PyG 2.x) on
tessera's fused attention (no per-edge tensors unless attention weights are requested).

Same constructor (in_channels, out_channels, heads, concat, beta, dropout, edge_dim, bias,
root_weight), parameters and state_dict layout (``lin_key``, ``lin_query``, ``lin_value``,
``lin_skip``, ``lin_beta``), same forward: q = lin_query(x_dst), k = lin_key(x_src),
v = lin_value(x_src); alpha = softmax(<q_i, k_j> / sqrt(C)) over the in-edges of i (no self-loops
added); dropout on alpha; out_i = sum_j alpha_ij v_j; concat or mean; root_weight adds
lin_skip(x_dst), gated by beta = sigmoid(lin_beta([out, x_r, out - x_r])) when beta=True.
Attention weights (return_attention_weights) are returned before dropout, as PyG does.

Folded form (TransformerConv._folded_attention): without edge features, and not with dropout in
training, the layer can make no q, k or v at all. Every head attends over x_src itself (one
multi-query call) with the query (W_k,h^T W_q,h) x_dst + W_k,h^T b_q,h and applies W_v,h after the
aggregation. That is less work wherever the head width C is at least the input width K; where it
runs unforced is measured per device (FOLD_CPU_EQUAL_MIN_ENTRIES, FOLD_CUDA_MIN_ENTRIES).

Without autograd, on CUDA fp32 (TransformerConv._one_op), the forward is one op,
tessera.transformer_inference: the products, the attention and the skip chained in C++ from weights
kept while the parameters are unchanged, so a small graph's forward is not the layer's Python
(TESSERA_TRANSFORMER_ONE_OP=0 keeps the Python path).

Edge features (``edge_dim``/``edge_attr``): e = lin_edge(edge_attr) (no bias) is added to k_j and
v_j as PyG does. The fused kernels (CPU and CUDA) project each edge's features where they use them:
no E x H x C tensor, in forward or backward.

edge_index may also be a tessera.Graph or, as in PyG, a sparse adjacency adj_t (rows = targets):
torch.sparse COO or CSR, or torch_sparse.SparseTensor; with a torch.sparse adj_t the attention
weights come back as PyG 2.8 returns them: (adj_t itself, alpha [nnz, H] in its CSR entry order).

Not supported (raises): lazy in_channels (-1); edge_attr with a sparse adjacency;
return_attention_weights with a torch_sparse.SparseTensor.
"""
import math
import os
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from .._memo import TensorMemo, tensor_signature
from ..graph import Graph, GraphCache, is_sparse_adjacency
from ._compile import eager_under_compile
from ._linear import (PreparedWeights, _parameters_of, _plain, _stack, _tensor_cores, add_to_fresh, heads_product,
                      linear, linear_add, product, project, weight_split)
from ._inputs import autocast_on, edge_features, layer_inputs, node_feature_pair
from .gatv2 import (AttentionGraph, _pyg_linear, _reset_linear, check_sparse_attention_request, fused_attention,
                    sparse_adjacency_graph)


# TESSERA_TRANSFORMER_FOLD=1 / 0 forces the folded form on or off (TransformerConv._folds).
_FOLD = os.environ.get("TESSERA_TRANSFORMER_FOLD", "")
# Where the folded form runs unforced (TransformerConv._folds), from bench/transformer_fold_bench.py,
# folded against unfolded in one run (bench/results/transformer_fold_mq_*):
# - CPU (development machine, 2 cores): at C > K the forward+backward won on every graph measured
#   (980 entries 1.02-1.08x, 10828 1.50-2.23x, 88714 1.12-1.51x over five runs, R-MAT 2^16 at K = 128
#   2x256 1.31x), the forward too (1.19-1.55x) but on the 88714-entry graph (0.83-1.23x); at C = K on
#   R-MAT 2^16 (955K entries; K = 64 and 128: 1.26-1.37x, 1.16-1.34x) but not on the small graphs
#   (10828 entries at K = 32: forward+backward 0.45-0.86x), hence FOLD_CPU_EQUAL_MIN_ENTRIES.
# - CUDA (H100): at C >= K on the 2^20-node graphs and the clustered one (4.2M-16M entries; 2x256
#   1.77-2.74x forward, 1.61-1.95x forward+backward; 8x128 1.32-1.61x, 1.13-1.19x); on PubMed (88648
#   entries) the forward gained 6-12% and forward+backward lost 12-16%, on Cora both lost (the folded
#   operators' host-side setup), hence FOLD_CUDA_MIN_ENTRIES. At C < K it lost everywhere.
# - CUDA without autograd (torch.no_grad, inference): only the forward counts. On PubMed (88648
#   entries) the folded forward took 0.80 and 0.90x the unfolded one's time at 8x128 (two runs),
#   0.81, 1.03 and 1.16x at 2x256 (three runs); on Cora (10556) 1.22x and 1.03x (H100,
#   bench/results/h100_20261206, h100_20261206b), hence FOLD_CUDA_INFERENCE_MIN_ENTRIES: from
#   PubMed's size up the fold is faster or level on the whole, and it holds no q, k or v. With the
#   one op (both forms one C++ op) Cora is level: 8x128 0.10-0.12 against 0.11-0.13 ms, 2x256
#   0.08-0.10 against 0.08-0.09 (H100, bench/results/gpu_20261207g: at 2708 rows every kernel is
#   latency-bound, and the fold's third launch costs what its smaller product and gathers save). At C < K it
#   lost without autograd too (4x64 on a 128-wide input, forced on against off, two runs each: grid
#   5.46-5.49 against 4.77-4.83 ms, PubMed 0.25 against 0.17-0.25, Cora 0.12 against 0.09-0.15; H100,
#   bench/results/gpu_20261207b). Its heads product has no one-launch kernel at C = 64: linear_heads
#   then runs one product per head, each splitting its weight (PubMed: 12 kernels, 191 us of GPU
#   time). Its attention does 1024 multiply-adds an entry against 512.
# TESSERA_TRANSFORMER_FOLD_MEMO=0 recomputes the folded operators on every call (_folded_operators).
_FOLD_MEMO = os.environ.get("TESSERA_TRANSFORMER_FOLD_MEMO", "1") != "0"
FOLD_CPU_EQUAL_MIN_ENTRIES = 2 ** 18
FOLD_CUDA_MIN_ENTRIES = 2 ** 20
FOLD_CUDA_INFERENCE_MIN_ENTRIES = 2 ** 16
_ops = torch.ops.tessera
# TESSERA_TRANSFORMER_ONE_OP=0 keeps calls without autograd on the Python path (TransformerConv._one_op).
_ONE_OP = os.environ.get("TESSERA_TRANSFORMER_ONE_OP", "1") != "0"
# TESSERA_TRANSFORMER_SKIP_STACKED=0 keeps the one op's unfolded skip a second product
# (TransformerConv._skip_stacked; for A/B measurements).
_SKIP_STACKED = os.environ.get("TESSERA_TRANSFORMER_SKIP_STACKED", "1") != "0"
# TESSERA_TRANSFORMER_REPEAT=0 makes every call take the whole forward (_RepeatCall; for A/B measurements).
_REPEAT = os.environ.get("TESSERA_TRANSFORMER_REPEAT", "1") != "0"
_LINEARS = ("lin_query", "lin_key", "lin_value", "lin_skip")


class _RepeatCall:
    """The one op's arguments besides x from the layer's last call that ran as one op
    (TransformerConv._inference), with everything that call's checks and choices read, so that a
    call reading the same passes the same arguments without the forward's Python: the same
    edge_index tensor unmodified (version and storage, as GraphCache keys it), x a tensor of the
    same shape, dtype and device, grad mode off, the tensor-core test still true (TF32 not allowed
    since), the same Linears, plain (no hooks) and with the same parameters unmodified (as the
    kept weights' memo keys them), no beta gate, the same training flag, dropout, heads, concat and
    root weight, and the module switches as they were. That Python (the input checks, the graph
    cache, the fold rule, _one_op and the kept weights' memo) is what an inference loop over one
    graph repeats with nothing changed. A whole call on another edge_index drops the record (it
    would keep that graph's tensors alive). Measured (H100, bench/results/gpu_20261207e): the layer's
    Python with the op stood in 26.3 -> 14.3 us a call, the event-timed Cora 4x64 forward 70-71 ->
    52 us, PubMed 2x256 168-207 -> 154 us."""
    __slots__ = ("edge_index", "edge_sig", "shape", "dtype", "device", "settings", "linears", "args")

    @staticmethod
    def settings_of(conv) -> tuple:
        return (conv.training, conv.dropout, conv.heads, conv.concat, conv.root_weight, _REPEAT, _ONE_OP, _FOLD,
                _SKIP_STACKED)

    @classmethod
    def of(cls, conv, x, edge_index, params: tuple, args: tuple) -> Optional["_RepeatCall"]:
        """The record of a call that ran as one op with these arguments, made from these parameters
        (TransformerConv._one_op's, of the Linears in _LINEARS), or None where a repeat cannot be
        recognised (x a pair, edge_index not a tensor, inference-mode tensors)."""
        if not _REPEAT or not isinstance(x, Tensor) or type(edge_index) is not Tensor:
            return None
        linears = tuple(conv._modules[name] for name in _LINEARS)
        edge_sig, param_sig = tensor_signature((edge_index,)), tensor_signature(params)
        if edge_sig is None or param_sig is None:
            return None
        r = cls()
        r.edge_index, r.edge_sig, r.args = edge_index, edge_sig[0], args
        r.shape, r.dtype, r.device = x.shape, x.dtype, x.device
        r.settings = cls.settings_of(conv)
        # Per Linear: its name, itself, its parameter table's weight and bias, their (version, address).
        r.linears = tuple((name, lin, params[2 * k], params[2 * k + 1], param_sig[2 * k], param_sig[2 * k + 1])
                          for k, (name, lin) in enumerate(zip(_LINEARS, linears)))
        return r

    def matches(self, conv, x, edge_index) -> bool:
        if (torch.is_grad_enabled() or edge_index is not self.edge_index or not isinstance(x, Tensor)
                or x.shape != self.shape or x.dtype != self.dtype or x.device != self.device
                or (edge_index._version, edge_index.data_ptr()) != self.edge_sig
                or self.settings_of(conv) != self.settings):
            return False
        modules = conv._modules
        if modules.get("lin_beta") is not None or not _tensor_cores(x):
            return False
        for name, lin, w, b, w_sig, b_sig in self.linears:
            table = lin._parameters
            if (modules[name] is not lin or lin._forward_pre_hooks or lin._forward_hooks
                    or table.get("weight") is not w or table.get("bias") is not b
                    or (w._version, w.data_ptr()) != w_sig
                    or (b is not None and (b._version, b.data_ptr()) != b_sig)):
                return False
        return True


@eager_under_compile  # torch.compile: the layer outside the graph (_compile.py)
class TransformerConv(torch.nn.Module):
    def __init__(self, in_channels: Union[int, Tuple[int, int]], out_channels: int, heads: int = 1,
                 concat: bool = True, beta: bool = False, dropout: float = 0.0, edge_dim: Optional[int] = None,
                 bias: bool = True, root_weight: bool = True, **kwargs):
        super().__init__()
        in_src, in_dst = layer_inputs("TransformerConv", in_channels, kwargs)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.beta = beta and root_weight
        self.root_weight = root_weight
        self.concat = concat
        self.dropout = dropout
        self.edge_dim = edge_dim
        self._graph_cache = GraphCache()
        self._folded_memo = TensorMemo()  # _folded_operators' (m, c) and kept splits and bias, without autograd
        self._prepared = PreparedWeights()  # the projections without autograd (_linear.PreparedWeights)
        self._one_op_memo = TensorMemo()  # _inference's weight arguments (_one_op_weights)
        self._repeat = None  # the last one-op call's arguments, for its repeats (_RepeatCall)
        self.lin_key = _pyg_linear(in_src, heads * out_channels, True, glorot=False)
        self.lin_query = _pyg_linear(in_dst, heads * out_channels, True, glorot=False)
        self.lin_value = _pyg_linear(in_src, heads * out_channels, True, glorot=False)
        if edge_dim is not None:
            self.lin_edge = _pyg_linear(edge_dim, heads * out_channels, False, glorot=False)
        else:
            self.register_parameter("lin_edge", None)
        width = heads * out_channels if concat else out_channels
        self.lin_skip = _pyg_linear(in_dst, width, bias, glorot=False)
        if self.beta:
            self.lin_beta = _pyg_linear(3 * width, 1, False, glorot=False)
        else:
            self.register_parameter("lin_beta", None)

    def reset_parameters(self):
        for lin in (self.lin_key, self.lin_query, self.lin_value, self.lin_edge, self.lin_skip, self.lin_beta):
            if lin is not None:
                _reset_linear(lin, False)

    def forward(self, x: Union[Tensor, Tuple[Tensor, Tensor]], edge_index, edge_attr: Optional[Tensor] = None,
                return_attention_weights: Optional[bool] = None):
        repeat = self.__dict__.get("_repeat")  # absent on modules pickled before it
        if (repeat is not None and edge_attr is None and not return_attention_weights
                and repeat.matches(self, x, edge_index)):
            return _ops.transformer_inference(x, x, *repeat.args)
        if (self.lin_edge is None) != (edge_attr is None):
            raise ValueError("TransformerConv: edge_attr must be given exactly when the layer has edge_dim")
        H = self.heads
        want_alpha = bool(return_attention_weights)
        check_sparse_attention_request("TransformerConv", edge_index, edge_attr, want_alpha)
        x = node_feature_pair("TransformerConv", x, self.in_channels, self.lin_key.weight)
        ea = edge_weight = None
        if edge_attr is not None:
            ea = edge_features("TransformerConv", edge_attr, edge_index, self.lin_edge)
            edge_weight = self.lin_edge.weight
        n_dst, n_src = x[1].size(0), x[0].size(0)
        if isinstance(edge_index, Graph):
            g = AttentionGraph.of(edge_index)
        elif is_sparse_adjacency(edge_index):
            g = self._graph_cache.get(edge_index, (n_src, n_dst), lambda: AttentionGraph.of(
                sparse_adjacency_graph("TransformerConv", edge_index, n_dst, n_src)))
        elif isinstance(edge_index, Tensor):
            g = self._graph_cache.get(edge_index, (n_src, n_dst),
                                      lambda: AttentionGraph.from_edge_index(edge_index, n_dst, n_src))
        else:
            raise TypeError("TransformerConv: edge_index must be a [2, E] tensor, a sparse adjacency or a "
                            f"tessera.Graph, got {type(edge_index).__name__}")
        if ea is not None:
            ea = g.entry_features(ea)  # into the CSR's entry order
        if repeat is not None and repeat.edge_index is not edge_index:
            self.__dict__["_repeat"] = None  # it would keep another graph's tensors alive
        fold = ea is None and self._folds(x[0], g.col.numel())
        params = None if ea is not None or want_alpha else self._one_op(x, fold)
        if params is not None:
            return self._inference(x, g, fold, params, edge_index)
        query, key, value, x_r = self._project(x, fold)
        if fold:
            out, alpha = self._folded_attention(g, query, x[0], want_alpha)
            skip_added = self._plain_skip()
        else:
            # A skip made with q, k and v (the CPU: _project) and added as it is goes in the
            # attention's own write, its residual: no second pass over out.
            skip_added = x_r is not None and self._plain_skip()
            out, alpha = fused_attention("transformer", g, query, key, value, None, H, 0.2, 0.0, self.dropout,
                                         self.training, want_alpha, alpha_after_dropout=False, edge_attr=ea,
                                         edge_weight=edge_weight, residual=x_r if skip_added else None)
        attention = g.attention_weights(alpha) if want_alpha else None
        if attention is not None and is_sparse_adjacency(edge_index):
            # PyG 2.8 returns a sparse adj_t itself (its values untouched) and alpha in its CSR order.
            attention = (edge_index, attention[1])
        return self._finish(out, x, attention, x_r, skip_added=skip_added)

    def _one_op(self, x, fold: bool) -> Optional[tuple]:
        """The Linears' parameters where this call runs as one op (_inference), else None. It runs as
        one op without autograd, on CUDA fp32 projections on tessera's kernel (_linear._tensor_cores:
        not where the user allowed TF32), plain Linears (no hooks: _linear._plain) of x's dtype, no
        beta gate, not dropout in training, and either form but the unfolded one on bipartite input
        (whose q and k read inputs of different widths, so they are no one stacked product). The
        caller has checked: no edge features, no attention weights. TESSERA_TRANSFORMER_ONE_OP=0
        turns it off (for A/B measurements).
        The parameters are lin_query's weight and bias, then lin_key's, lin_value's and lin_skip's,
        read from the modules' own tables (self._modules, _linear._parameters_of): this runs on every
        call, and reads through nn.Module.__getattr__ are Python calls."""
        if not _ONE_OP or torch.is_grad_enabled() or not _tensor_cores(x[1]):
            return None
        modules = self._modules  # lin_beta is here where there is one (else a None parameter)
        if modules.get("lin_beta") is not None or (self.training and self.dropout > 0):
            return None
        if x[0] is not x[1] and not (fold and _tensor_cores(x[0])):
            return None
        # Both inputs are 2-D floating tensors (node_feature_pair, _tensor_cores): what _linear._fast_path
        # asks of an input is the Linears' dtype, checked here once per Linear, not once per Linear and input.
        dtype = x[1].dtype
        if x[0].dtype != dtype:
            return None
        params = ()
        for name in _LINEARS:
            lin = modules[name]
            if not _plain(lin):
                return None
            weight_bias = _parameters_of(lin)
            if weight_bias[0].dtype != dtype:
                return None
            params += weight_bias
        return params

    def _inference(self, x, g: AttentionGraph, fold: bool, params: tuple, edge_index=None) -> Tensor:
        """The forward without autograd as one op, tessera.transformer_inference
        (src/torch/transformer_inference_op.cpp: the projections, the attention and the skip chained
        in C++), with the weights it reads kept while the parameters are unchanged (_one_op_weights;
        one tessera._memo check per call). On Cora and PubMed the forward is bound by its host path,
        which was mostly this layer's Python around the ops (bench/results/gpu_20261206h). Measured
        (H100, bench/results/gpu_20261207): host time per Cora 4x64 call 96.5 -> 72.3 us, the
        event-timed Cora 4x64 forward 107-111 -> 88-96 us, PubMed 4x64 202-209 -> 186-189 us.
        params: the Linears' parameters from _one_op, what the kept weights are made from;
        edge_index: the caller's, kept with the arguments for a repeat of this call (_RepeatCall)."""
        x_src, x_dst = x
        memo = self.__dict__.get("_one_op_memo")
        if memo is None:  # absent on modules pickled before it
            memo = self._one_op_memo = TensorMemo()
        k_src = x_src.size(-1)
        stacked = self._skip_stacked(fold)
        weights = memo.get(params, lambda: self._one_op_weights(x_dst, k_src, fold, stacked),
                           extra=(fold, x_dst.dtype, k_src, x_dst.size(-1), self.concat, self.root_weight, stacked))
        args = (g.rowptr, g.col, g.graph.id, self.heads, self.concat, *weights,
                g.graph.nonempty_rows() if fold else None, stacked)
        if x_src is x_dst:
            self.__dict__["_repeat"] = _RepeatCall.of(self, x_src, edge_index, params, args)
        return _ops.transformer_inference(x_src, x_dst, *args)

    def _skip_stacked(self, fold: bool) -> bool:
        """Whether the one op's unfolded form makes lin_skip(x) in its q/k/v product, as a fourth
        column block that the attention adds to its output in its own write, instead of a second
        product that reads x again and reads and writes the output again: with the root weight and
        heads concatenated (_plain_skip; the one op has no beta gate)."""
        return _SKIP_STACKED and not fold and self._plain_skip()

    def _one_op_weights(self, x_dst: Tensor, k_src: int, fold: bool, stacked: bool) -> tuple:
        """tessera.transformer_inference's weight arguments (w_in, b_in, split_in, w_skip, b_skip,
        split_skip, w_value, b_value, b_out, split_value): unfolded, [W_q; W_k; W_v] and their biases
        stacked, with lin_skip's as a fourth block where stacked (_skip_stacked); folded,
        _folded_operators' query operators, lin_value and the last product's bias; lin_skip where
        the layer has the root weight and it is not stacked; kept splits where _linear.weight_split
        makes them (TESSERA_LINEAR_PREPARED)."""
        skip = self.lin_skip if self.root_weight else None
        with torch.no_grad():
            if fold:
                m, c, m_split, v_split, v_bias = self._folded_operators(x_dst, k_src)
                s_split = None if skip is None or self.concat else weight_split(skip.weight)
                value = (self.lin_value.weight, self.lin_value.bias, v_bias, v_split)
                head = (m, c, m_split)
            else:
                lins = (self.lin_query, self.lin_key, self.lin_value)
                head = _stack(lins + (skip,) if stacked else lins)  # PreparedWeights' stacking
                if stacked:
                    skip = None
                s_split = None if skip is None else weight_split(skip.weight)
                value = (None, None, None, None)
        sk = (None, None, None) if skip is None else (skip.weight.detach(),
                                                      None if skip.bias is None else skip.bias.detach(), s_split)
        return head + sk + value

    def _plain_skip(self) -> bool:
        """Whether lin_skip(x_dst) is added to the output as it is (the root weight, heads
        concatenated, no beta gate), so it can go in the write that makes the output: the folded
        form's last product (_folded_attention), or the attention's residual where the skip is made
        with q, k and v (the CPU's _project, the one op's _skip_stacked)."""
        return self.root_weight and self.lin_beta is None and self.concat

    def _folds(self, x_src: Tensor, nnz: int) -> bool:
        """Whether this call takes the folded form (_folded_attention): the caller has checked that
        there are no edge features. Not with dropout in training (the value bias needs each row's
        sum of alpha, which is 1 only without dropout), nor under autocast (its queries would be
        cast, and its keys and values, x_src itself, not). TESSERA_TRANSFORMER_FOLD=1 or 0 forces it
        either way where it can run (for A/B measurements); else where the head width C is at least
        the input width K, so that it does no more work per edge and less in the products: on the
        CPU where C > K, or C = K on graphs of at least FOLD_CPU_EQUAL_MIN_ENTRIES entries; on CUDA
        on graphs of at least FOLD_CUDA_MIN_ENTRIES, or FOLD_CUDA_INFERENCE_MIN_ENTRIES when autograd
        is off (no backward to pay for; the measurements are at those constants). The two forms'
        outputs differ by rounding only (about 1e-6 of the output's largest value)."""
        if (self.training and self.dropout > 0) or autocast_on(x_src):
            return False
        forced = _FOLD
        if forced in ("0", "1"):
            return forced == "1"
        k, c = x_src.size(-1), self.out_channels
        if x_src.is_cpu:
            return c > k or (c == k and nnz >= FOLD_CPU_EQUAL_MIN_ENTRIES)
        least = FOLD_CUDA_MIN_ENTRIES if torch.is_grad_enabled() else FOLD_CUDA_INFERENCE_MIN_ENTRIES
        return c >= k and nnz >= least

    def _project(self, x, fold: bool):
        """q, k, v, and on the CPU the skip projection too (there the ones reading one tensor are one
        autograd node: tessera.nn._linear.project); elsewhere the skip waits for _finish, so it is
        not alive during the attention. Folded (_folded_attention), no q, k or v: x_dst as the query."""
        early_skip = self.root_weight and x[1].device.type == "cpu"
        if fold:
            early_skip = early_skip and not self._plain_skip()
            return x[1], None, None, linear(self.lin_skip, x[1]) if early_skip else None
        pairs = [(self.lin_query, x[1]), (self.lin_key, x[0]), (self.lin_value, x[0])]
        if early_skip:
            pairs.append((self.lin_skip, x[1]))
        outs = project(pairs, getattr(self, "_prepared", None))  # absent on modules pickled before it
        return outs[0], outs[1], outs[2], outs[3] if early_skip else None

    def _folded_attention(self, g: AttentionGraph, x_dst: Tensor, x_src: Tensor, want_alpha: bool):
        """The attention with lin_query, lin_key and lin_value folded into per-head operators on
        the inputs, so no q, k or v is made. Per head h (C channels, W_q,h and W_k,h [C, K] blocks of
        rows, the inputs' widths K_dst and K):
          <q_i, k_j> = (M_h x_dst[i] + c_h) . x_src[j] + q_i . b_k,h,  M_h = W_k,h^T W_q,h [K, K_dst],
          c_h = W_k,h^T b_q,h; the last term is the same for every entry of row i, which the softmax
          cancels (b_k gets a zero gradient, as it has in exact arithmetic);
          sum_j alpha_ij v_j = W_v,h (sum_j alpha_ij x_src[j]) + b_v,h on a row with entries.
        So the heads' K-wide queries (one product with the stacked M_h) attend, in one multi-query
        call, over x_src itself as every head's key and value (scale 1/sqrt(C)), and each head's
        [N_dst, K] aggregate is projected by its [K, C] block of W_v after it (one block-diagonal
        product, tessera.linear_heads), with lin_skip(x_dst) added in the same product where the
        layer adds it as it is (_plain_skip). Per edge and head it does 2K multiply-adds where the
        unfolded form does 2C, and reads one K-wide row per entry for all heads where it reads 2C per
        head; the products are [N, K_dst] x [K_dst, H K] and H [N, K] x [K, C], against [N, K] x
        [K, H C] three times. Rounding differs from the unfolded form's at fp32 level."""
        H, C = self.heads, self.out_channels
        m, c, m_split, v_split, v_bias = self._folded_operators(x_dst, x_src.size(-1))
        b_k, b_v = self.lin_key.bias, self.lin_value.bias
        if b_v is not None and b_k is not None and b_k.requires_grad and torch.is_grad_enabled():
            b_v = b_v + 0 * b_k  # b_k's exact zero gradient, so that an optimizer sees it as PyG's
        query = product(x_dst, m, c, m_split)  # [N_dst, H K]: head h's query in columns h K ..
        agg, alpha = fused_attention("transformer", g, query, x_src, x_src, None, H, 0.2, 1.0 / math.sqrt(C),
                                     self.dropout, self.training, want_alpha, alpha_after_dropout=False)
        del query
        # b_v goes to the rows with entries only (an empty row's sum is 0): inside the product when
        # every row has one, else as a rank-1 update mask b_v^T, whose backward is a product with
        # the mask (a [N, H*C] masked copy of the gradient cost 27 ms a call on the development machine).
        mask = g.graph.nonempty_rows() if b_v is not None else None
        skip = (x_dst, self.lin_skip.weight, self.lin_skip.bias) if self._plain_skip() else (None, None, None)
        if v_split is not None and mask is None:  # the kept sum of b_v and the skip's bias: no add per call
            out = heads_product(agg, self.lin_value.weight, v_bias, skip[0], skip[1], None, v_split)
        else:  # agg's column blocks
            out = heads_product(agg, self.lin_value.weight, b_v if mask is None else None, *skip, v_split)
        del agg
        if mask is not None:
            out = out.addmm_(mask.to(out.dtype), b_v.view(1, -1))
        return out, alpha

    def _folded_operators(self, x_dst: Tensor, k_src: int):
        """_folded_attention's query operators: m = the heads' W_k,h^T W_q,h stacked, [H K, K_dst],
        and c = the heads' W_k,h^T b_q,h stacked, [H K] (None without a query bias), computed in fp32
        at least and rounded once to x_dst's dtype. Without autograd they are a function of the
        parameters only, so they are kept for the next such call while those are unchanged
        (tessera._memo: an optimizer step, load_state_dict, torch.nn.init, Module.to() or a new
        Parameter makes them again), and so are what the two products would make on every call
        (None with autograd): m's split for the projection kernel (weight_split), lin_value's
        (with lin_skip's where the last product adds the skip) and the bias of that product (b_v
        plus lin_skip's bias there). On PubMed the folded forward is host-bound, and these are two
        bmm launches, two splits, an add and about ten tensor ops of it.
        TESSERA_TRANSFORMER_FOLD_MEMO=0 makes them on every call."""
        dtype, k_dst = x_dst.dtype, x_dst.size(-1)

        def make():
            H, C = self.heads, self.out_channels
            wide = torch.promote_types(dtype, torch.float32)
            w_kt = self.lin_key.weight.view(H, C, k_src).transpose(1, 2).to(wide)
            m = torch.bmm(w_kt, self.lin_query.weight.view(H, C, k_dst).to(wide)).to(dtype).view(H * k_src, -1)
            b_q = self.lin_query.bias
            c = None if b_q is None else torch.bmm(w_kt, b_q.view(H, C, 1).to(wide)).view(H * k_src).to(dtype)
            return m, c

        memo = getattr(self, "_folded_memo", None)  # absent on modules pickled before the memo
        if not _FOLD_MEMO or torch.is_grad_enabled() or memo is None:
            return (*make(), None, None, None)
        skip = self.lin_skip if self._plain_skip() else None
        params = (self.lin_key.weight, self.lin_query.weight, self.lin_query.bias, self.lin_value.weight,
                  self.lin_value.bias) + ((skip.weight, skip.bias) if skip is not None else ())

        def make_kept():
            m, c = make()
            with torch.no_grad():
                b_v, b_s = self.lin_value.bias, None if skip is None else skip.bias
                v_bias = b_v + b_s if b_v is not None and b_s is not None else b_v if b_s is None else b_s
            v_split = weight_split(self.lin_value.weight, None if skip is None else skip.weight)
            return m, c, weight_split(m), v_split, v_bias
        return memo.get(params, make_kept, extra=(dtype, k_src, k_dst, skip is not None))

    def _finish(self, out: Tensor, x, attention, x_r: Optional[Tensor] = None, skip_added: bool = False):
        """The mean over heads (not concat), the root weight (lin_skip(x_dst), beta-gated or added
        unless the folded form's last product or the attention added it: skip_added) and the
        attention weights."""
        H, C = self.heads, self.out_channels
        if not self.concat:
            out = out.view(-1, H, C).mean(dim=1)
        if self.root_weight and not skip_added:
            if self.lin_beta is None:  # out + lin_skip(x_dst): on CUDA one kernel
                out = add_to_fresh(out, x_r) if x_r is not None else \
                    linear_add(self.lin_skip, x[1], out, getattr(self, "_prepared", None))
            else:
                if x_r is None:
                    x_r = linear(self.lin_skip, x[1], getattr(self, "_prepared", None))
                b = self.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
                out = b * x_r + (1 - b) * out
        return (out, attention) if attention is not None else out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
