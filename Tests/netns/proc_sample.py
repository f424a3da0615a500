#!/usr/bin/env python3
"""What the benchmarks read of a process and a folder, from /proc and the file system alone. Each
command first creates the file named by $READY, when set, so that the benchmark starts what it times
only once the measuring has begun.

  proc_sample.py watch FOLDER NAME SIZE SECONDS
      when (ns since the epoch) FOLDER/NAME was SIZE bytes, polling every 10 ms ("0" when not
      within SECONDS)
  proc_sample.py lines FILE TEXT COUNT SECONDS
      when (ns since the epoch) FILE had COUNT lines containing TEXT, polling every millisecond ("0" when not
      within SECONDS)
  proc_sample.py sample PID STOP SECONDS
      samples PID's VmRSS every 50 ms until the file STOP exists (at most SECONDS); prints the CPU
      milliseconds (utime + stime) of PID meanwhile, its RSS at the start and its peak (KiB)
  proc_sample.py idle PID SECONDS
      the CPU milliseconds of PID over SECONDS, and its context switches (voluntary and not, of each
      thread at the end, less what it had at the start)
"""
import os
import sys
import time


def ready():
    if os.environ.get("READY"):
        open(os.environ["READY"], "w").close()

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        return sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13]) * TICK_MS


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def switches(pid):
    counted = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                counted[task] = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except OSError:
            pass
    return counted


def watch(folder, name, size, seconds):
    ready()
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        try:
            if os.stat(os.path.join(folder, name)).st_size == int(size):
                return print(time.time_ns())
        except OSError:
            pass
        time.sleep(0.01)
    print(0)


def lines(path, text, count, seconds):
    ready()
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        try:
            with open(path, errors="replace") as f:
                if sum(text in line for line in f) >= int(count):
                    return print(time.time_ns())
        except OSError:
            pass
        time.sleep(0.001)
    print(0)


def sample(pid, stop, seconds):
    start_cpu, start_rss = cpu_ms(pid), rss_kib(pid)
    ready()
    peak, end = start_rss, time.monotonic() + float(seconds)
    while not os.path.exists(stop) and time.monotonic() < end:
        try:
            peak = max(peak, rss_kib(pid))
        except (OSError, StopIteration):
            break
        time.sleep(0.05)
    print(round(cpu_ms(pid) - start_cpu), start_rss, peak)


def idle(pid, seconds):
    cpu0, before = cpu_ms(pid), switches(pid)
    time.sleep(float(seconds))
    cpu1, after = cpu_ms(pid), switches(pid)
    print(round(cpu1 - cpu0), sum(count - before.get(task, 0) for task, count in after.items()))


if __name__ == "__main__":
    commands = {"watch": watch, "lines": lines, "sample": sample, "idle": idle}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
