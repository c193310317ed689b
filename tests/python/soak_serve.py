"""Soak run of `olm-catalog serve` (loopback only, bounded in time; not part
of the test suite): N concurrent grpcio clients call every RPC of
api.Registry (and the health check) for D seconds against one catalog.

A first pass, one client, builds the plan: every call the catalog's own
answers suggest (each package, each bundle/channel row, each channel head,
each replaced CSV, each provided API) and its answer. During the soak every
answer must equal the first pass's, byte for byte (an error opm answers,
such as a bundle whose replacement is in another channel, is an answer
too); anything else (transport errors, timeouts, a different answer) is an
error. Prints p50/p99 latency per RPC, errors (must be 0), and the server's
resident memory after start, after the first pass, at the end of the soak
and 2 s later (must stay flat).

    python3 tests/python/soak_serve.py --bin target/release/olm-catalog \
        --catalog ../shared/opm-golden/sqlite/ack-ecr-controller/index.db \
        [--clients 64] [--seconds 60]
"""

import argparse
import hashlib
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("OLM_CATALOG_BIN", "")

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from servecommon import Server, stubs  # noqa: E402


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] * 1000


def answer(fn, req, streaming):
    """The call's answer as one digest: the serialized message(s), or the
    error's code and text."""
    h = hashlib.sha256()
    try:
        if streaming:
            for m in sorted(x.SerializeToString(deterministic=True) for x in fn(req, timeout=60)):
                h.update(len(m).to_bytes(8, "little"))
                h.update(m)
        else:
            h.update(fn(req, timeout=60).SerializeToString(deterministic=True))
        return "ok:" + h.hexdigest()
    except grpc.RpcError as e:
        if e.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL,
                        grpc.StatusCode.CANCELLED):
            raise
        return "err:%s:%s" % (e.code().name, e.details())


def plan(pb, stub):
    """Every (rpc, request, streaming) the catalog's answers suggest."""
    calls = [("ListPackages", pb.ListPackageRequest(), True), ("ListBundles", pb.ListBundlesRequest(), True)]
    packages = [p.name for p in stub.ListPackages(pb.ListPackageRequest(), timeout=60)]
    for name in packages:
        calls.append(("GetPackage", pb.GetPackageRequest(name=name), False))
        pkg = stub.GetPackage(pb.GetPackageRequest(name=name), timeout=60)
        for ch in pkg.channels:
            calls.append(("GetBundleForChannel", pb.GetBundleInChannelRequest(pkgName=name, channelName=ch.name), False))
    apis = set()
    for b in stub.ListBundles(pb.ListBundlesRequest(), timeout=60):
        calls.append(("GetBundle", pb.GetBundleRequest(pkgName=b.packageName, channelName=b.channelName, csvName=b.csvName), False))
        if b.replaces:
            calls.append(("GetChannelEntriesThatReplace", pb.GetAllReplacementsRequest(csvName=b.replaces), True))
            calls.append(("GetBundleThatReplaces", pb.GetReplacementRequest(
                csvName=b.replaces, pkgName=b.packageName, channelName=b.channelName), False))
        for a in b.providedApis:
            apis.add((a.group, a.version, a.kind))
    for g, v, k in sorted(apis):
        calls.append(("GetChannelEntriesThatProvide", pb.GetAllProvidersRequest(group=g, version=v, kind=k), True))
        calls.append(("GetLatestChannelEntriesThatProvide", pb.GetLatestProvidersRequest(group=g, version=v, kind=k), True))
        calls.append(("GetDefaultBundleThatProvides", pb.GetDefaultProviderRequest(group=g, version=v, kind=k), False))
    return calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=60)
    a = ap.parse_args()
    if a.seconds > 600 or a.clients > 256:
        sys.exit("refusing: at most 256 clients for 600 s")
    os.environ["OLM_CATALOG_BIN"] = a.bin
    pb, pb_grpc = stubs()
    health_req = health_pb2.HealthCheckRequest(service="")
    with Server(a.catalog) as server:
        server.wait_serving()
        pid = server.proc.pid
        mem = {"after start": rss_mib(pid)}
        with server.channel() as ch:
            stub = pb_grpc.RegistryStub(ch)
            calls = plan(pb, stub)
            expected = [answer(getattr(stub, rpc), req, s) for rpc, req, s in calls]
            health_expected = answer(health_pb2_grpc.HealthStub(ch).Check, health_req, False)
        mem["after first pass"] = rss_mib(pid)
        kinds = sorted({c[0] for c in calls}) + ["Health.Check"]
        lat = {k: [] for k in kinds}
        answered_errors = {k: 0 for k in kinds}
        errors = []
        lock = threading.Lock()
        stop = time.time() + a.seconds

        def client(i):
            mine = {k: [] for k in kinds}
            mine_err = {k: 0 for k in kinds}
            with server.channel() as ch:
                stub = pb_grpc.RegistryStub(ch)
                health = health_pb2_grpc.HealthStub(ch)
                n = i * 7919
                while time.time() < stop:
                    j = n % (len(calls) + 1)
                    n += 1
                    if j == len(calls):
                        kind, fn, req, s, want = "Health.Check", health.Check, health_req, False, health_expected
                    else:
                        kind, req, s = calls[j]
                        fn, want = getattr(stub, kind), expected[j]
                    t = time.perf_counter()
                    try:
                        got = answer(fn, req, s)
                    except Exception as e:  # noqa: BLE001 - counted and reported
                        with lock:
                            errors.append("%s: %r" % (kind, e))
                        continue
                    mine[kind].append(time.perf_counter() - t)
                    if got != want:
                        with lock:
                            errors.append("%s %s: answered %s, first pass %s" % (kind, req, got[:80], want[:80]))
                    elif got.startswith("err:"):
                        mine_err[kind] += 1
            with lock:
                for k in kinds:
                    lat[k].extend(mine[k])
                    answered_errors[k] += mine_err[k]

        # The server's RSS every 5 s of the soak: flat once the clients'
        # working set (connections, threads) is there.
        samples = []

        def sample():
            while time.time() < stop:
                samples.append(rss_mib(pid))
                time.sleep(5)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        threads.append(threading.Thread(target=sample))
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join(a.seconds + 300)
        took = time.time() - t0
        mem["end of soak"] = rss_mib(pid)
        time.sleep(2)
        mem["2 s later"] = rss_mib(pid)
    total = sum(len(v) for v in lat.values())
    print("catalog=%s" % a.catalog)
    print("clients=%d seconds=%.1f planned calls=%d calls=%d (%.0f/s) errors=%d load=%s"
          % (a.clients, took, len(calls), total, total / took, len(errors), open("/proc/loadavg").read().split()[:3]))
    for k in kinds:
        v = lat[k]
        print("%-36s n=%-7d p50=%8.2f ms  p99=%8.2f ms  max=%8.2f ms  (opm-style error answers: %d)"
              % (k, len(v), pct(v, 50), pct(v, 99), pct(v, 100), answered_errors[k]))
    print("server RSS MiB: " + ", ".join("%s %.1f" % (k, v) for k, v in mem.items()))
    print("server RSS MiB every 5 s of the soak: " + " ".join("%.1f" % v for v in samples))
    if errors:
        print("first errors:", errors[:5])
        sys.exit(1)


if __name__ == "__main__":
    main()
