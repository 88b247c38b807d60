#!/usr/bin/env python3
"""The attention layers' peak memory in tensors of the output's size, against the lowest peak that
any layer keeping its projections can have, from the JSON of attention_layer_bench.py.

    python3 bench/memory_floor.py bench/results/<folder>/attention_layer_<commit>.json [...]

The unit U is one fp32 [N, H*C] tensor, the layer's output (every row of the benchmark concatenates
its heads). Per row: both sides' peaks in U, what the issue's target allows (PyG's peak times 1/15
for GATv2, 1/10 for the Transformer), and the floor of a design that keeps its projections. The
benchmark's forward+backward, like any training step, holds the output while the backward runs.

GATv2, at least 3 U through the backward:
  out (1 U);
  x_l = lin_l(x) (1 U), which every edge reads, in the forward and in the backward;
  one more: the gradient of x_l[j] sums, over the out-edges (i, j) of j, terms that depend on
  x_r[i] + x_l[j] per channel (the LeakyReLU's slope). A walk over the sources reads x_r from a
  table (1 U); a walk over the targets, which could recompute x_r[i] once per row, scatters into a
  buffer for the gradient of x_l (1 U).
Transformer, at least 4 U:
  out (1 U), which the backward reads (Delta_i = <O_i, dO_i>);
  k and v (2 U), which every edge reads;
  one more: dk_j = sum_i dS_ij q_i reads q_i at every edge (a table, 1 U), or a walk over the
  targets scatters into buffers for dk and dv (2 U).
Gradient buffers, logsumexp and the input gradient come on top of these floors.

Going below them takes a different design. GATv2 would recompute x_l at every edge, in the forward
alone E/N times the projection's work (E/N is 3.9-5.2 on Cora, PubMed and the grid). The
Transformer could fold its key and value weights into per-head vectors of the input's width K
(q_i . k_j = (W_k^T q_i) . x_j + q_i . b_k; sum_j a_ij v_j = W_v sum_j a_ij x_j + b_v), which holds
about 1 + 2K/C U: less than 4 only where the head width C exceeds K.

The floors above are those of a layer that holds every head's projections at once. A design that
takes the heads one at a time holds less, and this script gives its floor too ("chunked"):
per head h, project x_l,h and x_r,h (q_h, k_h, v_h), run that head's attention into its columns of
out and drop them; in the backward project them again per head and run the targets pass, then the
sources pass, each gradient folded into dW and dx before the next is made. Its peak, with the
input gradient dx ([N, K] = K/(H C) U, the benchmark's x requires grad):
  GATv2        1 + K/(H C) + 3/H U   (x_l,h, x_r,h and one gradient), 2/H with gradients written
                                      over their own inputs (each pass reads only its own rows there);
  Transformer  1 + K/(H C) + 5/H U   (q_h, k_h, v_h, then dq_h or dk_h and dv_h), 3/H in place.
What it pays: the forward's projections again in the backward (GATv2: 8 products a step instead
of 6), and H chains of products and walks where the layer runs one. On Cora and PubMed a step is
host-bound (a GATv2 4x64 forward on Cora: 64 us of host time for 4 launches, 33 us of GPU time;
bench/results/h200_20261206/README.md), so H chains cost up to H times the host time there.
"""
import json
import statistics
import sys

FLOOR_U = {"gatv2": 3.0, "transformer": 4.0}


def folded_floor(layer: str, width: int, channels: int) -> float:
    """The folded Transformer's floor in U (see above); GATv2 has no folded form (inf)."""
    return 1.0 + 2.0 * width / channels if layer == "transformer" else float("inf")


def chunked_floor(layer: str, width: int, heads: int, channels: int, in_place: bool) -> float:
    """The head-at-a-time design's floor in U (see above)."""
    per_head = {"gatv2": (3.0, 2.0), "transformer": (5.0, 3.0)}[layer][1 if in_place else 0]
    return 1.0 + width / (heads * channels) + per_head / heads


def rows_of(path):
    d = json.load(open(path))
    for r in d["rows"]:
        pyg, ours = r.get("pyg") or {}, r.get("tessera") or {}
        if not isinstance(pyg.get("peak_bytes"), (int, float)) or not isinstance(ours.get("peak_bytes"), (int, float)):
            continue  # a side that ran out of memory (or was not run): no ratio
        unit = r["nodes"] * r["heads"] * r["channels"] * 4
        yield d, r, pyg["peak_bytes"] / unit, ours["peak_bytes"] / unit


def main(paths):
    if not paths:
        sys.exit(__doc__)
    for path in paths:
        print(f"{path}")
        print(f"{'layer':11s} {'graph':10s} {'HxC':6s} {'E/N':>6s} {'PyG U':>7s} {'ours U':>7s} {'allowed U':>9s} "
              f"{'floor U':>7s} {'folded U':>8s} {'chunked U':>9s} {'in place':>8s} {'ratio':>6s} {'floor ratio':>11s}")
        per_layer = {}
        for d, r, pyg_u, ours_u in rows_of(path):
            layer = r["layer"]
            target = d["targets"][layer]["memory"]
            floor = FLOOR_U[layer]
            folded = folded_floor(layer, d["width"], r["channels"])
            chunked = chunked_floor(layer, d["width"], r["heads"], r["channels"], False)
            in_place = chunked_floor(layer, d["width"], r["heads"], r["channels"], True)
            per_layer.setdefault(layer, []).append((ours_u / pyg_u, floor / pyg_u, min(floor, folded) / pyg_u, target,
                                                    chunked / pyg_u, in_place / pyg_u))
            print(f"{layer:11s} {r['graph']:10s} {r['heads']}x{r['channels']:<4d} {r['edges'] / r['nodes']:6.1f} "
                  f"{pyg_u:7.2f} {ours_u:7.2f} {pyg_u * target:9.2f} {floor:7.1f} {folded:8.2f} {chunked:9.2f} "
                  f"{in_place:8.2f} {ours_u / pyg_u:6.3f} {floor / pyg_u:11.3f}")
        for layer, rs in per_layer.items():
            target = rs[0][3]
            measured = statistics.median(x[0] for x in rs)
            # Each row's floor ratio bounds that row's ratio from below, so their median bounds the median.
            bound = statistics.median(x[1] for x in rs)
            either = statistics.median(x[2] for x in rs)
            print(f"  {layer}: median ratio {measured:.3f} over {len(rs)} rows, target {target:.3f}; median of the "
                  f"floors {bound:.3f} ({'out of reach' if bound > target else 'within reach'} for a design that "
                  f"keeps its projections)", end="")
            print("" if layer != "transformer" else f", {either:.3f} with the folded form where it holds less "
                  f"({'out of reach' if either > target else 'within reach'})")
            for name, i in (("chunked", 4), ("chunked in place", 5)):
                m = statistics.median(x[i] for x in rs)
                print(f"    heads one at a time ({name}): median of the floors {m:.3f}, "
                      f"{sum(x[i] <= x[3] for x in rs)} of {len(rs)} rows within the target "
                      f"({'within reach' if m <= target else 'out of reach'})")


if __name__ == "__main__":
    main(sys.argv[1:])
