#!/usr/bin/env python3
"""Where a pipeline stage's time goes, from bench-kernel --trace files.

A build configured with -DTROUPE_STAGE_TRACE=ON records timestamps at the points of
include/troupe/support/stage_trace.hpp. For each file, this prints the timed runs of the
troupe empty-stage pipeline of the given length (the first run, a warm-up, is left out) and,
for each step between two points on one thread, its median and its mean share of a stage.
`--stages 0` reads the runs of the iterated multiplies (or of the matrix requests, or of the
Mandelbrot renders) instead; `--per` then says how many multiplies a run has. `--timeline`
prints instead when a run's first and last steps happen, as medians from its begin: how long it
takes to start and to end.
`--threads` prints, for each thread that called the driver's launch, how long the call took:
the bench's own thread makes the raw side's launches (OpenCL), so the driver's cost on troupe's
threads and on the raw side's compare within one process. `--launches` prints the call's median
for each launch of a run in order, troupe's and the raw side's (OpenCL). `--responding` prints,
for each stage of a run in order, the median time on the worker from submitting the stage's
launch to responding: where the worker drops what the run before left behind.

  bench-kernel --gpus-only --only empty_stage --trace trace.txt
  bench/kernel/stage_trace.py trace.txt
  bench/kernel/stage_trace.py --timeline trace.txt
  bench/kernel/stage_trace.py --threads trace.txt
  bench/kernel/stage_trace.py --launches trace.txt
  bench/kernel/stage_trace.py --responding trace.txt
  bench-kernel --gpus-only --only matmul_iterated --trace iterated.txt
  bench/kernel/stage_trace.py --stages 0 --per 1000 iterated.txt
  bench-kernel --gpus-only --only mandelbrot --shares 100 --trace render.txt
  bench/kernel/stage_trace.py --stages 0 --timeline render.txt
"""
import argparse
import collections
import statistics
import sys


# What a run is with --stages 0.
UNPIPELINED_RUNS = "iterated multiplies, matrix requests or Mandelbrot renders"


def read_trace(path):
    """The point names the trace declares (its "# point N name" lines) and its records."""
    names, records = {}, []
    with open(path) as lines:
        for line in lines:
            if line.startswith("# point "):
                number, name = line[len("# point "):].rstrip("\n").split(" ", 1)
                names[int(number)] = name
            elif line.startswith("# lost "):
                sys.exit(f"{path}: {line[2:].strip()}; trace fewer runs")
            else:
                records.append(tuple(map(int, line.split())))
    for needed in ("run begin", "waiter done"):
        if needed not in names.values():
            sys.exit(f"{path}: no '# point' line names '{needed}'; not a bench-kernel --trace file")
    return names, records


def runs_of(names, records, stages):
    """The records of each run of `stages` stages: from its run begin to its waiter done."""
    number = {name: point for point, name in names.items()}
    run_begin, waiter_done = number["run begin"], number["waiter done"]
    runs, current = [], None
    for point, thread, ns in records:
        if point >= run_begin:
            current = [] if point - run_begin == stages else None
            if current is not None:
                runs.append(current)
                current.append((point, thread, ns))
        elif current is not None:
            current.append((point, thread, ns))
            if point == waiter_done:
                current = None  # what follows (the next run's warm-up launch) is not timed
    return [run for run in runs if run[-1][0] == waiter_done]


def timed_runs(path, stages):
    """The point names, all records and the timed runs of `stages` stages (the first run is a
    warm-up)."""
    names, records = read_trace(path)
    runs = runs_of(names, records, stages)[1:]
    if not runs:
        sys.exit(f"{path}: no complete run of {stages} stages")
    return names, records, runs


def report(path, stages, per):
    names, _, runs = timed_runs(path, stages)
    per_stage = [(run[-1][2] - run[0][2]) / per / 1000 for run in runs]
    steps = collections.defaultdict(list)
    for run in runs:
        by_thread = collections.defaultdict(list)
        for record in run[1:-1]:
            by_thread[record[1]].append(record)
        for records in by_thread.values():
            for a, b in zip(records, records[1:]):
                steps[(a[0], b[0])].append((b[2] - a[2]) / 1000)
    what, unit = ((f"{stages} stages", "stage") if stages else
                  (UNPIPELINED_RUNS, "multiply" if per > 1 else "run"))
    print(f"{path}: {len(runs)} timed runs of {what}; microseconds per {unit}: median "
          f"{statistics.median(per_stage):.2f}, min {min(per_stage):.2f}, "
          f"max {max(per_stage):.2f}")
    print(f"  {'step':<42} {'count':>7} {'median':>7} {'per ' + unit:>12}")
    for (a, b), times in sorted(steps.items(), key=lambda item: -sum(item[1])):
        step = f"{names.get(a, a)} -> {names.get(b, b)}"
        share = sum(times) / len(runs) / per
        print(f"  {step:<42} {len(times):7d} {statistics.median(times):7.2f} {share:12.2f}")


def timeline(path, stages):
    names, _, runs = timed_runs(path, stages)
    number = {name: point for point, name in names.items()}
    offsets = collections.defaultdict(list)  # (point, which one) -> microseconds from run begin
    for run in runs:
        begin = run[0][2]
        for name in ("message taken", "launch called", "command submitted", "driver call",
                     "driver flush", "chunk arrived", "chunk copied", "command done",
                     "command completed"):
            times = [(ns - begin) / 1000 for point, _, ns in run if point == number.get(name)]
            if times:
                offsets[(name, "first")].append(times[0])
                offsets[(name, "last")].append(times[-1])
            if name == "driver call" and len(times) > 1:
                offsets[(name, "second")].append(times[1])
        offsets[("waiter done", "")].append((run[-1][2] - begin) / 1000)
    what = f"{stages} stages" if stages else UNPIPELINED_RUNS
    print(f"{path}: {len(runs)} timed runs of {what}; microseconds from the run's begin")
    print(f"  {'step':<28} {'median':>7} {'min':>7} {'max':>7}")
    for (name, which), times in sorted(offsets.items(), key=lambda item: statistics.median(item[1])):
        step = f"{which} {name}".strip()
        print(f"  {step:<28} {statistics.median(times):7.2f} {min(times):7.2f} {max(times):7.2f}")


def launch_calls(records, number, threads=None):
    """The driver's launch calls of `threads` (None: every thread's), in order: (thread, began,
    ended) in nanoseconds."""
    calls, started = [], {}
    for point, thread, ns in records:
        if threads is not None and thread not in threads:
            continue
        if point == number["driver call"]:
            started[thread] = ns
        elif point == number["driver flush"] and thread in started:
            calls.append((thread, started.pop(thread), ns))
    return calls


def threads(path):
    names, records = read_trace(path)
    number = {name: point for point, name in names.items()}
    bench_threads = {thread for point, thread, _ in records if point >= number["run begin"]}
    calls = collections.defaultdict(list)  # thread -> the driver's launch calls, microseconds
    for thread, began, ended in launch_calls(records, number):
        calls[thread].append((ended - began) / 1000)
    print(f"{path}: the driver's launch calls by thread (microseconds; the whole process)")
    print(f"  {'thread':<22} {'calls':>7} {'median':>7} {'p10':>7} {'p90':>7}")
    for thread, times in sorted(calls.items(), key=lambda item: -len(item[1])):
        times.sort()
        who = f"{thread} (bench, raw)" if thread in bench_threads else f"{thread} (troupe)"
        print(f"  {who:<22} {len(times):7d} {statistics.median(times):7.2f} "
              f"{times[len(times) // 10]:7.2f} {times[len(times) * 9 // 10]:7.2f}")


def launches(path, stages):
    names, records, runs = timed_runs(path, stages)
    number = {name: point for point, name in names.items()}
    # launch index -> (microseconds, issued by the worker that took the request)
    by_launch = collections.defaultdict(list)
    for run in runs:
        worker = next(thread for point, thread, _ in run if point == number["message taken"])
        for index, (thread, began, ended) in enumerate(launch_calls(run, number)):
            by_launch[index].append(((ended - began) / 1000, thread == worker))
    print(f"{path}: {len(runs)} timed runs of {stages} stages; the driver's launch call, median "
          "microseconds by launch (w: issued by the worker that took the request in most runs)")
    print("  troupe: " + " ".join(
        f"{statistics.median(t for t, _ in calls):.1f}"
        f"{'w' if sum(w for _, w in calls) * 2 > len(calls) else ''}"
        for _, calls in sorted(by_launch.items())))
    # The raw side: its launches in bursts of `stages`, each burst ended by the finish.
    bench = {thread for point, thread, _ in records if point >= number["run begin"]}
    bursts, burst = [], []
    for thread, began, ended in launch_calls(records, number, bench):
        if burst and began - burst[-1][1] > 2500:  # more than a launch's gap: a finish between
            bursts.append(burst)
            burst = []
        burst.append((began, ended))
    bursts.append(burst)
    raw = [burst for burst in bursts if len(burst) == stages]
    if raw:
        print(f"  raw ({len(raw)} runs): " + " ".join(
            f"{statistics.median((b[i][1] - b[i][0]) / 1000 for b in raw):.1f}"
            for i in range(stages)))


def responding(path, stages):
    names, _, runs = timed_runs(path, stages)
    number = {name: point for point, name in names.items()}
    by_stage = collections.defaultdict(list)  # stage -> microseconds
    for run in runs:
        submitted = [ns for point, _, ns in run if point == number["command submitted"]]
        answered = [ns for point, _, ns in run if point == number["responding"]]
        for stage, (a, b) in enumerate(zip(submitted, answered)):
            by_stage[stage].append((b - a) / 1000)
    print(f"{path}: {len(runs)} timed runs of {stages} stages; from submitting a stage's launch "
          "to responding, median microseconds by stage")
    print("  " + " ".join(f"{statistics.median(t):.1f}" for _, t in sorted(by_stage.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", help="files written by bench-kernel --trace")
    parser.add_argument("--stages", type=int, default=20,
                        help="pipeline length (default 20); 0: the iterated multiplies or renders")
    parser.add_argument("--per", type=int, help="divide each run by this (default: --stages)")
    parser.add_argument("--timeline", action="store_true",
                        help="when a run's first and last steps happen, not the steps' times")
    parser.add_argument("--threads", action="store_true",
                        help="the driver's launch calls by thread, troupe's and the raw side's")
    parser.add_argument("--launches", action="store_true",
                        help="the driver's launch calls of a run in order, both sides'")
    parser.add_argument("--responding", action="store_true",
                        help="a stage's time from submitting its launch to responding, by stage")
    args = parser.parse_args()
    if args.timeline and args.per:
        parser.error("--per divides a run's steps; --timeline prints when they happen")
    if args.timeline + args.threads + args.launches + args.responding > 1:
        parser.error("--timeline, --threads, --launches and --responding are different reports; "
                     "choose one")
    for path in args.files:
        if args.threads:
            threads(path)
        elif args.launches:
            launches(path, args.stages)
        elif args.responding:
            responding(path, args.stages)
        elif args.timeline:
            timeline(path, args.stages)
        else:
            report(path, args.stages, args.per or args.stages or 1)


if __name__ == "__main__":
    main()
