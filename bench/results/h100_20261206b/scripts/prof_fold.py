# Kernel split of TransformerConv's forward, folded (per-head) and unfolded, on CUDA.
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn.transformer as transformer
from tessera.nn import TransformerConv
from torch.profiler import profile, ProfilerActivity
for name in sys.argv[1].split(","):
    spec, rowptr, col = bc.load_graph(name, sys.argv[3])
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, "cuda")
    x = torch.randn(n, 128, device="cuda")
    for hc in sys.argv[2].split(","):
        h, c = (int(v) for v in hc.split("x"))
        conv = TransformerConv(128, c, heads=h).cuda()
        for form in ("0", "1"):
            transformer._FOLD = form
            with torch.no_grad():
                for _ in range(3): conv(x, ei)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as p:
                    for _ in range(5): conv(x, ei)
                    torch.cuda.synchronize()
            print(f"== {name} {hc} fold={form} (5 forwards)")
            print(p.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=60))
