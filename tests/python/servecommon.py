"""Shared helpers for the gRPC client tests of `olm-catalog serve`.

The client is grpcio with stubs generated here, at test time, from
schema/registry.proto by grpcio-tools: nothing of the server's own code is
used on this side.
"""

import atexit
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(REPO, "schema")

_stubs = None


def stubs():
    """(registry_pb2, registry_pb2_grpc) generated from schema/registry.proto."""
    global _stubs
    if _stubs is None:
        from grpc_tools import protoc

        out = tempfile.mkdtemp(prefix="olm-catalog-stubs-")
        # Imported once per process; gone when the process ends.
        atexit.register(shutil.rmtree, out, True)
        rc = protoc.main(
            [
                "grpc_tools.protoc",
                "-I" + PROTO_DIR,
                "--python_out=" + out,
                "--grpc_python_out=" + out,
                os.path.join(PROTO_DIR, "registry.proto"),
            ]
        )
        if rc != 0:
            raise RuntimeError("protoc failed on schema/registry.proto")
        sys.path.insert(0, out)
        _stubs = (importlib.import_module("registry_pb2"), importlib.import_module("registry_pb2_grpc"))
    return _stubs


def binary():
    path = os.environ.get("OLM_CATALOG_BIN")
    if not path:
        raise RuntimeError("OLM_CATALOG_BIN must name the built olm-catalog binary")
    return path


class Server:
    """`olm-catalog serve CATALOG` on a free loopback port (port 0: the OS picks)."""

    def __init__(self, catalog, *extra):
        self.cmd = [binary(), "serve", catalog, "--address", "127.0.0.1", "--port", "0", *extra]
        self.proc = None
        self.addr = None
        self.log = []

    def start(self, timeout=60):
        env = None
        tmp = os.environ.get("OLM_CATALOG_SERVER_TMPDIR")
        if tmp:
            # The server's temporary directory only (this process keeps its own).
            env = dict(os.environ, TMPDIR=tmp)
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        found = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line.rstrip("\n"))
                m = re.search(r"serving api\.Registry on (\S+)", line)
                if m:
                    self.addr = m.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(timeout) or self.addr is None:
            self.stop()
            raise RuntimeError("server did not start: %s" % "\n".join(self.log))
        return self

    def channel(self):
        return grpc.insecure_channel(
            self.addr, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        )

    def wait_serving(self, timeout=30):
        deadline = time.time() + timeout
        with self.channel() as ch:
            health = health_pb2_grpc.HealthStub(ch)
            while True:
                try:
                    r = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
                    if r.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    if time.time() > deadline:
                        raise
                time.sleep(0.02)

    def terminate(self, timeout=30):
        """SIGTERM; returns the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            # SIGTERM: the server shuts down and removes its temporary files.
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def run_failing(catalog, *extra, timeout=30):
    """Runs `serve` expecting it to fail at start: (exit code, stderr)."""
    p = subprocess.run(
        [binary(), "serve", catalog, "--address", "127.0.0.1", "--port", "0", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
    )
    return p.returncode, p.stderr


class ServedCatalogTest(unittest.TestCase):
    """Base of the answer tests: one server over a catalog for the whole
    class (`serve` from setUpClass), and opm's error answers checked."""

    @classmethod
    def serve(cls, catalog):
        cls.server = Server(catalog).start()
        cls.server.wait_serving()
        cls.channel = cls.server.channel()
        cls.stub = stubs()[1].RegistryStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.stop()

    def assert_unknown(self, call, message):
        """opm returns plain Go errors: code UNKNOWN with the error text."""
        with self.assertRaises(grpc.RpcError) as ctx:
            r = call()
            if hasattr(r, "__iter__"):
                list(r)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNKNOWN)
        self.assertEqual(ctx.exception.details(), message)
