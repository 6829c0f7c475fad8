#!/usr/bin/env python3
"""Data and peers of the correlation benchmark (pearson_bench.sh runs it).

  gen WORK NAME M N SEED
      M random walks of N values at a fixed seed (each series starts at 100,
      each next value is the last one times 1 + eps, eps uniform in
      [-0.01, 0.01]), float64, as NAME.npy (the peers read it) and as
      NAME.bin, a COPY BINARY file of (id bigint, v float8[]) rows with ids
      1..M (what PostgreSQL loads: the same float64 values).

  peers WORK NAME THRESHOLD
      The same correlation done by the peers on the same values, timed; one
      tab-separated line per peer: name, milliseconds of the coefficient
      matrix, milliseconds of the matrix plus the pairs of its upper triangle
      with |r| >= THRESHOLD (their indexes and values brought to host
      memory, as odp_gpu returns them), the pair count, and a note.
        cupy32, cupy64    cupy.corrcoef on the GPU in float32 / float64
        torch32, torch64  torch.corrcoef on the GPU (TF32 off)
        numpy             numpy.corrcoef (float64) on the host CPUs
        pandas            DataFrame.corr() (float64, one CPU)
      GPU times exclude the copy of the series to the GPU (reported in the
      note) and take the best of a few runs after a warm-up.  A host peer
      that would pass PEER_LIMIT_S runs on the first m series and is
      extrapolated by (M / m)^2, marked as such.  A GPU peer whose M x M
      matrix does not fit reports OOM.  Also writes NAME.cupy64.npz: the
      float64 pairs of cupy64 (for the exactness check) when it ran.

  compare WORK NAME PAIRS_TSV
      Compares odp_gpu's pairs (id_a, id_b, r; 1-based ids, from COPY) with
      cupy64's: pair counts, pairs in one and not the other, and the largest
      |r| difference over the common pairs.

  env: PEER_LIMIT_S=40, PEERS="cupy32 cupy64 torch32 torch64 numpy pandas"
"""
import os
import sys
import time

import numpy as np

from pg_copy import write_copy_binary

LIMIT = float(os.environ.get("PEER_LIMIT_S", "40"))
PEERS = os.environ.get("PEERS", "cupy32 cupy64 torch32 torch64 numpy pandas").split()


# ---------------------------------------------------------------- gen

def walks(m, n, seed):
    rng = np.random.default_rng(seed)
    x = np.empty((m, n), dtype=np.float64)
    for s in range(0, m, 4096):
        e = min(m, s + 4096)
        eps = rng.uniform(-0.01, 0.01, size=(e - s, n))
        x[s:e] = 100.0 * np.cumprod(1.0 + eps, axis=1)
    return x


def gen(work, name, m, n, seed):
    t0 = time.perf_counter()
    x = walks(m, n, seed)
    np.save(os.path.join(work, name + ".npy"), x)
    write_copy_binary(os.path.join(work, name + ".bin"), x)
    print(f"{name}: {m} x {n} random walks written in {time.perf_counter() - t0:.1f} s",
          flush=True)


# ---------------------------------------------------------------- peers

def best_of(fn, reps=3, limit=LIMIT):
    """Best wall time (ms) of fn() over up to reps runs within the limit."""
    best = None
    out = None
    t_start = time.perf_counter()
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ms = 1000 * (time.perf_counter() - t0)
        best = ms if best is None else min(best, ms)
        if time.perf_counter() - t_start > limit:
            break
    return best, out


def gpu_peer(lib, x, t, dtype, work, name, save):
    """cupy or torch corrcoef: (matrix ms, matrix + pairs ms, pairs, note)."""
    if lib == "cupy":
        import cupy as cp
        mod = cp
        sync = cp.cuda.Device().synchronize
        t0 = time.perf_counter()
        xg = cp.asarray(x, dtype=dtype)
        sync()
        h2d = 1000 * (time.perf_counter() - t0)
        corr = cp.corrcoef

        def pairs(c):
            ia, ib = cp.nonzero(cp.triu(cp.abs(c) >= t, 1))
            return cp.asnumpy(ia), cp.asnumpy(ib), cp.asnumpy(c[ia, ib])
        version = f"cupy {cp.__version__}"
    else:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        dev = torch.device("cuda")
        sync = torch.cuda.synchronize
        tdt = torch.float32 if dtype == np.float32 else torch.float64
        t0 = time.perf_counter()
        xg = torch.as_tensor(x, dtype=tdt).to(dev)
        sync()
        h2d = 1000 * (time.perf_counter() - t0)
        corr = torch.corrcoef

        def pairs(c):
            idx = torch.nonzero(torch.triu(c.abs() >= t, 1))
            ia, ib = idx[:, 0], idx[:, 1]
            return ia.cpu().numpy(), ib.cpu().numpy(), c[ia, ib].cpu().numpy()
        version = f"torch {torch.__version__}"
    corr(xg[:256])              # kernels and handles before any timing
    sync()

    def matrix():
        c = corr(xg)
        sync()
        return c

    def matrix_pairs():
        c = corr(xg)
        p = pairs(c)
        sync()
        return p
    ms, c = best_of(matrix)
    del c
    ms2, p = best_of(matrix_pairs)
    if save:
        np.savez(os.path.join(work, name + ".cupy64.npz"), a=p[0], b=p[1], r=p[2])
    return ms, ms2, len(p[0]), f"{version}; copy to the GPU {h2d:.0f} ms"


def host_peer(kind, x, t):
    """numpy or pandas on the first m series that fit the limit, extrapolated."""
    m_all = x.shape[0]

    def run(m):
        sub = x[:m]
        if kind == "numpy":
            c = np.corrcoef(sub)
        else:
            import pandas as pd
            c = pd.DataFrame(sub.T).corr().to_numpy()
        ia, ib = np.nonzero(np.triu(np.abs(c) >= t, 1))
        return len(ia)

    m = min(m_all, 256)
    t0 = time.perf_counter()
    run(m)
    probe = time.perf_counter() - t0
    # time grows with m^2: the largest m whose run fits half the limit
    while m < m_all and probe * (min(m_all, 2 * m) / m) ** 2 < LIMIT / 2:
        m = min(m_all, 2 * m)
        t0 = time.perf_counter()
        run(m)
        probe = time.perf_counter() - t0
    if m == m_all:
        ms, n = best_of(lambda: run(m), reps=2)
        return ms, ms, n, ""
    t0 = time.perf_counter()
    n = run(m)
    ms = 1000 * (time.perf_counter() - t0) * (m_all / m) ** 2
    note = f"extrapolated from {m} series"
    if kind == "pandas":
        import pandas as pd
        note += f"; pandas {pd.__version__}"
    return ms, ms, None, note


def peers(work, name, t):
    x = np.load(os.path.join(work, name + ".npy"))
    for p in PEERS:
        try:
            if p.startswith("cupy") or p.startswith("torch"):
                lib = "cupy" if p.startswith("cupy") else "torch"
                dt = np.float32 if p.endswith("32") else np.float64
                ms, ms2, n, note = gpu_peer(lib, x, t, dt, work, name, p == "cupy64")
            else:
                ms, ms2, n, note = host_peer(p, x, t)
            print(f"{p}\t{ms:.1f}\t{ms2:.1f}\t{'-' if n is None else n}\t{note}", flush=True)
        except Exception as e:      # a peer that cannot run says why
            msg = str(e).split("\n")[0][:120]
            oom = "out of memory" in msg.lower() or type(e).__name__.endswith("OutOfMemoryError")
            print(f"{p}\t-\t-\t-\t{'OOM: ' if oom else 'unavailable: '}{type(e).__name__}: {msg}",
                  flush=True)
        finally:
            for lib in ("cupy", "torch"):
                if lib in sys.modules:
                    try:
                        if lib == "cupy":
                            sys.modules["cupy"].get_default_memory_pool().free_all_blocks()
                        else:
                            sys.modules["torch"].cuda.empty_cache()
                    except Exception:
                        pass


# ---------------------------------------------------------------- compare

def compare(work, name, tsv):
    path = os.path.join(work, name + ".cupy64.npz")
    if not os.path.exists(path):
        print("no cupy64 pairs to compare with")
        return
    ref = np.load(path)
    try:
        import pandas as pd     # its C parser reads millions of lines quickly
        o = pd.read_csv(tsv, sep="\t", header=None, dtype=np.float64).to_numpy()
    except ImportError:
        o = np.loadtxt(tsv, dtype=np.float64, ndmin=2)
    oa, ob, orr = o[:, 0].astype(np.int64) - 1, o[:, 1].astype(np.int64) - 1, o[:, 2]
    m = int(max(oa.max(initial=0), ob.max(initial=0), ref["a"].max(initial=0),
                ref["b"].max(initial=0))) + 1
    ko = oa * m + ob
    kr = ref["a"].astype(np.int64) * m + ref["b"]
    common, io, ir = np.intersect1d(ko, kr, return_indices=True)
    diff = np.max(np.abs(orr[io] - ref["r"][ir])) if len(common) else 0.0
    print(f"odp_gpu {len(ko)} pairs, cupy float64 {len(kr)}; only odp_gpu {len(ko) - len(common)}, "
          f"only cupy {len(kr) - len(common)}; max |r difference| over the common pairs {diff:.2e}")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "gen" and len(sys.argv) == 7:
        gen(sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:7]))
    elif cmd == "peers" and len(sys.argv) == 5:
        peers(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif cmd == "compare" and len(sys.argv) == 5:
        compare(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
