#!/usr/bin/env python3
"""Tests of bench/report's reading of results: targets met and missed on rows whose ratios are
known, the conditions on parameters, failed checks, and the errors for bad options.

usage: python3 bench/test_report.py
"""

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "report")


def load_report():
    loader = importlib.machinery.SourceFileLoader("report", REPORT)
    spec = importlib.util.spec_from_loader("report", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


report = load_report()
HEADER = "benchmark,params,variant,backend,device,runs,median_s,min_s,max_s,metric,value,check,commit,date\n"


def row(benchmark, params, variant, median, value="", metric="", check="ok", backend="opencl"):
    return (f"{benchmark},{params},{variant},{backend},GPU,10,{median},{median},{median},{metric},"
            f"{value},\"{check}\",abc1234,2026-12-07\n")


def target(**fields):
    base = {"layer": "kernel", "what": "x", "benchmark": "", "params": "", "backend": "",
            "variant": "troupe", "baseline": "native-tuned", "kind": "time", "bound": ""}
    base.update(fields)
    return base


def rows_of(text):
    with tempfile.TemporaryDirectory() as out:
        os.makedirs(os.path.join(out, "kernel"))
        with open(os.path.join(out, "kernel", "kernel.csv"), "w") as stream:
            stream.write(HEADER + text)
        return report.read_results(out)


class Conditions(unittest.TestCase):
    def test_equal_and_compared(self):
        params = report.params_of("N=4000;pes=16")
        self.assertTrue(report.matches("", params))
        self.assertTrue(report.matches("N>=4000", params))
        self.assertFalse(report.matches("N>4000", params))
        self.assertTrue(report.matches("N<=4000;pes=16", params))
        self.assertFalse(report.matches("pes=2", params))
        self.assertFalse(report.matches("missing=1", params))
        self.assertFalse(report.matches("pes<x", params))


class Targets(unittest.TestCase):
    rows = rows_of(
        row("matmul_request", "N=1000", "troupe", 1.04) + row("matmul_request", "N=1000", "native-tuned", 1.0)
        + row("matmul_request", "N=4000", "troupe", 1.02) + row("matmul_request", "N=4000", "native-tuned", 1.0)
        + row("matmul_request", "N=8000", "troupe", 2.0, check="fail")
        + row("matmul_request", "N=8000", "native-tuned", 1.0)
        + row("matmul_request", "N=12000", "troupe", 1.0)  # no baseline row: no line
        + row("histogram", "pes=16", "troupe", 1.0, value=3e7, metric="updates/s/PE", backend="cpu")
        + row("histogram", "pes=16", "mpi-alltoallv", 2.0, value=2e7, metric="updates/s/PE", backend="cpu")
        + row("wah_build", "rows=20000000", "troupe", 0.05) + row("wah_build", "rows=20000000", "native-cpu-1", 1.0))

    def verdicts(self, **fields):
        return [(line["row"]["params"], round(line["ratio"], 3) if line["ratio"] else None, line["verdict"])
                for line in report.evaluate(target(**fields), self.rows)]

    def test_time_bound(self):
        self.assertEqual(self.verdicts(benchmark="matmul_request", params="N=1000", bound="1.05"),
                         [("N=1000", 1.04, "met")])
        self.assertEqual(self.verdicts(benchmark="matmul_request", params="N>=4000", bound="1.01"),
                         [("N=4000", 1.02, "**missed**"), ("N=8000", 2.0, "check failed")])

    def test_rate_and_speedup(self):
        self.assertEqual(self.verdicts(benchmark="histogram", baseline="mpi-alltoallv", kind="rate", bound="1.0"),
                         [("pes=16", 1.5, "met")])
        self.assertEqual(self.verdicts(benchmark="histogram", baseline="mpi-alltoallv", kind="rate", bound="2"),
                         [("pes=16", 1.5, "**missed**")])
        self.assertEqual(self.verdicts(benchmark="wah_build", baseline="native-cpu-1", kind="speedup", bound="20"),
                         [("rows=20000000", 20.0, "met")])

    def test_unbounded_is_reported(self):
        self.assertEqual(self.verdicts(benchmark="matmul_request", params="N=1000"),
                         [("N=1000", 1.04, "reported")])

    def test_backend_filter(self):
        self.assertEqual(self.verdicts(benchmark="matmul_request", backend="cuda"), [])


class Runs(unittest.TestCase):
    def test_a_later_run_replaces_only_its_own_record(self):
        def record(name, status):
            return {"suite": "pgas", "name": name, "csv": name + ".csv", "command": name,
                    "commit": "abc1234", "date": "2026-12-07", "status": status}
        with tempfile.TemporaryDirectory() as out:
            report.save_runs(out, [record("pgas", "ok"), record("pgas-tcp", "ok")])
            report.save_runs(out, [record("pgas-tcp", "failed (exit 1)")])
            self.assertEqual([(r["name"], r["status"]) for r in report.load_runs(out)],
                             [("pgas", "ok"), ("pgas-tcp", "failed (exit 1)")])

    def test_a_whole_suite_retires_runs_it_no_longer_has(self):
        with tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(out, "kernel"))
            for name in ("kernel", "matmul"):
                for ending in (".csv", ".log"):
                    open(os.path.join(out, "kernel", name + ending), "w").close()
            report.save_runs(out, [
                {"suite": "kernel", "name": name, "csv": f"kernel/{name}.csv", "command": name,
                 "commit": "abc1234", "date": "2026-12-07", "status": "ok"}
                for name in ("kernel", "matmul")])
            report.retire_runs(out, "kernel", {"matmul", "stages"})
            self.assertEqual([r["name"] for r in report.load_runs(out)], ["matmul"])
            self.assertEqual(sorted(os.listdir(os.path.join(out, "kernel"))),
                             ["matmul.csv", "matmul.log", "runs.json"])


class Command(unittest.TestCase):
    def run_report(self, *arguments):
        return subprocess.run([sys.executable, REPORT] + list(arguments), capture_output=True, text=True)

    def report_text(self, out):
        with open(os.path.join(out, "REPORT.md")) as stream:
            return stream.read()

    def summarize_one_request(self, out, variant):
        """--summarize over one 1000x1000 request of `variant` (1.2 s) and native-tuned (1 s)."""
        os.makedirs(os.path.join(out, "kernel"))
        with open(os.path.join(out, "kernel", "kernel.csv"), "w") as stream:
            stream.write(HEADER + row("matmul_request", "N=1000", variant, 1.2)
                         + row("matmul_request", "N=1000", "native-tuned", 1.0))
        done = self.run_report("--summarize", "--no-plot", "--machine", "test", "--out", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done

    def test_summary_of_a_folder(self):
        with tempfile.TemporaryDirectory() as out:
            done = self.summarize_one_request(out, "troupe-pinned")
            self.assertIn("targets met: 0, missed: 1", done.stdout)
            text = self.report_text(out)
            self.assertIn("| one multiply request, pinned memory (matmul_request, N=1000, opencl) | "
                          "troupe-pinned 1.2 s | native-tuned 1 s | 1.2 (time / baseline's) | ≤ 1.05 "
                          "| **missed** |", text)

    def test_a_target_without_rows_is_listed_as_not_measured(self):
        with tempfile.TemporaryDirectory() as out:
            done = self.summarize_one_request(out, "troupe")
            self.assertIn("targets met: 0, missed: 0, not measured:", done.stdout)
            text = self.report_text(out)
            self.assertIn("## Targets not measured here", text)
            self.assertIn("| kernel | one multiply request, pinned memory | matmul_request, N=1000: "
                          "troupe-pinned against native-tuned | ≤ 1.05 |", text)
            # The row that is there is reported against its own target, not listed as missing.
            self.assertIn("| one multiply request, from vectors (matmul_request, N=1000, opencl) | "
                          "troupe 1.2 s | native-tuned 1 s | 1.2 (time / baseline's) | — | reported |",
                          text)

    def test_rows_of_several_runs_name_their_file(self):
        with tempfile.TemporaryDirectory() as out:
            for folder, name, median in (("kernel", "kernel.csv", 1.2),
                                         (os.path.join("kernel", "other"), "other.csv", 1.0)):
                os.makedirs(os.path.join(out, folder))
                with open(os.path.join(out, folder, name), "w") as stream:
                    stream.write(HEADER + row("matmul_request", "N=1000", "troupe", median)
                                 + row("matmul_request", "N=1000", "native-tuned", 1.0))
            done = self.run_report("--summarize", "--no-plot", "--machine", "test", "--out", out)
            self.assertEqual(done.returncode, 0, done.stderr)
            text = self.report_text(out)
            self.assertIn("(matmul_request, N=1000, opencl) in `kernel.csv` | troupe 1.2 s", text)
            self.assertIn("(matmul_request, N=1000, opencl) in `other.csv` | troupe 1 s", text)

    def test_failed_check_fails_the_report(self):
        with tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(out, "kernel"))
            with open(os.path.join(out, "kernel", "kernel.csv"), "w") as stream:
                stream.write(HEADER + row("matmul_request", "N=1000", "troupe", 1.0, check="fail"))
            done = self.run_report("--summarize", "--no-plot", "--out", out)
            self.assertEqual(done.returncode, 1)
            self.assertIn("1 rows failed their check", done.stdout)

    def test_bad_options_are_named(self):
        done = self.run_report("--only", "kernel,gpus", "--summarize")
        self.assertEqual(done.returncode, 2)
        self.assertIn("no suite or benchmark run called gpus here", done.stderr)
        done = self.run_report("--runs", "3", "--summarize")
        self.assertEqual(done.returncode, 2)
        self.assertIn("at least 10 timed runs", done.stderr)
        with tempfile.TemporaryDirectory() as parent:
            missing = os.path.join(parent, "nothing")
            done = self.run_report("--summarize", "--out", missing)
            self.assertEqual(done.returncode, 2)
            self.assertIn("--summarize: no results at " + missing, done.stderr)
            self.assertFalse(os.path.exists(missing))

    def test_missing_executables_are_not_run(self):
        with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as empty:
            done = self.run_report("--quick", "--no-build", "--no-plot", "--only", "async",
                                   "--bin", empty, "--out", out)
            self.assertEqual(done.returncode, 1)
            self.assertIn("not run: " + os.path.join(empty, "bench-futures") + " is missing", done.stdout)

    def test_a_run_is_on_record_while_it_runs(self):
        # A stand-in benchmark copies the runs it finds on record: a run killed from outside (a
        # device call's limit) leaves that record behind.
        with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as bin_dir:
            stand_in = os.path.join(bin_dir, "bench-futures")
            with open(stand_in, "w") as stream:
                stream.write('#!/bin/sh\nfor last; do :; done\n'
                             'cp "$(dirname "$last")/runs.json" "$(dirname "$last")/seen.json"\n')
            os.chmod(stand_in, 0o755)
            done = self.run_report("--quick", "--no-build", "--no-plot", "--only", "async",
                                   "--bin", bin_dir, "--out", out)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(os.path.join(out, "async", "seen.json")) as stream:
                seen = stream.read()
            self.assertIn('"status": "stopped from outside before it ended', seen)
            self.assertEqual([r["status"] for r in report.load_runs(out)], ["ok"])

    def test_a_stalled_run_says_where_it_waits_and_is_stopped_whole(self):
        # A stand-in benchmark that starts a child, then waits for ever; its run has 2 s.
        with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as bin_dir:
            stand_in = os.path.join(bin_dir, "bench-futures")
            child_file = os.path.join(bin_dir, "child")
            with open(stand_in, "w") as stream:
                stream.write(f"#!/bin/sh\nsleep 600 &\necho $! > {child_file}\necho started\n"
                             "sleep 600\n")
            os.chmod(stand_in, 0o755)
            step = report.Step("async", "futures", ["bench-futures"], "async/futures.csv",
                               timeout=2)
            records = report.run_steps([step], bin_dir, out, None)
            self.assertEqual(records[0]["status"], "failed: stopped after 2 s")
            with open(os.path.join(out, "async", "futures.log")) as stream:
                log = stream.read()
            self.assertIn("started\n== report: no end after 2 s", log)
            self.assertRegex(log, r"process \d+: /bin/sh .*bench-futures")
            self.assertRegex(log, r"process \d+: sleep 600\n  thread \d+ sleep: state S, in ")
            with open(child_file) as stream:
                child = int(stream.read())
            deadline = time.monotonic() + 10
            while report.process_snapshot.read(f"/proc/{child}/cmdline") and \
                    time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertEqual(report.process_snapshot.read(f"/proc/{child}/cmdline"), "",
                             "the run's child was left running")

    def write_run(self, folder, name, median, commit="abc1234", status="ok"):
        os.makedirs(os.path.join(folder, "kernel"), exist_ok=True)
        if not status.startswith("not run"):
            with open(os.path.join(folder, "kernel", name + ".csv"), "w") as stream:
                stream.write(HEADER + row("matmul_request", "N=1000", "troupe", median)
                             + row("matmul_request", "N=1000", "native-tuned", 1.0))
        report.save_runs(folder, [
            {"suite": "kernel", "name": name, "csv": f"kernel/{name}.csv", "command": name,
             "commit": commit, "date": "2026-12-07", "status": status}])

    def test_a_call_elsewhere_is_merged_with_the_runs_here(self):
        with tempfile.TemporaryDirectory() as here, tempfile.TemporaryDirectory() as there:
            out = os.path.join(here, "gpu-test")
            self.write_run(out, "matmul", 1.2)
            self.write_run(out, "stages", 1.0)
            self.write_run(out, "wah", 1.0)
            call = os.path.join(there, "gpu-test")
            # A later run of stages, and wah not started: what a device call leaves.
            self.write_run(call, "stages", 0.9, commit="def5678")
            self.write_run(call, "wah", 0, status="not run: the time limit (10 s) had passed")
            archive = os.path.join(there, "report.tgz")
            subprocess.run(["tar", "-C", there, "-czf", archive, "gpu-test"], check=True)
            done = self.run_report("--merge", archive, "--no-plot", "--out", out)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("merged kernel/stages into " + out, done.stdout)
            self.assertIn("kernel/wah: kept as it was here", done.stdout)
            self.assertEqual([(r["name"], r["commit"], r["status"]) for r in report.load_runs(out)],
                             [("matmul", "abc1234", "ok"), ("stages", "def5678", "ok"),
                              ("wah", "abc1234", "ok")])
            text = self.report_text(out)
            self.assertIn("in `matmul.csv` | troupe 1.2 s", text)
            self.assertIn("in `stages.csv` | troupe 900 ms", text)

    def test_what_cannot_be_merged_is_named(self):
        with tempfile.TemporaryDirectory() as there:
            out = os.path.join(there, "out")
            os.makedirs(os.path.join(there, "gpu-test", "kernel"))
            done = self.run_report("--merge", os.path.join(there, "gpu-test"), "--no-plot",
                                   "--out", out)
            self.assertEqual(done.returncode, 2)
            self.assertIn(os.path.join(there, "gpu-test") + " has no runs.json: not a folder that "
                          "bench/report wrote", done.stderr)
            self.assertFalse(os.path.exists(out))
            outside = os.path.join(there, "outside.tgz")
            subprocess.run(["tar", "-C", there, "-czf", outside, "-P", "--transform",
                            "s,^gpu-test,../gpu-test,", "gpu-test"], check=True)
            done = self.run_report("--merge", outside, "--no-plot", "--out", out)
            self.assertEqual(done.returncode, 2)
            self.assertIn("holds ../gpu-test, which is not a plain file of a report", done.stderr)
            not_an_archive = os.path.join(there, "notes.txt")
            with open(not_an_archive, "w") as stream:
                stream.write("not a tar file\n")
            done = self.run_report("--merge", not_an_archive, "--no-plot", "--out", out)
            self.assertEqual(done.returncode, 2)
            self.assertIn(not_an_archive + " is not a readable archive", done.stderr)
            self.write_run(os.path.join(there, "gpu-test"), "stages", 1.0)
            done = self.run_report("--merge", os.path.join(there, "gpu-test"), "--machine",
                                   "gpu-other", "--no-plot", "--out", out)
            self.assertEqual(done.returncode, 2)
            self.assertIn("is a report of gpu-test, not of gpu-other", done.stderr)
            done = self.run_report("--merge", os.path.join(there, "nothing"), "--no-plot")
            self.assertEqual(done.returncode, 2)
            self.assertIn("is neither a report folder nor an archive of one", done.stderr)

    def test_a_file_another_run_shares_is_not_overwritten(self):
        with tempfile.TemporaryDirectory() as here, tempfile.TemporaryDirectory() as there:
            out = os.path.join(here, "gpu-test")
            self.write_run(out, "stages", 1.0)
            report.save_runs(out, [
                {"suite": "kernel", "name": "older", "csv": "kernel/stages.csv", "command": "x",
                 "commit": "abc1234", "date": "2026-12-07", "status": "ok"}])
            self.write_run(os.path.join(there, "gpu-test"), "stages", 0.9)
            done = self.run_report("--merge", os.path.join(there, "gpu-test"), "--no-plot",
                                   "--out", out)
            self.assertEqual(done.returncode, 2)
            self.assertIn("kernel/stages.csv here holds the rows of older too", done.stderr)
            with open(os.path.join(out, "kernel", "stages.csv")) as stream:
                self.assertIn(",troupe,opencl,GPU,10,1.0,", stream.read())

    def test_a_shown_command_names_no_temporary_file(self):
        step = report.Step("remote", "remote", ["bench-remote", "--vendor-icd", "@nvidia-icd"],
                           "remote/remote.csv")
        argv = report.command_of(step, "/b/bench", "/o/remote/remote.csv", "/tmp/t1/nvidia.icd")
        self.assertEqual(report.shown(step, argv, "/b/bench", "/o", "/tmp/t1/nvidia.icd"),
                         "<bin>/bench-remote --vendor-icd <nvidia-icd> --csv <out>/remote/remote.csv")

    def test_every_run_has_a_file_of_its_own(self):
        for gpu, cores in ((False, 2), (True, 16)):
            steps = report.plan(report.SUITES, gpu=gpu, cores=cores, quick=False, runs=0)
            self.assertEqual(len({step.csv for step in steps}), len(steps))
            self.assertEqual(len({step.name for step in steps}), len(steps))

    def test_the_remote_run_has_a_tls_side_where_openssl_is(self):
        which = report.shutil.which
        try:
            for found, expected in (("/usr/bin/openssl", True), (None, False)):
                report.shutil.which = lambda name, found=found: found
                remote = report.plan(["remote"], gpu=False, cores=2, quick=False, runs=0)[0]
                self.assertEqual("--tls" in remote.argv, expected)
        finally:
            report.shutil.which = which

    def test_the_nodes_of_a_net_run_share_the_cores(self):
        for cores in (8, 16, 32):
            for step in report.plan(["net"], gpu=False, cores=cores, quick=False, runs=0):
                self.assertIn("--threads", step.argv, step.name)
                threads = int(step.argv[step.argv.index("--threads") + 1])
                # Each node's workers and its progress thread.
                self.assertLessEqual(step.ranks * (threads + 1), cores, (step.name, cores))

    def test_kernel_suite_in_parts(self):
        steps = report.plan(["kernel"], gpu=True, cores=16, quick=False, runs=0)
        self.assertEqual([step.name for step in steps],
                         ["matmul", "stages", "wah", "mandelbrot-opencl", "mandelbrot-16000-opencl",
                          "mandelbrot-cuda", "mandelbrot-16000-cuda"])
        self.assertEqual(len({step.csv for step in steps}), len(steps))


if __name__ == "__main__":
    unittest.main()
