#!/usr/bin/env python3
"""Writes the benchmark data sets of issue 3 as headerless CSV files (and
.npy copies for the peers) into OUTDIR: the feature columns only, no id, no
label.

  cover  : ADBench 10_cover (Covtype's quantitative attributes), 286,048 x 10
  donors : ADBench 11_donors, 619,326 x 10
  http   : ADBench 16_http, 567,498 x 3
  poker  : 1,000,000 uniformly random 5-card hands in the UCI encoding
           (S1,C1,...,S5,C5; suit 1-4, rank 1-13; 5 distinct cards), seed 1
  g2d    : 1,000,000 points of a 2-d standard Gaussian, seed 2
  celeba : ADBench 8_celeba, 202,599 x 39 attributes of 0/1 (issue 28)
  kdd    : KDD Cup 1999 10% (kddcup99/), 494,021 x 38: the numeric
           columns (the three symbolic ones and the label left out)

Usage: outliers_datasets.py DATASETS_DIR OUTDIR [NAME ...]
The ADBench files are read from DATASETS_DIR (../shared/datasets); a
missing file is reported and skipped.  Data files are never committed.
"""
import gzip
import os
import sys

import numpy as np


def adbench(path):
    with gzip.open(path, "rt") as f:
        a = np.loadtxt(f, delimiter=",", dtype=np.float64)
    return a[:, :-1]                      # last column is the label


def kdd(path):
    cols = []
    with gzip.open(path, "rt") as f:
        for line in f:
            v = line.rstrip(".\n").split(",")
            cols.append([float(x) for i, x in enumerate(v[:-1]) if i not in (1, 2, 3)])
    return np.array(cols, dtype=np.float64)


def poker(n=1_000_000, seed=1):
    rng = np.random.default_rng(seed)
    cards = np.argsort(rng.random((n, 52)), axis=1)[:, :5]   # 5 distinct of 52
    suit = cards // 13 + 1
    rank = cards % 13 + 1
    out = np.empty((n, 10), dtype=np.float64)
    out[:, 0::2] = suit
    out[:, 1::2] = rank
    return out


def g2d(n=1_000_000, seed=2):
    return np.random.default_rng(seed).standard_normal((n, 2))


def main():
    src, out = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or ["cover", "donors", "http", "poker", "g2d"]
    os.makedirs(out, exist_ok=True)
    files = {"cover": "10_cover", "donors": "11_donors", "http": "16_http",
             "celeba": "8_celeba"}
    for name in names:
        if name in files:
            path = os.path.join(src, "adbench_classical", "csv", files[name] + ".csv.gz")
            if not os.path.exists(path):
                print(f"{name}: {path} missing, skipped", flush=True)
                continue
            x = adbench(path)
        elif name == "kdd":
            path = os.path.join(src, "kddcup99", "kddcup.data_10_percent.gz")
            if not os.path.exists(path):
                print(f"{name}: {path} missing, skipped", flush=True)
                continue
            x = kdd(path)
        elif name == "poker":
            x = poker()
        elif name == "g2d":
            x = g2d()
        else:
            raise SystemExit(f"unknown data set {name}")
        x = x.astype(np.float32)            # what odp_gpu computes on (real[])
        np.save(os.path.join(out, name + ".npy"), x)
        np.savetxt(os.path.join(out, name + ".csv"), x, delimiter=",", fmt="%.9g")
        print(f"{name}: {x.shape[0]} x {x.shape[1]}", flush=True)


if __name__ == "__main__":
    main()
