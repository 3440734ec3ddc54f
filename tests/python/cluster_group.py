# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""One rank of a "netagg" group whose job the cluster gives (NETAGG_ETCD),
for tests/netagg_cluster.sh: init_process_group("netagg") under env://
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), then ITER all_reduces of
64K floats, rank r's i-th all r + 1 + i, each checked exact. With HOLD, a
file: after the first all_reduce, wait (120 s at most) until it exists.
Prints one JSON line: rank, ok, the group's stats, the text of every
NetaggFallbackWarning, the error that ended it; exits 1 unless ok.

    cluster_group.py ITER [HOLD]
"""

import json
import os
import sys
import time
import warnings

import torch
import torch.distributed as dist

import netagg.torch as nt


def main() -> int:
    iters = int(sys.argv[1])
    hold = sys.argv[2] if len(sys.argv) > 2 else None
    out: dict = {"rank": int(os.environ["RANK"]), "ok": False}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            dist.init_process_group("netagg")
            n, r = dist.get_world_size(), dist.get_rank()
            ok = True
            for i in range(iters):
                t = torch.full((65536,), float(r + 1 + i))
                dist.all_reduce(t)
                ok = ok and bool((t == sum(k + 1 + i for k in range(n))).all())
                if hold and i == 0:
                    end = time.monotonic() + 120
                    while not os.path.exists(hold) and time.monotonic() < end:
                        time.sleep(0.2)
            out.update(ok=ok, stats=nt.stats())
            dist.destroy_process_group()
        except Exception as e:  # the test reads what it was
            out["error"] = f"{type(e).__name__}: {e}"
    out["warnings"] = [str(w.message) for w in caught
                       if issubclass(w.category, nt.NetaggFallbackWarning)]
    print(json.dumps(out), flush=True)
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
