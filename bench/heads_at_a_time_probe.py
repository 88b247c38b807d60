#!/usr/bin/env python3
"""What a GATv2 training step costs when it takes the heads one at a time (the design README's
"Memory (#5)" names as the way to the memory target), built in Python from tessera's own ops,
against tessera.nn.GATv2Conv and PyG's GATv2Conv in the same run.

Per head h: x_l,h and x_r,h projected from x, the attention of that head written into its columns
of the output, both dropped; the backward projects them again per head, runs the head's backward
walks (tessera.attention_backward with heads = 1 on the head's columns of the output gradient) and
folds dx_l,h and dx_r,h into dW, db and dx before the next head. Peak: out + dx + four [N, C]
tensors (1 + K/(HC) + 4/H U; the README's 3/H and 2/H need the backward's walks as separate calls).

Prints per row: forward+backward time (CUDA events per call, as attention_layer_bench.py), peak
memory above the inputs in U and as a ratio to PyG's, the step's GPU busy time and kernel count
(torch profiler), and the largest gradient error of the layer and of the chunked step against PyG's.
That error is not a fp32-level number for GATv2: LeakyReLU's slope jumps at 0, so an (entry,
channel) whose x_r + x_l lies within rounding of 0 takes the other slope where the projections
round otherwise, and moves a channel of the weight gradients by O(1). The chunked step's
projections are PyG's cuBLAS products, bitwise; the layer's are tessera's tf32x3 kernel
(bench/results/gpu_20261206f, section 1). The GPU busy
time and the launches tell what the same chain would take as one C++ op (no Python between
launches): this script's own time is an upper bound of that design's.

    python3 bench/heads_at_a_time_probe.py [--graphs cora,pubmed,grid] [--hc 4x64,8x128,2x256]
                                           [--data-dir DIR] [--json OUT.json] [--no-pyg]
"""
import argparse
import gc
import os
import time

import torch

import bench_common as bc
from attention_layer_bench import timed

PARAMS = ("att", "bias", "lin_l.weight", "lin_l.bias", "lin_r.weight", "lin_r.bias")  # GATv2Conv's, PyG's names


class HeadsAtATime(torch.autograd.Function):
    """GATv2Conv's step (PyG defaults: self-loops added by the layer's graph, concat, bias, no
    residual, no edge features, no dropout) with one head's tensors alive at a time."""

    @staticmethod
    def forward(ctx, x, w_l, b_l, w_r, b_r, att, bias, g, heads, slope):
        ops = torch.ops.tessera
        C = w_l.size(0) // heads
        out = x.new_empty(x.size(0), heads * C)
        lses = []
        for h in range(heads):
            s = slice(h * C, (h + 1) * C)
            x_l = torch.addmm(b_l[s], x, w_l[s].t())
            x_r = torch.addmm(b_r[s], x, w_r[s].t())
            o, lse, _ = ops.attention(g.rowptr, g.col, x_r, x_l, None, att[0, h].contiguous(), 1, "gatv2", slope,
                                      0.0, 0.0, 0, False, False, None, None, None, False, g.graph.id, None, None,
                                      bias[s])
            out[:, s] = o
            lses.append(lse)
            del o, x_l, x_r
        ctx.g, ctx.heads, ctx.slope = g, heads, slope
        ctx.save_for_backward(x, w_l, b_l, w_r, b_r, att, *lses)
        return out

    @staticmethod
    def backward(ctx, d_out):
        ops = torch.ops.tessera
        x, w_l, b_l, w_r, b_r, att, *lses = ctx.saved_tensors
        g, heads = ctx.g, ctx.heads
        C = w_l.size(0) // heads
        t_rowptr, t_col, t_perm = g.transpose()
        dx = torch.zeros_like(x)
        dw_l, dw_r = torch.empty_like(w_l), torch.empty_like(w_r)
        db_l, db_r = torch.empty_like(b_l), torch.empty_like(b_r)
        datt = torch.empty_like(att)
        for h in range(heads):
            s = slice(h * C, (h + 1) * C)
            x_l = torch.addmm(b_l[s], x, w_l[s].t())
            x_r = torch.addmm(b_r[s], x, w_r[s].t())
            dq, dk, _, da, _, _ = ops.attention_backward(d_out[:, s], g.rowptr, g.col, x_r, x_l, None,
                                                         att[0, h].contiguous(), lses[h], 1, "gatv2", ctx.slope,
                                                         0.0, 0.0, 0, t_rowptr, t_col, t_perm, False, None, None)
            del x_l, x_r
            for d, w, dw, db in ((dk, w_l, dw_l, db_l), (dq, w_r, dw_r, db_r)):
                torch.mm(d.t(), x, out=dw[s])
                torch.sum(d, 0, out=db[s])
                dx.addmm_(d, w[s])
            datt[0, h] = da.view(C)
            del dq, dk
        return dx, dw_l, db_l, dw_r, db_r, datt, d_out.sum(0), None, None, None


class ChunkedGATv2(torch.nn.Module):
    """Runs `layer`'s parameters and graph through HeadsAtATime (same results, other peak)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        self._graph_cache = layer._graph_cache  # counted in the peak like the layer's (timed() resets it)

    def forward(self, x, edge_index):
        m = self.layer
        m._graph_cache = self._graph_cache
        g = m._graph(edge_index, x.size(0), x.size(0))
        return HeadsAtATime.apply(x, m.lin_l.weight, m.lin_l.bias, m.lin_r.weight, m.lin_r.bias, m.att, m.bias, g,
                                  m.heads, m.negative_slope)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", default="cora,pubmed,grid")
    p.add_argument("--hc", default="4x64,8x128,2x256")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    p.add_argument("--json", default=None)
    p.add_argument("--no-pyg", action="store_true")
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("heads_at_a_time_probe: no CUDA device")
    bc.import_tessera()
    import tessera.nn as tnn
    pnn, pyg_version = (None, None) if a.no_pyg else bc.import_pyg_nn()
    dev = torch.device("cuda")
    record = bc.provenance(torch.cuda.get_device_name(0))
    record.update({"benchmark": "gatv2_heads_at_a_time_probe", "pyg": pyg_version, "width": a.width, "rows": []})
    for gname, spec, rowptr, col, ei in bc.bench_graphs(a.graphs.split(","), a.data_dir, dev):
        n = rowptr.numel() - 1
        torch.manual_seed(0)
        x = torch.randn(n, a.width, device=dev)
        for H, C in (tuple(int(v) for v in s.split("x")) for s in a.hc.split(",")):
            layer = tnn.GATv2Conv(a.width, C, heads=H).to(dev)
            row = {"graph": gname, "spec": spec, "nodes": n, "heads": H, "channels": C}
            peer = None
            if pnn is not None:
                peer = pnn.GATv2Conv(a.width, C, heads=H).to(dev)
                layer.load_state_dict(peer.state_dict())
                row["pyg"] = timed(peer, x, ei, a.reps)
            chunked = ChunkedGATv2(layer)
            # Gradients of the layer and of the chunked step against PyG's (or the layer's without
            # PyG): per tensor, the largest difference relative to the reference's largest entry.
            gy = torch.randn(n, H * C, device=dev)
            grads = {}
            for name, m in (("pyg", peer), ("layer", layer), ("chunked", chunked)):
                if m is None:
                    continue
                xi = x.detach().clone().requires_grad_()
                m.zero_grad(set_to_none=True)
                layer.zero_grad(set_to_none=True)
                try:
                    m(xi, ei).backward(gy)
                except torch.cuda.OutOfMemoryError:  # PyG's edge tensors on the large graphs
                    m.zero_grad(set_to_none=True)
                    torch.cuda.empty_cache()
                    continue
                params = dict(m.named_parameters())
                grads[name] = {"x": xi.grad, **{k: params[k if name != "chunked" else "layer." + k].grad
                                                 for k in PARAMS}}
            ref = grads.get("pyg", grads["layer"])
            row["grad_reference"] = "PyG" if "pyg" in grads else "layer"
            for name in ("layer", "chunked"):
                row[f"{name}_grad_error"] = {k: ((grads[name][k] - ref[k]).abs().max() / ref[k].abs().max()).item()
                                             for k in ref}
            peer = grads = ref = None
            gc.collect()
            torch.cuda.empty_cache()
            row["layer"] = timed(layer, x, ei, a.reps)
            row["chunked"] = timed(chunked, x, ei, a.reps)
            xg = x.detach().clone().requires_grad_()
            gy = torch.ones(n, H * C, device=dev)
            for name, m in (("layer", layer), ("chunked", chunked)):
                def step(m=m):
                    m.zero_grad(set_to_none=True)
                    xg.grad = None
                    m(xg, ei).backward(gy)
                busy, kernels = bc.gpu_busy_us(step)
                row[name].update({"gpu_busy_us": busy, "kernels": kernels})
            unit = n * H * C * 4
            line = f"{gname:7s} {H}x{C:<4d}"
            for name in ("layer", "chunked"):
                r = row[name]
                line += (f" | {name} f+b {r['forward_backward_ms']:7.2f} ms peak {r['peak_bytes'] / unit:5.2f} U "
                         f"GPU {r['gpu_busy_us'] / 1e3:6.2f} ms {r['kernels']:4d} kernels")
                if "pyg" in row and "peak_bytes" in row["pyg"]:
                    q = row["pyg"]
                    line += f" x{q['forward_backward_ms'] / r['forward_backward_ms']:.1f} mem {r['peak_bytes'] / q['peak_bytes']:.3f}"
            line += " | grad error vs " + row["grad_reference"] + ": " + ", ".join(
                f"{name} {max(row[f'{name}_grad_error'].values()):.1e} ({max(row[f'{name}_grad_error'], key=row[f'{name}_grad_error'].get)})"
                for name in ("layer", "chunked"))
            print(line, flush=True)
            record["rows"].append(row)
            del layer, chunked
            gc.collect()
            torch.cuda.empty_cache()
    bc.write_json(a.json or os.path.join(bc.ROOT, "bench", "results",
                                         f"heads_at_a_time_{time.strftime('%Y%m%d_%H%M%S')}.json"), record)


if __name__ == "__main__":
    main()
