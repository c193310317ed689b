"""ListBundles of one SQLite index served by opm and by olm-catalog, side by
side (issue 38 item 4): both servers up at once, calls interleaved so that
load on the machine falls on both alike; medians, idle and after-list RSS.

    python3 tests/python/bench_serve_vs_opm.py --bin target/release/olm-catalog \
        --opm /path/to/opm --catalog index.db [--runs 30]

opm is not built or fetched here: pass a binary you have (`opm registry
serve` is what `opm` v1.26.5 serves an index with).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from bench_serve import free_port, rss_mib  # noqa: E402
from servecommon import stubs  # noqa: E402


def start(argv, port):
    """Starts a server on `port`; returns the process once it is SERVING."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addr = "127.0.0.1:%d" % port
    t0 = time.perf_counter()
    while True:
        if proc.poll() is not None or time.perf_counter() - t0 > 60:
            raise RuntimeError("%s did not start" % argv[0])
        try:
            with grpc.insecure_channel(addr) as ch:
                r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=1)
                if r.status == health_pb2.HealthCheckResponse.SERVING:
                    return proc
        except grpc.RpcError:
            time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--opm", required=True)
    ap.add_argument("--catalog", required=True, help="a SQLite index database")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument(
        "--native",
        help="benches/serve_rpc binary: also time both servers with a native (tonic) client, "
        "whose figure is the server's own (grpcio spends tens of microseconds a message)",
    )
    a = ap.parse_args()
    os.environ["OLM_CATALOG_BIN"] = a.bin
    pb, pb_grpc = stubs()

    tmp = tempfile.mkdtemp(prefix="bench-vs-opm-")
    # opm may migrate the database it serves: it gets its own copy.
    opm_db = os.path.join(tmp, "opm.db")
    shutil.copyfile(a.catalog, opm_db)
    ports = {"opm": free_port(), "ours": free_port()}
    argv = {
        "opm": [a.opm, "registry", "serve", "-d", opm_db, "-p", str(ports["opm"]),
                "-t", os.path.join(tmp, "termination.log")],
        "ours": [a.bin, "serve", a.catalog, "--address", "127.0.0.1", "--port", str(ports["ours"])],
    }
    procs = {}
    try:
        for k in ("opm", "ours"):
            procs[k] = start(argv[k], ports[k])
        time.sleep(1.0)
        idle = {k: rss_mib(p.pid) for k, p in procs.items()}
        opts = [("grpc.max_receive_message_length", 256 * 1024 * 1024)]
        chans = {k: grpc.insecure_channel("127.0.0.1:%d" % ports[k], options=opts) for k in procs}
        # Undecoded: the client's protobuf decoding is not the server's time.
        calls = {
            k: ch.unary_stream(
                "/api.Registry/ListBundles",
                request_serializer=pb.ListBundlesRequest.SerializeToString,
                response_deserializer=None,
            )
            for k, ch in chans.items()
        }
        sizes = {}
        for k, call in calls.items():
            msgs = list(call(pb.ListBundlesRequest(), timeout=120))
            sizes[k] = (len(msgs), sum(len(m) for m in msgs))
        times = {k: [] for k in calls}
        for _ in range(a.runs):
            for k, call in calls.items():
                t = time.perf_counter()
                for _m in call(pb.ListBundlesRequest(), timeout=120):
                    pass
                times[k].append(time.perf_counter() - t)
        after = {k: rss_mib(p.pid) for k, p in procs.items()}
        for ch in chans.values():
            ch.close()
        native = {k: [] for k in procs}
        if a.native:
            for _ in range(3):
                for k in procs:
                    out = subprocess.run(
                        [a.native, "127.0.0.1:%d" % ports[k], "10"], check=True, capture_output=True, text=True
                    ).stdout
                    line = next(l for l in out.splitlines() if "ListBundles" in l)
                    native[k].append(float(line.split("median")[1].split("ms")[0]))
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        shutil.rmtree(tmp, True)
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print("catalog: %s" % a.catalog)
    print("Python grpcio client, messages left undecoded:")
    for k in ("opm", "ours"):
        print(
            "%-4s ListBundles median %8.2f ms (min %.2f, %d calls), %d messages, %.1f MiB; "
            "RSS idle %.1f MiB, after lists %.1f MiB"
            % (k, med[k], min(times[k]) * 1000, len(times[k]), sizes[k][0], sizes[k][1] / 1048576.0,
               idle[k], after[k])
        )
    print("ours/opm: ListBundles %.3fx, idle RSS %.2fx" % (med["ours"] / med["opm"], idle["ours"] / idle["opm"]))
    if a.native:
        nat = {k: statistics.median(v) for k, v in native.items()}
        print(
            "native client: ListBundles median opm %.2f ms, ours %.2f ms, ours/opm %.3fx"
            % (nat["opm"], nat["ours"], nat["ours"] / nat["opm"])
        )


if __name__ == "__main__":
    main()
