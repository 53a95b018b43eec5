"""pyopencl's own test_wrapper.py, unmodified, on troupe's remote platform (run by
run_with_server.sh, which lists only the driver's platforms).

./setup puts the file, from the sdist of the pyopencl it installs, in build/release/venv/
pyopencl-tests/; it runs offline from there. Exits 77 (skipped) when pyopencl, pytest or the
file is missing, and fails when no test passed: a run that checked nothing is no pass.
"""
import os
import sys

# Tests left out, each with the reason. Keep it short: a test fails here only for a limit the
# driver documents (docs/remote.md), never for a bug.
LEFT_OUT = {
}


def main():
    if len(sys.argv) != 2:
        print("usage: pyopencl_wrapper_test.py PATH/test_wrapper.py")
        return 2
    tests = sys.argv[1]
    try:
        import pytest
        import pyopencl  # noqa: F401
    except ImportError as error:
        print(f"pyopencl or pytest not installed in build/release/venv; run ./setup ({error})")
        return 77
    if not os.path.exists(tests):
        print(f"{tests} is missing: ./setup fetches it from pyopencl's sdist (needs PyPI once)")
        return 77

    class Count:
        passed = 0

        def pytest_runtest_logreport(self, report):
            if report.when == "call" and report.passed:
                Count.passed += 1

    arguments = [tests, "-q", "-p", "no:cacheprovider", "-rs"]
    for test, reason in LEFT_OUT.items():
        print(f"left out: {test}: {reason}")
        arguments += ["--deselect", f"{tests}::{test}"]
    status = pytest.main(arguments, plugins=[Count()])
    if status == 0 and Count.passed == 0:
        print("no test of test_wrapper.py passed: nothing was checked")
        return 1
    print(f"{Count.passed} tests of pyopencl's test_wrapper.py passed through troupe")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
