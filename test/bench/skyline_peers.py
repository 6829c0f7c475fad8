"""Skyline peers and data conversion for test/bench/skyline_bench.sh.

  skyline_peers.py torch FILE N D        GPU brute force in PyTorch, float64: blocks
                                     of rows against blocks of rows, a row kept
                                     while no other row dominates it (every
                                     feature <=, one <); prints "torch_ms=..
                                     members=..", or "torch=skipped (why)"
  skyline_peers.py copy FILE N D OUT     the rows as a COPY BINARY file of
                                     (id bigint, v float8[]) (pg_copy.py)
  skyline_peers.py csv FILE N D OUT      the rows as SkyBench reads them (one row a
                                     line, each value followed by a comma)
  skyline_peers.py real NAME SRC OUT     a data set of ../shared/datasets/skyline as
                                     float64 rows (FILE for the commands above);
                                     prints "rows dims"

Every program reads the same float64 values; smaller is better in every
feature, as in SkyBench.  PEER_LIMIT_S (default 60) bounds the torch run: it
stops between blocks once over, and reports the time as a lower bound.
"""
import gzip
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_copy import write_copy_binary  # noqa: E402

LIMIT_S = float(os.environ.get("PEER_LIMIT_S", "60"))


def load(path, n, d):
    return np.fromfile(path, dtype=np.float64, count=n * d).reshape(n, d)


def torch_skyline(x):
    import torch
    if not torch.cuda.is_available():
        print("torch=skipped (no CUDA device for torch)")
        return
    dev = torch.device("cuda")
    n, d = x.shape
    # the (q, p, d) comparison tensors bound the block sizes: about 1 GB
    qb = 4096
    pb = max(64, min(n, (1 << 30) // (qb * d * 2)))
    t = torch.from_numpy(x).to(dev)
    torch.cuda.synchronize()
    start = time.time()
    dominated = torch.zeros(n, dtype=torch.bool, device=dev)
    done_rows = 0
    for q0 in range(0, n, qb):
        q = t[q0:q0 + qb]
        dom = torch.zeros(q.shape[0], dtype=torch.bool, device=dev)
        for p0 in range(0, n, pb):
            p = t[p0:p0 + pb]
            le = (p[None, :, :] <= q[:, None, :]).all(dim=2)
            lt = (p[None, :, :] < q[:, None, :]).any(dim=2)
            dom |= (le & lt).any(dim=1)
        dominated[q0:q0 + qb] = dom
        done_rows = q0 + q.shape[0]
        if time.time() - start > LIMIT_S:
            break
    torch.cuda.synchronize()
    ms = (time.time() - start) * 1000.0
    if done_rows < n:
        # the rate so far, extrapolated to every row
        print("torch_ms=>%.0f members=? (stopped after %d of %d rows; all rows at this rate: %.0f ms)"
              % (ms, done_rows, n, ms * n / done_rows))
        return
    print("torch_ms=%.1f members=%d" % (ms, int((~dominated).sum().item())))


def write_csv(x, out):
    with open(out, "w") as f:
        for s in range(0, x.shape[0], 65536):
            np.savetxt(f, x[s:s + 65536], fmt="%.9g", delimiter=",", newline=",\n")


def read_real(name, src):
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        lines = [ln.strip() for ln in f if ln.strip()]
    if name == "nba":
        rows = [[float(v) for v in ln.rstrip(",").split(",")] for ln in lines]
    else:
        rows = [[float(v) for v in ln.split()] for ln in lines]
    return np.asarray(rows, dtype=np.float64)


def main():
    cmd = sys.argv[1]
    if cmd == "real":
        x = read_real(sys.argv[2], sys.argv[3])
        x.tofile(sys.argv[4])
        print(x.shape[0], x.shape[1])
        return
    x = load(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    if cmd == "torch":
        try:
            torch_skyline(x)
        except ImportError:
            print("torch=skipped (no torch)")
        except RuntimeError as e:
            print("torch=skipped (%s)" % str(e).splitlines()[0][:80])
    elif cmd == "copy":
        write_copy_binary(sys.argv[5], x)
    elif cmd == "csv":
        write_csv(x, sys.argv[5])


if __name__ == "__main__":
    main()
