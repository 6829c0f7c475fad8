#!/usr/bin/env python3
"""Data, peers and report of the k-NN benchmark (issue 4; knn_bench.sh runs it).

  gen WORK N Q REPEAT CUBE_Q
      Random standard Gaussian float32 data at fixed seeds, as .npy files
      (the peers read these) and as COPY BINARY files of (id bigint, f real[])
      rows, ids 1..rows (what PostgreSQL loads: the same float32 values):
        t32   N x 32  (seed 32)    source of the self join and of cube
        t128  N x 128 (seed 128)   source of the batch and single queries
        q128  Q x 128 (seed 1128)  queries of the batch
        q32   CUBE_Q x 32 (seed 1032)  queries of the odp / cube comparison
      and single.txt: the first REPEAT rows of q128 (wrapping around) as
      float8[] literals, one per line, printed exactly (every float32 is a
      float8).

  peers WORK
      The same work done by the peers on the same values, timed:
        torch   PyTorch on the GPU, float32 (TF32 off): squared distances up
                to the query's own norm as one matrix product per chunk of
                queries (addmm with the rows' norms), topk of the k smallest,
                then the k distances; the self join masks each row's own
                column.  Times exclude the host -> GPU copy of the rows and
                queries (reported apart) and include the copy of the
                results back to the host.
        sklearn NearestNeighbors(algorithm='brute', n_jobs=-1) on the host
                CPUs, fit + kneighbors in chunks of queries; the self join
                times the first SK_SUBSET queries (k + 1 neighbours, the row
                itself dropped) and extrapolates linearly to all N.
      Each peer and workload stops at the first chunk boundary after
      PEER_LIMIT_S seconds and extrapolates linearly from the queries done
      (marked as such).  The single-query workload runs REPEAT calls of one
      query each (first call apart, as odp's).  Writes peers.tsv and the
      neighbour ids (ids.<workload>.<peer>.npy, 1-based like the tables).

  report WORK
      Reads odp.tsv (written by knn_bench.sh from odp_gpu's timing NOTICEs),
      peers.tsv, cube.tsv and the id files; prints the peers' times, the
      speedup of odp_gpu (compute and whole call) over each, and how many
      neighbour lists agree.

  env: K=10, PEERS="torch sklearn", PEER_LIMIT_S=40, SK_SUBSET=20000
"""
import os
import sys
import time

import numpy as np

from pg_copy import write_copy_binary

K = int(os.environ.get("K", "10"))
PEERS = os.environ.get("PEERS", "torch sklearn").split()
LIMIT = float(os.environ.get("PEER_LIMIT_S", "40"))
SK_SUBSET = int(os.environ.get("SK_SUBSET", "20000"))

SEEDS = {"t32": 32, "t128": 128, "q128": 1128, "q32": 1032}


# ---------------------------------------------------------------- gen

def gen(work, n, q, repeat, cube_q):
    t0 = time.perf_counter()
    shapes = {"t32": (n, 32), "t128": (n, 128), "q128": (q, 128), "q32": (cube_q, 32)}
    for name, shape in shapes.items():
        x = np.random.default_rng(SEEDS[name]).standard_normal(shape, dtype=np.float32)
        np.save(os.path.join(work, name + ".npy"), x)
        write_copy_binary(os.path.join(work, name + ".bin"), x)
    q128 = np.load(os.path.join(work, "q128.npy"))
    with open(os.path.join(work, "single.txt"), "w") as f:
        for i in range(repeat):
            # repr of a Python float is exact for a float32 value
            f.write("{" + ",".join(repr(float(v)) for v in q128[i % q]) + "}\n")
    print(f"generated {n} x 32, {n} x 128, {q} x 128, {cube_q} x 32 float32 "
          f"in {time.perf_counter() - t0:.1f} s", flush=True)


# ---------------------------------------------------------------- peers

class Capped(Exception):
    pass


def run_chunks(nq, chunk, fn, limit=LIMIT):
    """Runs fn(s, e) over query chunks until done or past the limit.
    Returns (queries done, seconds)."""
    t0 = time.perf_counter()
    done = 0
    for s in range(0, nq, chunk):
        e = min(nq, s + chunk)
        fn(s, e)
        done = e
        if time.perf_counter() - t0 > limit and done < nq:
            break
    return done, time.perf_counter() - t0


class TorchPeer:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device visible to torch")
        self.torch = torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        self.dev = torch.device("cuda")
        self.version = f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}"
        # CUDA context, cuBLAS handle and topk kernels before any timing
        a = torch.randn(256, 32, device=self.dev)
        torch.topk(a @ a.T, 4, dim=1, largest=False)
        torch.cuda.synchronize()

    def to_device(self, *arrays):
        torch = self.torch
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = [torch.from_numpy(a).to(self.dev) for a in arrays]
        torch.cuda.synchronize()
        return out, (time.perf_counter() - t0) * 1000

    def _knn(self, qg, xg, xn, k, self_offset=None):
        torch = self.torch
        d = torch.addmm(xn.unsqueeze(0), qg, xg.T, beta=1, alpha=-2)
        if self_offset is not None:
            r = torch.arange(qg.shape[0], device=self.dev)
            d[r, r + self_offset] = float("inf")
        v, i = torch.topk(d, k, dim=1, largest=False, sorted=True)
        dist = (v + (qg * qg).sum(1, keepdim=True)).clamp_min_(0).sqrt_()
        return dist, i

    def batch(self, qa, xa, k, self_join=False):
        """All queries (or every row, self join) against xa. Returns
        (done, ms, copy_ms, ids of the done queries or None)."""
        torch = self.torch
        if self_join:
            (xg,), copy_ms = self.to_device(xa)
            qg = xg
        else:
            (xg, qg), copy_ms = self.to_device(xa, qa)
        nq, n = qg.shape[0], xg.shape[0]
        chunk = max(1, min(nq, (1 << 30) // n))       # <= 4 GiB of distances
        ids = torch.empty((nq, k), dtype=torch.int64, device=self.dev)
        dists = torch.empty((nq, k), dtype=torch.float32, device=self.dev)
        state = {}

        def step(s, e):
            if "xn" not in state:
                state["xn"] = (xg * xg).sum(1)
            dd, ii = self._knn(qg[s:e], xg, state["xn"], k, s if self_join else None)
            ids[s:e] = ii
            dists[s:e] = dd
            torch.cuda.synchronize()

        torch.cuda.synchronize()
        t0 = time.perf_counter()
        done, _ = run_chunks(nq, chunk, step)
        out = (ids[:done] + 1).cpu().numpy()
        dists[:done].cpu()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1000
        del xg, qg, ids, dists, state
        torch.cuda.empty_cache()
        return done, ms, copy_ms, out

    def single(self, qa, xa, k, repeat):
        """repeat calls of one query each: (per-call ms list, copy ms, ids)."""
        torch = self.torch
        (xg,), copy_ms = self.to_device(xa)
        t0 = time.perf_counter()
        xn = (xg * xg).sum(1)
        torch.cuda.synchronize()
        copy_ms += (time.perf_counter() - t0) * 1000     # rows' norms: set-up, once
        times, ids = [], []
        t_start = time.perf_counter()
        for r in range(repeat):
            t0 = time.perf_counter()
            qg = torch.from_numpy(qa[r % len(qa)][None, :]).to(self.dev)
            _, i = self._knn(qg, xg, xn, k)
            ids.append(i.cpu().numpy()[0] + 1)          # synchronises
            times.append((time.perf_counter() - t0) * 1000)
            if time.perf_counter() - t_start > LIMIT:
                break
        del xg, xn
        torch.cuda.empty_cache()
        return times, copy_ms, np.array(ids)


class SklearnPeer:
    name = "sklearn"

    def __init__(self):
        import sklearn
        from sklearn.neighbors import NearestNeighbors
        self.NN = NearestNeighbors
        self.version = f"scikit-learn {sklearn.__version__}, {os.cpu_count()} host CPUs"

    def batch(self, qa, xa, k, self_join=False):
        nq = len(qa)
        if self_join:
            nq = min(nq, SK_SUBSET)
        kk = k + 1 if self_join else k
        ids = np.empty((nq, k), dtype=np.int64)
        chunk = 2048
        t0 = time.perf_counter()
        nn = self.NN(n_neighbors=kk, algorithm="brute", n_jobs=-1).fit(xa)

        def step(s, e):
            _, ii = nn.kneighbors(qa[s:e])
            if self_join:
                # drop the row itself (wherever rounding put it), keep k others
                keep = ii != np.arange(s, e)[:, None]
                ii = np.array([row[m][:k] for row, m in zip(ii, keep)])
            ids[s:e] = ii + 1

        done, _ = run_chunks(nq, chunk, step, limit=max(0.0, LIMIT - (time.perf_counter() - t0)))
        ms = (time.perf_counter() - t0) * 1000
        return done, ms, None, ids[:done]

    def single(self, qa, xa, k, repeat):
        t0 = time.perf_counter()
        nn = self.NN(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(xa)
        setup_ms = (time.perf_counter() - t0) * 1000
        times, ids = [], []
        t_start = time.perf_counter()
        for r in range(repeat):
            t0 = time.perf_counter()
            _, ii = nn.kneighbors(qa[r % len(qa)][None, :])
            times.append((time.perf_counter() - t0) * 1000)
            ids.append(ii[0] + 1)
            if time.perf_counter() - t_start > LIMIT:
                break
        return times, setup_ms, np.array(ids)


def peers(work):
    load = lambda name: np.load(os.path.join(work, name + ".npy"))
    t32, t128, q128 = load("t32"), load("t128"), load("q128")
    repeat = sum(1 for _ in open(os.path.join(work, "single.txt")))
    out = open(os.path.join(work, "peers.tsv"), "w")

    def emit(*fields):
        out.write("\t".join(str(f) for f in fields) + "\n")
        out.flush()

    for pname in PEERS:
        try:
            peer = TorchPeer() if pname == "torch" else SklearnPeer()
        except Exception as e:                 # a missing peer is reported, not fatal
            msg = f"{type(e).__name__}: {e}".replace("\t", " ").replace("\n", " ")
            print(f"peer {pname}: unavailable ({msg})", flush=True)
            for w in ("self", "batch", "single"):
                emit(w, pname, "unavailable", msg)
            continue
        print(f"peer {pname}: {peer.version}", flush=True)
        emit("info", pname, "version", peer.version)
        for w, qa, xa in (("self", t32, t32), ("batch", q128, t128)):
            try:
                done, ms, copy_ms, ids = peer.batch(qa, xa, K, self_join=(w == "self"))
            except Exception as e:
                msg = f"{type(e).__name__}: {e}".replace("\t", " ").replace("\n", " ")
                print(f"peer {pname} {w}: failed ({msg})", flush=True)
                emit(w, pname, "failed", msg)
                continue
            total = len(qa)
            est = ms * total / done if done else float("nan")
            copy = "-" if copy_ms is None else f"{copy_ms:.1f}"
            emit(w, pname, "ok", done, total, f"{ms:.1f}", f"{est:.1f}", copy)
            np.save(os.path.join(work, f"ids.{w}.{pname}.npy"), ids)
            note = "" if done == total else f", extrapolated from {done} queries"
            print(f"peer {pname} {w}: {est / 1000:.2f} s{note}", flush=True)
        try:
            times, copy_ms, ids = peer.single(q128, t128, K, repeat)
        except Exception as e:
            msg = f"{type(e).__name__}: {e}".replace("\t", " ").replace("\n", " ")
            print(f"peer {pname} single: failed ({msg})", flush=True)
            emit("single", pname, "failed", msg)
            continue
        warm = times[1:] or times
        emit("single", pname, "ok", len(times), repeat, f"{times[0]:.3f}",
             f"{sum(warm) / len(warm):.3f}", f"{copy_ms:.1f}")
        np.save(os.path.join(work, f"ids.single.{pname}.npy"), ids)
        print(f"peer {pname} single: {len(times)} calls, first {times[0]:.1f} ms, "
              f"then {sum(warm) / len(warm):.2f} ms per call", flush=True)
    out.close()


# ---------------------------------------------------------------- report

def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def read_ids_txt(path, k):
    """Lines 'query_id<sep>rank<sep>id' -> {query_id: [ids in rank order]}."""
    res = {}
    if not os.path.exists(path):
        return res
    with open(path) as f:
        for line in f:
            p = line.replace("|", "\t").split()
            if len(p) >= 3:
                res.setdefault(int(p[0]), []).append((int(p[1]), int(p[2])))
    return {q: [i for _, i in sorted(v)] for q, v in res.items()}


def agreement(a, b):
    """a, b: {query: id list}; compares the queries in both."""
    qs = sorted(set(a) & set(b))
    if not qs:
        return None
    same = sum(1 for q in qs if list(a[q]) == list(b[q]))
    sets = sum(1 for q in qs if set(a[q]) == set(b[q]))
    shared = sum(len(set(a[q]) & set(b[q])) for q in qs)
    total = sum(len(b[q]) for q in qs)
    return (f"{same}/{len(qs)} identical id lists ({100 * same / len(qs):.2f}%), "
            f"{100 * sets / len(qs):.2f}% same sets, recall {100 * shared / max(1, total):.3f}%")


def fmt_ms(v):
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}" if v < 10000 else f"{v:.0f}"


def fmt_x(peer_ms, odp_ms):
    if peer_ms is None or not odp_ms:
        return "-"
    x = peer_ms / odp_ms
    return f"{x:.0f}x" if x >= 100 else f"{x:.1f}x" if x >= 1 else f"{x:.2g}x"


def report(work):
    odp = {}
    for r in read_tsv(os.path.join(work, "odp.tsv")):
        # workload path rows queries dims k read qread transfer compute output whole chunks
        odp[r[0]] = dict(zip(["w", "path", "rows", "queries", "dims", "k", "read", "qread",
                              "transfer", "compute", "output", "whole", "chunks"], r))
    prs = read_tsv(os.path.join(work, "peers.tsv"))
    cube = {r[0]: r[1:] for r in read_tsv(os.path.join(work, "cube.tsv"))}

    def o(w, key, per=1):
        v = num(odp.get(w, {}).get(key))
        q = num(odp.get(w, {}).get("queries")) if per == "q" else per
        return v / q if v is not None and q else None

    for r in prs:
        if r[0] == "info":
            print(f"  {r[1]}: {r[3]}")
    hdr = (f"{'workload':<24} {'peer':<8} {'queries timed':>17} {'peer ms':>11} "
           f"{'copy ms':>8} {'odp compute':>12} {'odp whole':>11} {'x compute':>10} {'x whole':>9}")
    print(hdr)
    print("-" * len(hdr))
    labels = {"self": "self join, all rows", "batch": "batch queries",
              "single": "single query, per call"}
    shown = set()
    for r in prs:
        w, name, status = r[0], r[1], r[2]
        if w == "info":
            continue
        if status == "unavailable":
            if name not in shown:
                print(f"{'every workload':<24} {name:<8} unavailable: {r[3] if len(r) > 3 else ''}")
            shown.add(name)
            continue
        if status != "ok":
            print(f"{labels[w]:<24} {name:<8} {status}: {r[3] if len(r) > 3 else ''}")
            continue
        if w in ("self", "batch"):
            done, total, ms, est, copy = int(r[3]), int(r[4]), num(r[5]), num(r[6]), r[7]
            timed = f"{done}/{total}" + ("*" if done < total else "")
            oc, ow = o(w, "compute"), o(w, "whole")
            print(f"{labels[w]:<24} {name:<8} {timed:>17} {fmt_ms(est):>11} {copy:>8} "
                  f"{fmt_ms(oc):>12} {fmt_ms(ow):>11} {fmt_x(est, oc):>10} {fmt_x(est, ow):>9}")
        else:
            calls, first, avg, copy = r[3], num(r[5]), num(r[6]), r[7]
            oc, ow = o("single_warm", "compute"), o("single_warm", "whole")
            print(f"{labels[w]:<24} {name:<8} {calls + ' calls':>17} {fmt_ms(avg):>11} {copy:>8} "
                  f"{fmt_ms(oc):>12} {fmt_ms(ow):>11} {fmt_x(avg, oc):>10} {fmt_x(avg, ow):>9}")
            ocf, owf = o("single_cold", "compute"), o("single_cold", "whole")
            print(f"{'  first call':<24} {name:<8} {'1 call':>17} {fmt_ms(first):>11} {'':>8} "
                  f"{fmt_ms(ocf):>12} {fmt_ms(owf):>11} {fmt_x(first, ocf):>10} {fmt_x(first, owf):>9}")
    if "time" in cube:
        done, total, ms = int(cube["time"][0]), int(cube["time"][1]), num(cube["time"][2])
        per_q = ms / done if done else None
        timed = f"{done}/{total}" + ("*" if done < total else "")
        for ref, lab in (("q100", f"vs odp join, {total} q"), ("self", "vs odp self join/q"),
                         ("batch", "vs odp batch/q (D=128)")):
            if ref not in odp:
                continue
            oc, ow = o(ref, "compute", "q"), o(ref, "whole", "q")
            print(f"{'cube GiST, per query':<24} {'cube':<8} {timed:>17} {fmt_ms(per_q):>11} {'-':>8} "
                  f"{fmt_ms(oc):>12} {fmt_ms(ow):>11} {fmt_x(per_q, oc):>10} {fmt_x(per_q, ow):>9}  {lab}")
    elif "status" in cube:
        print(f"{'cube GiST, per query':<24} {'cube':<8} {' '.join(cube['status'])}")
    for extra in ("gist_build",):
        if extra in cube:
            print(f"  (cube: table + GiST index build {cube[extra][0]} ms, not timed in the comparison)")
    print("x compute / x whole: peer time over odp_gpu's compute phase / whole SQL call "
          "(per query for cube, per call for single queries); * = extrapolated linearly "
          "from the queries timed (time cap or subset); copy ms: host -> GPU copy of the "
          "rows and queries (torch), or fit (sklearn single), not in peer ms")

    # agreement of neighbour ids
    print()
    lines = []
    odp_batch = read_ids_txt(os.path.join(work, "odp_ids.batch.txt"), K)
    odp_q100 = read_ids_txt(os.path.join(work, "odp_ids.q100.txt"), K)
    odp_single = {}
    p = os.path.join(work, "odp_ids.single.txt")
    if os.path.exists(p):
        for i, line in enumerate(open(p)):
            odp_single[i] = [int(v) for v in line.strip().split(",") if v]
    for pname in PEERS:
        for w, ref in (("batch", odp_batch), ("single", odp_single)):
            f = os.path.join(work, f"ids.{w}.{pname}.npy")
            if not ref or not os.path.exists(f):
                continue
            ids = np.load(f)
            base = 1 if w == "batch" else 0
            peer = {i + base: list(row) for i, row in enumerate(ids)}
            a = agreement(ref, peer)
            if a:
                lines.append(f"{labels[w]}: odp_gpu vs {pname}: {a}")
    cube_ids = read_ids_txt(os.path.join(work, "cube_ids.txt"), K)
    if odp_q100 and cube_ids:
        a = agreement(odp_q100, cube_ids)
        if a:
            lines.append(f"{len(cube_ids)} queries D=32: odp_gpu vs cube: {a}")
    for line in lines:
        print(line)
    if lines:
        print("(near ties can swap under float rounding, torch's matrix-product distances "
              "most of all: a fraction, not a failure)")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "gen" and len(sys.argv) == 7:
        gen(sys.argv[2], *(int(a) for a in sys.argv[3:7]))
    elif cmd == "peers" and len(sys.argv) == 3:
        peers(sys.argv[2])
    elif cmd == "report" and len(sys.argv) == 3:
        report(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
