"""Benchmarks of `olm-catalog serve` (medians; loopback only):
start to SERVING, resident memory idle and after a full ListBundles,
ListBundles, GetBundleForChannel and GetBundle latency.

    python3 tests/python/bench_serve.py --bin target/release/olm-catalog --catalog CATALOG
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from servecommon import stubs  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def start(binary, catalog):
    """Starts the server; returns (process, address, seconds to SERVING)."""
    port = free_port()
    addr = "127.0.0.1:%d" % port
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [binary, "serve", catalog, "--address", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while True:
        # Plain TCP probe first: a gRPC channel to a closed port backs off.
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            if proc.poll() is not None or time.perf_counter() - t0 > 60:
                raise RuntimeError("server did not start")
            time.sleep(0.0005)
            continue
        with grpc.insecure_channel(addr) as ch:
            r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
            if r.status == health_pb2.HealthCheckResponse.SERVING:
                return proc, addr, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument(
        "--native",
        help="benches/serve_rpc binary: also measure with a native (tonic) client, "
        "which does not add the interpreter's per-message cost",
    )
    a = ap.parse_args()
    os.environ["OLM_CATALOG_BIN"] = a.bin
    pb, pb_grpc = stubs()

    starts = []
    for _ in range(a.runs):
        proc, _, took = start(a.bin, a.catalog)
        starts.append(took)
        proc.kill()
        proc.wait()

    proc, addr, _ = start(a.bin, a.catalog)
    try:
        time.sleep(0.5)
        idle = rss_mib(proc.pid)
        opts = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        with grpc.insecure_channel(addr, options=opts) as ch:
            stub = pb_grpc.RegistryStub(ch)
            n = len(list(stub.ListBundles(pb.ListBundlesRequest(), timeout=30)))
            after_list = rss_mib(proc.pid)
            lists = []
            for _ in range(30):
                t = time.perf_counter()
                list(stub.ListBundles(pb.ListBundlesRequest(), timeout=30))
                lists.append(time.perf_counter() - t)
            after_lists = rss_mib(proc.pid)
            # The same call with the messages left as bytes: the difference
            # to the figure above is this client's protobuf decoding.
            raw_call = ch.unary_stream(
                "/api.Registry/ListBundles",
                request_serializer=pb.ListBundlesRequest.SerializeToString,
                response_deserializer=None,
            )
            raws = []
            size = 0
            for _ in range(30):
                t = time.perf_counter()
                size = sum(len(m) for m in raw_call(pb.ListBundlesRequest(), timeout=30))
                raws.append(time.perf_counter() - t)
            heads = []
            pkgs = [p.name for p in stub.ListPackages(pb.ListPackageRequest(), timeout=10)]
            reqs = []
            for name in pkgs:
                p = stub.GetPackage(pb.GetPackageRequest(name=name), timeout=10)
                reqs += [pb.GetBundleInChannelRequest(pkgName=name, channelName=c.name) for c in p.channels]
            for i in range(300):
                t = time.perf_counter()
                stub.GetBundleForChannel(reqs[i % len(reqs)], timeout=10)
                heads.append(time.perf_counter() - t)
            # GetBundle of every listed (package, channel, bundle) in turn:
            # what OLM's resolver asks, with the bundle's manifests.
            rows = [
                pb.GetBundleRequest(pkgName=b.packageName, channelName=b.channelName, csvName=b.csvName)
                for b in stub.ListBundles(pb.ListBundlesRequest(), timeout=30)
            ]
            gets = []
            for i in range(300):
                t = time.perf_counter()
                stub.GetBundle(rows[i % len(rows)], timeout=10)
                gets.append(time.perf_counter() - t)
        native = ""
        if a.native:
            native = subprocess.run([a.native, addr, "30"], check=True, capture_output=True, text=True).stdout
    finally:
        proc.kill()
        proc.wait()
    ms = lambda xs: statistics.median(xs) * 1000
    print("catalog: %s (%d bundle/channel pairs, %d packages)" % (a.catalog, n, len(pkgs)))
    print("start to SERVING      median %6.1f ms (min %.1f, %d runs)" % (ms(starts), min(starts) * 1000, len(starts)))
    print("RSS idle                     %6.1f MiB" % idle)
    print("RSS after ListBundles        %6.1f MiB (after 31: %.1f MiB)" % (after_list, after_lists))
    print("Python grpcio client:")
    print("ListBundles           median %6.2f ms (%d calls)" % (ms(lists), len(lists)))
    print("ListBundles undecoded median %6.2f ms (%.1f MiB of messages)" % (ms(raws), size / 1048576.0))
    print("GetBundleForChannel   median %6.3f ms (%d calls)" % (ms(heads), len(heads)))
    print("GetBundle             median %6.3f ms (%d calls over %d bundle/channel pairs)" % (ms(gets), len(gets), len(rows)))
    if native:
        print("native (tonic) client, benches/serve_rpc.rs:")
        print(native, end="")


if __name__ == "__main__":
    main()
