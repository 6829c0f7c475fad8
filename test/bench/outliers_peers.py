#!/usr/bin/env python3
"""Peers of odp_top_outliers on the same data, in the same run (issue 3):

  torch   : brute force on the GPU: chunked torch.cdist + topk of the k+1
            smallest (the row itself is one of them, at distance 0), weight
            = sum of the k smallest others, then the top n.
  sklearn : NearestNeighbors (default algorithm: a tree for low dimensions)
            on all host CPUs (n_jobs=-1), kneighbors of every row.

One k-NN pass with the largest k serves every k (prefix sums).  Prints one
line per data set, peer and k: the time and the top-n ids, so that the
benchmark can compare them with odp_gpu's.

Usage: outliers_peers.py DATADIR NAME [NAME ...]
  (env: PEERS="torch sklearn", KS="5 10 50", N=10, PEER_LIMIT_S=120: a peer
  still running then is reported as slower than that)
"""
import os
import signal
import sys
import time

import numpy as np

KS = [int(k) for k in os.environ.get("KS", "5 10 50").split()]
N = int(os.environ.get("N", "10"))
PEERS = os.environ.get("PEERS", "torch sklearn").split()
LIMIT = int(os.environ.get("PEER_LIMIT_S", "120"))   # per peer and data set


def _expired(signum, frame):
    raise TimeoutError(f"over {LIMIT} s")


def top_ids(weights, n):
    # ties by smaller id; ids are 1-based row numbers as loaded into PostgreSQL
    order = np.lexsort((np.arange(len(weights)), -weights))[:n]
    return [int(i) + 1 for i in order]


def torch_peer(x, kmax):
    import torch
    dev = torch.device("cuda")
    xt = torch.from_numpy(x).to(dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    chunk = max(256, min(8192, int(2**30 // (4 * x.shape[0]))))   # <= 1 GiB of distances
    sums = []
    for s in range(0, x.shape[0], chunk):
        d = torch.cdist(xt[s:s + chunk], xt)
        v, _ = torch.topk(d, kmax + 1, dim=1, largest=False)
        sums.append(torch.cumsum(v[:, 1:].double(), dim=1))   # drop one zero (self)
    c = torch.cat(sums).cpu().numpy()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, c


def sklearn_peer(x, kmax):
    from sklearn.neighbors import NearestNeighbors
    t0 = time.perf_counter()
    nn = NearestNeighbors(n_neighbors=kmax + 1, n_jobs=-1).fit(x)
    d, _ = nn.kneighbors(x)
    c = np.cumsum(d[:, 1:], axis=1)
    return time.perf_counter() - t0, c


def main():
    datadir = sys.argv[1]
    kmax = max(KS)
    for name in sys.argv[2:]:
        path = os.path.join(datadir, name + ".npy")
        if not os.path.exists(path):
            continue
        x = np.load(path)
        for peer in PEERS:
            signal.signal(signal.SIGALRM, _expired)
            signal.alarm(LIMIT)
            try:
                secs, csum = (torch_peer if peer == "torch" else sklearn_peer)(x, kmax)
            except TimeoutError:
                for k in KS:
                    print(f"peer {name} {peer} {k} >{LIMIT * 1000} -", flush=True)
                continue
            except Exception as e:          # a missing peer is reported, not fatal
                print(f"peer {name} {peer} - unavailable: {type(e).__name__}: {e}", flush=True)
                continue
            finally:
                signal.alarm(0)
            for k in KS:
                ids = top_ids(csum[:, k - 1], N)
                print(f"peer {name} {peer} {k} {secs * 1000:.1f} {','.join(map(str, ids))}", flush=True)


if __name__ == "__main__":
    main()
