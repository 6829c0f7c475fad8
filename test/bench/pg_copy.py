"""COPY BINARY files of (id bigint, v real[] or float8[]) rows, for the benchmarks.

PostgreSQL loads them with COPY ... WITH (FORMAT binary) exactly as written:
the float32 or float64 values of the array, ids 1..rows.
"""
import os

import numpy as np

# element type oid and size of each array type
_ELEMENTS = {np.dtype(np.float32): (700, ">f4", 4), np.dtype(np.float64): (701, ">f8", 8)}


def write_copy_binary(path, x, chunk=8192):
    """x (float32 or float64 rows) as a COPY BINARY file of (id bigint, v real[] / float8[])."""
    n, d = x.shape
    oid, fmt, size = _ELEMENTS[x.dtype]
    rec = np.dtype([("nfields", ">i2"), ("idlen", ">i4"), ("id", ">i8"),
                    ("arrlen", ">i4"), ("ndim", ">i4"), ("hasnull", ">i4"),
                    ("elemtype", ">u4"), ("dim", ">i4"), ("lbound", ">i4"),
                    ("v", [("len", ">i4"), ("val", fmt)], (d,))])
    with open(path, "wb") as f:
        f.write(b"PGCOPY\n\xff\r\n\x00" + np.zeros(2, ">i4").tobytes())
        for s in range(0, n, chunk):
            e = min(n, s + chunk)
            r = np.empty(e - s, dtype=rec)
            r["nfields"] = 2
            r["idlen"] = 8
            r["id"] = np.arange(s + 1, e + 1)
            r["arrlen"] = 20 + (4 + size) * d
            r["ndim"] = 1
            r["hasnull"] = 0
            r["elemtype"] = oid
            r["dim"] = d
            r["lbound"] = 1
            r["v"]["len"] = size
            r["v"]["val"] = x[s:e]
            r.tofile(f)
        f.write(np.array([-1], ">i2").tobytes())
    os.chmod(path, 0o644)
