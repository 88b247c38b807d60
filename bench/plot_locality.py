#!/usr/bin/python3
"""Plots the locality study (bench/locality_bench --json FILE) as one PNG and a text table.

One panel per graph: delta_s = s_neighbour - s_feature (s = t_original / t_reordered) against the
METIS partition size, one line per feature width, solid for scalar and dashed for 16-byte loads.
Positive values: reordering helped the neighbour-parallel (gather-heavy) mapping more.

usage: plot_locality.py RESULT.json [-o OUT.png] [--table OUT.txt]
"""
import argparse
import json
import math
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def table(data):
    lines = [f"device: {data.get('device', '?')}",
             f"{'graph':42} {'F':>5} {'S':>6} {'load':>6} {'s_feat':>7} {'s_nbr':>7} {'delta':>7}"]
    for g in data["graphs"]:
        for r in g["results"]:
            lines.append(f"{os.path.basename(g['graph'])[:42]:42} {r['width']:5d} {r['part_size']:6d} {r['load']:>6} "
                         f"{r['s_feature']:7.3f} {r['s_neighbour']:7.3f} {r['delta_s']:+7.3f}")
    return "\n".join(lines) + "\n"


def plot(data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graphs = data["graphs"]
    cols = min(3, max(1, len(graphs)))
    rows = math.ceil(len(graphs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    for ax, g in zip(axes.flat, graphs):
        widths = sorted({r["width"] for r in g["results"]})
        cmap = plt.get_cmap("viridis", max(2, len(widths)))
        for wi, w in enumerate(widths):
            for load, style in (("scalar", "-"), ("vec16", "--")):
                pts = sorted((r["part_size"], r["delta_s"]) for r in g["results"] if r["width"] == w and r["load"] == load)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=3, color=cmap(wi),
                            label=f"F={w} {load}")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("METIS partition size (nodes)")
        ax.set_ylabel("Δs = s_neighbour − s_feature")
        ax.set_title(f"{os.path.basename(g['graph'])[:38]}\n{g['nodes']} nodes, mean degree {g['degree_mean']:.1f}",
                     fontsize=9)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(graphs):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(10, len(labels)), fontsize=7)
    fig.suptitle(f"Reordering gap, warp-per-node sum ({data.get('device', '?')})", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(out, dpi=130)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("-o", "--out", help="PNG path (default: JSON path with .png)")
    ap.add_argument("--table", help="also write the text table here")
    a = ap.parse_args()
    data = load(a.json)
    if not data.get("graphs"):
        sys.exit(f"{a.json}: no graphs in the result")
    txt = table(data)
    sys.stdout.write(txt)
    if a.table:
        with open(a.table, "w") as f:
            f.write(txt)
    plot(data, a.out or os.path.splitext(a.json)[0] + ".png")


if __name__ == "__main__":
    main()
