"""Robustness of `olm-catalog serve`: bad catalogs fail at start with a
clear message, SIGTERM lets calls in flight finish and exits 0, `--watch`
picks up a replaced index, oversized requests are refused, and 50
concurrent clients get answers (a 3-second run; scripts/load-serve.sh runs
the 30-second one).

Environment: OLM_CATALOG_BIN, OLM_CATALOG_SQLITE, OLM_CATALOG_FBC, OLM_CATALOG_TMP.
"""

import os
import shutil
import sqlite3
import threading
import time
import unittest

import grpc

from servecommon import Server, run_failing, stubs

pb, pb_grpc = stubs()

TMP = os.environ.get("OLM_CATALOG_TMP", "/tmp")
DB = os.environ.get("OLM_CATALOG_SQLITE", "")
FBC = os.environ.get("OLM_CATALOG_FBC", "")


def tmp(name):
    return os.path.join(TMP, name)


def replace_with_edited_copy(path, *statements):
    """Replaces `path` at once (as a deployment swaps an index) by a copy of
    DB with the SQL `statements` applied."""
    new = path + ".new"
    shutil.copy(DB, new)
    con = sqlite3.connect(new)
    for st in statements:
        con.execute(st)
    con.commit()
    con.close()
    os.replace(new, path)


class BadCatalogTest(unittest.TestCase):
    def assert_fails(self, catalog, *needles):
        code, err = run_failing(catalog)
        self.assertEqual(code, 2, err)
        for n in needles:
            self.assertIn(n, err)

    def test_missing(self):
        self.assert_fails(tmp("no-such-index.db"), "does not exist")

    def test_not_sqlite(self):
        with open(tmp("garbage.db"), "wb") as f:
            f.write(b"this is not a database\n" * 10)
        self.assert_fails(tmp("garbage.db"), "neither a SQLite index", "garbage.db")

    def test_truncated_sqlite(self):
        with open(DB, "rb") as f:
            head = f.read(100)
        with open(tmp("truncated.db"), "wb") as f:
            f.write(head + b"\0garbage" * 100)
        self.assert_fails(tmp("truncated.db"), "truncated.db")

    def test_sqlite_without_opm_tables(self):
        path = tmp("empty.db")
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE x (y TEXT)")
        con.commit()
        con.close()
        self.assert_fails(path, "is not an operator-registry index", "`package`")

    def test_fbc_with_two_heads(self):
        d = tmp("two-heads")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "catalog.yaml"), "w") as f:
            f.write(
                "schema: olm.package\nname: p\ndefaultChannel: a\n---\n"
                "schema: olm.channel\nname: a\npackage: p\nentries:\n- name: p.v1\n- name: p.v2\n---\n"
                "schema: olm.bundle\nname: p.v1\npackage: p\nimage: x/p:1\nproperties:\n"
                "- {type: olm.package, value: {packageName: p, version: 1.0.0}}\n---\n"
                "schema: olm.bundle\nname: p.v2\npackage: p\nimage: x/p:2\nproperties:\n"
                "- {type: olm.package, value: {packageName: p, version: 2.0.0}}\n"
            )
        self.assert_fails(d, "multiple channel heads found in graph: p.v1, p.v2", 'channel "a"')

    def test_fbc_syntax_error_names_file_and_line(self):
        d = tmp("bad-yaml")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "catalog.yaml"), "w") as f:
            f.write("schema: olm.package\nname: [unclosed\n")
        self.assert_fails(d, "catalog.yaml:")


class RunningServerTest(unittest.TestCase):
    def test_sigterm_drains_calls_in_flight_and_exits_0(self):
        server = Server(FBC).start()
        try:
            server.wait_serving()
            with server.channel() as ch:
                stub = pb_grpc.RegistryStub(ch)
                want = len(list(stub.ListBundles(pb.ListBundlesRequest(), timeout=30)))
            started = threading.Barrier(11)
            counts, errors = [], []

            def call():
                try:
                    with server.channel() as ch:
                        it = pb_grpc.RegistryStub(ch).ListBundles(pb.ListBundlesRequest(), timeout=30)
                        first = next(it)
                        started.wait(10)
                        counts.append(1 + sum(1 for _ in it) if first else 0)
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)
                    started.abort()

            threads = [threading.Thread(target=call) for _ in range(10)]
            for t in threads:
                t.start()
            started.wait(30)
            code = server.terminate()
            for t in threads:
                t.join(30)
            self.assertEqual(errors, [])
            self.assertEqual(counts, [want] * 10)
            self.assertEqual(code, 0, "\n".join(server.log))
        finally:
            server.stop()

    def test_watch_picks_up_replaced_index(self):
        path = tmp("watched.db")
        shutil.copy(DB, path)
        with Server(path, "--watch", "--watch-interval", "100") as server:
            server.wait_serving()
            with server.channel() as ch:
                stub = pb_grpc.RegistryStub(ch)
                names = lambda: [p.name for p in stub.ListPackages(pb.ListPackageRequest(), timeout=5)]
                self.assertEqual(names(), ["etcd", "other"])
                replace_with_edited_copy(
                    path,
                    "INSERT INTO package VALUES ('added', 'stable')",
                    "INSERT INTO channel VALUES ('stable', 'added', 'other.v1.0.0')",
                )
                deadline = time.time() + 20
                while "added" not in names():
                    self.assertLess(time.time(), deadline, "reload not seen:\n" + "\n".join(server.log))
                    time.sleep(0.05)
                # A broken replacement is refused; the last good catalog stays.
                new = path + ".new"
                with open(new, "wb") as f:
                    f.write(b"not sqlite")
                os.replace(new, path)
                deadline = time.time() + 20
                while not any("reload failed" in l for l in server.log):
                    self.assertLess(time.time(), deadline, "\n".join(server.log))
                    time.sleep(0.05)
                self.assertEqual(names(), ["added", "etcd", "other"])

    def test_list_bundles_answered_again_and_after_a_reload(self):
        # The first whole ListBundles answer is kept for later calls; a
        # replaced index is a new answer, not the kept one.
        path = tmp("relisted.db")
        shutil.copy(DB, path)
        with Server(path, "--watch", "--watch-interval", "100") as server:
            server.wait_serving()
            with server.channel() as ch:
                stub = pb_grpc.RegistryStub(ch)
                rows = lambda: [
                    (b.packageName, b.channelName, b.csvName, b.csvJson, tuple(b.object))
                    for b in stub.ListBundles(pb.ListBundlesRequest(), timeout=10)
                ]
                first = rows()
                self.assertEqual(len(first), 6)
                # A client that leaves mid-answer takes nothing with it.
                it = stub.ListBundles(pb.ListBundlesRequest(), timeout=10)
                next(it)
                it.cancel()
                for _ in range(3):
                    self.assertEqual(rows(), first)
                replace_with_edited_copy(path, "DELETE FROM channel_entry WHERE package_name = 'other'")
                deadline = time.time() + 20
                while len(rows()) == 6:
                    self.assertLess(time.time(), deadline, "reload not seen:\n" + "\n".join(server.log))
                    time.sleep(0.05)
                after = rows()
                self.assertTrue(after and all(r[0] == "etcd" for r in after), after)
                self.assertEqual(rows(), after)

    def test_oversized_request_refused(self):
        with Server(DB) as server:
            server.wait_serving()
            with server.channel() as ch:
                stub = pb_grpc.RegistryStub(ch)
                with self.assertRaises(grpc.RpcError) as ctx:
                    stub.GetPackage(pb.GetPackageRequest(name="x" * (1 << 20)), timeout=10)
                self.assertIn(ctx.exception.code(), (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.OUT_OF_RANGE))
                self.assertEqual(stub.GetPackage(pb.GetPackageRequest(name="etcd"), timeout=10).name, "etcd")

    def test_fifty_concurrent_clients(self):
        with Server(DB) as server:
            server.wait_serving()
            stop = time.time() + 3
            errors, calls = [], [0]
            lock = threading.Lock()

            def client():
                with server.channel() as ch:
                    stub = pb_grpc.RegistryStub(ch)
                    n = 0
                    while time.time() < stop:
                        try:
                            assert len(list(stub.ListBundles(pb.ListBundlesRequest(), timeout=10))) == 6
                            b = stub.GetBundle(
                                pb.GetBundleRequest(pkgName="etcd", channelName="alpha", csvName="etcdoperator.v0.9.2"),
                                timeout=10,
                            )
                            assert b.csvJson
                            n += 2
                        except Exception as e:  # noqa: BLE001 - reported below
                            errors.append(e)
                            return
                    with lock:
                        calls[0] += n

            threads = [threading.Thread(target=client) for _ in range(50)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            self.assertEqual(errors, [])
            self.assertGreater(calls[0], 50)


if __name__ == "__main__":
    unittest.main()
