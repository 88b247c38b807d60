"""Shared helpers of the Python benchmarks: timing, provenance, JSON output."""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The GCN slice's benchmark graphs (issues #3, #5): seeded generator specs, and the Planetoid data
# sets Cora and PubMed read from the shared data directory (bench_common.hpp's generated_graph_spec
# is the C++ twin).
GENERATED_GRAPHS = {
    "rmat": "rmat:scale=20,degree=16,seed=1",
    "grid": "grid:rows=1024,cols=1024",
    "clustered": "clustered:nodes=65536,clusters=256,degree=200,seed=1",
}
BENCH_GRAPHS = "rmat,grid,clustered,cora,pubmed"
DEFAULT_DATA_DIR = os.environ.get("TESSERA_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))


def commit() -> str:
    """TESSERA_COMMIT when set (scripts/gpu_session.sh exports it: the GPU machine's copy of the
    tree sits in a stale git checkout), else the repository's HEAD, else "unknown"."""
    if os.environ.get("TESSERA_COMMIT"):
        return os.environ["TESSERA_COMMIT"]
    try:
        return subprocess.check_output(["git", "-C", ROOT, "rev-parse", "HEAD"], stderr=subprocess.DEVNULL,
                                       text=True).strip()
    except Exception:
        return "unknown"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def transparent_hugepage() -> str:
    """The kernel's transparent-huge-page policy (the bracketed word of /sys/kernel/mm/
    transparent_hugepage/enabled), or "unknown". The CPU peers' times depend on it by up to 13x:
    their fresh multi-MB temporaries fault in 4 KB pages under madvise (bench/results/
    h200_20261202b/README.md, section 4)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            words = f.read().split()
        return next((w.strip("[]") for w in words if w.startswith("[")), "unknown")
    except OSError:
        return "unknown"


def provenance(device: str) -> dict:
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "device": device,
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "transparent_hugepage": transparent_hugepage(),
    }


def median_ms_cpu(fn, warmup: int = 1, reps: int = 5) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def time_layer_cpu(name: str, conv, x, graph, grad_out, reps: int) -> dict:
    """First call (builds caches), forward and forward+backward medians of one layer on the CPU.
    Returns the timings and the first output under "out"; prints one line."""
    t0 = time.perf_counter()
    with torch.no_grad():
        y = conv(x, graph)
    first = (time.perf_counter() - t0) * 1e3
    with torch.no_grad():
        fwd = median_ms_cpu(lambda: conv(x, graph), reps=reps)
    xg = x.clone().requires_grad_()

    def fwd_bwd():
        conv.zero_grad(set_to_none=True)
        xg.grad = None
        conv(xg, graph).backward(grad_out)

    fb = median_ms_cpu(fwd_bwd, reps=reps)
    print(f"  {name:22s} first call {first:9.1f} ms  forward {fwd:9.1f} ms  forward+backward {fb:9.1f} ms")
    return {"first_call_ms": first, "forward_ms": fwd, "forward_backward_ms": fb, "out": y}


def graph_us_cuda(fn, calls: int = 20, reps: int = 10, between=None):
    """GPU microseconds per call of fn with no host in the way: fn captured `calls` times into one
    CUDA graph, replayed `reps` times (CUDA events, median). `between` (captured before every call
    and timed alone the same way, then subtracted) resets state, e.g. evicts the L2. None when fn
    cannot be captured (it synchronizes, or allocates outside torch's allocator)."""
    def per_call(body):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                body()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(calls):
                body()
        return median_ms_cuda(g.replay, warmup=2, reps=reps) * 1e3 / calls

    def both():
        between()
        fn()
    try:
        if between is None:
            return per_call(fn)
        return per_call(both) - per_call(between)
    except RuntimeError as e:
        print(f"  (CUDA graph capture failed: {str(e).splitlines()[0]})")
        torch.cuda.synchronize()
        return None


class L2Evictor:
    """Reads a buffer larger than the GPU's L2 (4x its size, at least 256 MiB): after it, what a
    kernel reads comes from device memory, as it does for data last touched long ago. It reads
    rather than writes: an L2 left full of dirty lines makes the next kernel pay their write-back
    (tens of MB, more than a small graph's whole floor), which subtracting the eviction's own time
    does not remove."""
    def __init__(self, device="cuda"):
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 << 20)
        self.buf = torch.ones(max(4 * l2, 256 << 20) // 4, dtype=torch.int32, device=device)

    def __call__(self):
        self.buf.amax()


def copy_bandwidth_cuda(nbytes: int = 1 << 30, device="cuda") -> float:
    """Device-to-device copy bandwidth in bytes/s (bytes read + bytes written), measured now: the IO
    floors' denominator, so a share of the floor means the same on an H100 (about 3 TB/s) as on an
    H200 (about 4.2 TB/s, DESIGN.md) instead of assuming the H200's figure."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    ms = median_ms_cuda(lambda: dst.copy_(src), warmup=2, reps=10)
    del src, dst
    torch.cuda.empty_cache()
    return 2 * nbytes / (ms * 1e-3)


def peak_bytes_cuda(fn) -> int:
    """Peak GPU memory allocated by one synchronized call of fn, above what was allocated before
    it (torch's caching-allocator statistics)."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def peak_rss_growth_mib(fn):
    """Peak resident memory above the current one while fn runs (Linux: VmHWM reset through
    /proc/self/clear_refs); None where that is not available. tessera's kept output blocks
    (src/torch/outputs.hpp) are returned first, so what fn allocates counts as it would fresh."""
    torch.ops.tessera.release_cached_outputs()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    base = _status_kb("VmRSS")
    fn()
    return (_status_kb("VmHWM") - base) / 1024.0


# The layer benchmarks' minimum of measured time per timing (median_ms_cuda's min_ms): small graphs
# then take ~100-400 calls, so their host-bound medians repeat between runs.
LAYER_MIN_MS = 200.0


def median_ms_cuda(fn, warmup: int = 3, reps: int = 10, min_ms: float = 0.0, max_reps: int = 400) -> float:
    """Median of per-call CUDA-event times over `reps` calls, or over as many more (at most max_reps)
    as fill min_ms of measured time: a host-bound call of ~1 ms varies by tens of percent from call
    to call (Python, the allocator, the autograd thread), and 5 of them gave medians 40% apart
    between runs of one build (bench/results/h200_20261203c), so fast rows take more samples."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    while len(times) < reps or (sum(times) < min_ms and len(times) < max_reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def write_json(path: str, record: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)  # never a half-written result
    print(f"wrote {path}")


def import_tessera():
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))  # pyg_reference (the CPU peer)
    import tessera  # noqa: F401
    return tessera


def load_graph(name: str, data_dir: str = DEFAULT_DATA_DIR):
    """(source, rowptr, col) of a benchmark graph (CSR by target), or None when a data set is not
    under data_dir. name: a key of GENERATED_GRAPHS, a data set directory under data_dir (cora,
    pubmed), or a generator spec (tessera.ops.generate_graph)."""
    tessera = import_tessera()
    spec = GENERATED_GRAPHS.get(name, name)
    if ":" in spec:
        rowptr, col = tessera.ops.generate_graph(spec, False)
        return spec, rowptr, col
    path = os.path.join(data_dir, name)
    if not os.path.isdir(path):
        return None
    _, _, rowptr, col, _, _, _ = tessera.ops.load_node_dataset(path)
    return path, rowptr, col


def require_graph(name: str, data_dir: str, script: str):
    """load_graph for a script that cannot go on without the graph: exits naming the script, the
    graph and the directory where it is missing."""
    loaded = load_graph(name, data_dir)
    if loaded is None:
        sys.exit(f"{script}: {name} is not under {data_dir}")
    return loaded


def gpu_busy_us(step):
    """(GPU busy microseconds, kernels) of one synchronized call of step: the union of its kernels'
    spans on the profiler's clock, so overlapping kernels count once."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    spans = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                   if e.device_type == DeviceType.CUDA and e.time_range.end > e.time_range.start)
    busy, last = 0.0, float("-inf")
    for b, e in spans:
        busy += max(0.0, e - max(b, last))
        last = max(last, e)
    return busy, len(spans)


def bench_graphs(names, data_dir: str, device, skipped=None):
    """(name, source, rowptr, col, edge_index on device) of each benchmark graph in names that
    load_graph finds; a data set not under data_dir is skipped with a line saying so (and a record
    appended to skipped, when given)."""
    for name in names:
        loaded = load_graph(name, data_dir)
        if loaded is None:
            print(f"{name}: not under {data_dir}, skipped", flush=True)
            if skipped is not None:
                skipped.append({"graph": name, "why": f"not under {data_dir}"})
            continue
        source, rowptr, col = loaded
        yield name, source, rowptr, col, edge_index_of(rowptr, col, device)


def edge_index_of(rowptr, col, device):
    """PyG's edge_index ([source; target], int64) of a CSR by target."""
    n = rowptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
    return torch.stack([col.long(), dst.long()]).to(device)


def import_pyg_nn():
    """(torch_geometric.nn, its version) or (None, "unavailable (why)"): the GPU benchmarks time
    PyG in the same run when it is installed and tessera alone otherwise."""
    try:
        import torch_geometric
        import torch_geometric.nn as pyg_nn
        return pyg_nn, torch_geometric.__version__
    except Exception as e:
        return None, f"unavailable ({e})"
