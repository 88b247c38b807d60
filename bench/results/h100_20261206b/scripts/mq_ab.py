# The folded TransformerConv's forward (no_grad) with its attention forced onto cuda.multi_query and
# onto cuda.fused, alternated in one run (TESSERA_VARIANT_ATTENTION is read on every call).
import os, sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn.transformer as transformer
from tessera.nn import TransformerConv
transformer._FOLD = "1"
for name in sys.argv[1].split(","):
    spec, rowptr, col = bc.load_graph(name, sys.argv[3])
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, "cuda")
    x = torch.randn(n, 128, device="cuda")
    for hc in sys.argv[2].split(","):
        h, c = (int(v) for v in hc.split("x"))
        conv = TransformerConv(128, c, heads=h).cuda()
        best = {}
        with torch.no_grad():
            for rnd in range(3):
                for v in ("cuda.multi_query", "cuda.fused"):
                    os.environ["TESSERA_VARIANT_ATTENTION"] = v
                    t = bc.median_ms_cuda(lambda: conv(x, ei), warmup=2, reps=10, min_ms=bc.LAYER_MIN_MS)
                    best[v] = min(best.get(v, 1e9), t)
            out = {}
            for v in ("cuda.multi_query", "cuda.fused"):
                os.environ["TESSERA_VARIANT_ATTENTION"] = v
                out[v] = conv(x, ei)
        os.environ.pop("TESSERA_VARIANT_ATTENTION")
        d = (out["cuda.multi_query"] - out["cuda.fused"]).abs().max().item() / out["cuda.fused"].abs().max().item()
        print(f"{name} {hc} folded forward: multi_query {best['cuda.multi_query']:.3f} ms, fused {best['cuda.fused']:.3f} ms "
              f"(x{best['cuda.fused'] / best['cuda.multi_query']:.2f}), max rel diff {d:.1e}", flush=True)
