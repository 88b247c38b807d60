#!/usr/bin/env python3
"""One multi-head GATv2 attention call against one call per head on the same inputs (tessera's ops,
no projections): out, lse and every gradient, on a data set's graph (self-loops added as the layer
does). Prints the largest difference per tensor relative to its largest entry, for head columns
passed as strided views and as contiguous copies, with the graph's id (kept schedules) and without."""
import sys

import torch

sys.path.insert(0, "bench")
import bench_common as bc  # noqa: E402

bc.import_tessera()
import tessera.nn as tnn  # noqa: E402

ops = torch.ops.tessera
dev = "cuda" if torch.cuda.is_available() else "cpu"
data = sys.argv[1] if len(sys.argv) > 1 else bc.DEFAULT_DATA_DIR
for gname in ("cora", "pubmed"):
    spec, rowptr, col = bc.load_graph(gname, data)
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, dev)
    for H, C in ((4, 64), (8, 128), (2, 256)):
        layer = tnn.GATv2Conv(128, C, heads=H).to(dev)
        g = layer._graph(ei, n, n)
        t = g.transpose()
        torch.manual_seed(1)
        xr, xl = torch.randn(n, H * C, device=dev), torch.randn(n, H * C, device=dev)
        att = torch.randn(H * C, device=dev)
        dO = torch.randn(n, H * C, device=dev)
        for gid_name, gid in (("id", g.graph.id), ("anonymous", 0)):
            out, lse, _ = ops.attention(g.rowptr, g.col, xr, xl, None, att, H, "gatv2", 0.2, 0.0, 0.0, 0, False,
                                        False, None, None, None, False, gid, None, None, None)
            dq, dk, _, datt, _, _ = ops.attention_backward(dO, g.rowptr, g.col, xr, xl, None, att, lse, H, "gatv2",
                                                           0.2, 0.0, 0.0, 0, *t, False, None, None)
            for mode in ("strided", "contiguous"):
                prep = (lambda v: v) if mode == "strided" else (lambda v: v.contiguous())
                res = {k: [] for k in ("out", "lse", "dq", "dk", "datt")}
                for h in range(H):
                    s = slice(h * C, (h + 1) * C)
                    a_h = att[s].contiguous()
                    o1, l1, _ = ops.attention(g.rowptr, g.col, prep(xr[:, s]), prep(xl[:, s]), None, a_h, 1, "gatv2",
                                              0.2, 0.0, 0.0, 0, False, False, None, None, None, False, gid, None,
                                              None, None)
                    q1, k1, _, a1, _, _ = ops.attention_backward(prep(dO[:, s]), g.rowptr, g.col, prep(xr[:, s]),
                                                                 prep(xl[:, s]), None, a_h, l1, 1, "gatv2", 0.2, 0.0,
                                                                 0.0, 0, *t, False, None, None)
                    for k, v in (("out", o1), ("lse", l1), ("dq", q1), ("dk", k1), ("datt", a1)):
                        res[k].append(v)
                whole = {"out": out, "lse": lse, "dq": dq, "dk": dk, "datt": datt}
                errs = []
                for k, parts in res.items():
                    cat = torch.cat([p.reshape(n, -1) if k != "datt" else p.reshape(-1) for p in parts],
                                    dim=1 if k != "datt" else 0)
                    ref = whole[k].reshape(cat.shape)
                    errs.append(f"{k} {((cat - ref).abs().max() / ref.abs().max()).item():.1e}")
                print(f"{gname:7s} {H}x{C:<4d} {gid_name:9s} {mode:10s} " + ", ".join(errs), flush=True)
