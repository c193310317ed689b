"""Load test of `olm-catalog serve` (loopback only, bounded in time):
N concurrent grpcio clients alternate ListBundles and GetBundle for D
seconds; any error fails the run; latency percentiles are printed.

    python3 tests/python/load_serve.py --bin target/release/olm-catalog \
        --catalog CATALOG [--clients 50] [--seconds 30]
"""

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("OLM_CATALOG_BIN", "")

from servecommon import Server, stubs  # noqa: E402


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()
    if a.seconds > 120 or a.clients > 200:
        sys.exit("refusing: at most 200 clients for 120 s")
    os.environ["OLM_CATALOG_BIN"] = a.bin
    pb, pb_grpc = stubs()
    with Server(a.catalog) as server:
        server.wait_serving()
        with server.channel() as ch:
            listed = list(pb_grpc.RegistryStub(ch).ListBundles(pb.ListBundlesRequest(), timeout=30))
        keys = [(b.packageName, b.channelName, b.csvName) for b in listed]
        lat = {"ListBundles": [], "GetBundle": []}
        errors = []
        lock = threading.Lock()
        stop = time.time() + a.seconds

        def client(i):
            mine = {"ListBundles": [], "GetBundle": []}
            with server.channel() as ch:
                stub = pb_grpc.RegistryStub(ch)
                n = i
                while time.time() < stop:
                    try:
                        t = time.perf_counter()
                        got = sum(1 for _ in stub.ListBundles(pb.ListBundlesRequest(), timeout=30))
                        mine["ListBundles"].append(time.perf_counter() - t)
                        if got != len(keys):
                            raise AssertionError("ListBundles gave %d, want %d" % (got, len(keys)))
                        pkg, chn, name = keys[n % len(keys)]
                        n += 1
                        t = time.perf_counter()
                        b = stub.GetBundle(pb.GetBundleRequest(pkgName=pkg, channelName=chn, csvName=name), timeout=30)
                        mine["GetBundle"].append(time.perf_counter() - t)
                        if b.csvName != name:
                            raise AssertionError("GetBundle answered %s for %s" % (b.csvName, name))
                    except Exception as e:  # noqa: BLE001 - counted and reported
                        with lock:
                            errors.append(repr(e))
                        return
            with lock:
                for k, v in mine.items():
                    lat[k].extend(v)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join(a.seconds + 120)
        took = time.time() - t0
    total = sum(len(v) for v in lat.values())
    print("clients=%d seconds=%.1f calls=%d (%.0f/s) errors=%d" % (a.clients, took, total, total / took, len(errors)))
    for k, v in lat.items():
        print("%-12s n=%-6d p50=%7.2f ms  p90=%7.2f ms  p99=%7.2f ms  max=%7.2f ms"
              % (k, len(v), pct(v, 50), pct(v, 90), pct(v, 99), pct(v, 100)))
    if errors:
        print("first errors:", errors[:5])
        sys.exit(1)


if __name__ == "__main__":
    main()
