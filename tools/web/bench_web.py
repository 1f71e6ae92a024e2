#!/usr/bin/python3
"""rmbus-web's benchmark: the page in headless Chromium against a large simulated cluster, and what the
rmbus-web process costs meanwhile (docs/performance.md, "The web monitor").

rmbus-load (--phases serve) runs a real rmbus with N nodes and a DUCC-shaped mix of work, heartbeating each
node every second and publishing the work map every second; rmbus-web watches its bus. Then, per run, a
fresh headless Chromium opens the page and we read the page's own clocks (window.rmbusWeb, set by app.js):
  first render  navigation start -> the first snapshot with a round drawn (performance.now())
  update        an rm.state's arrival at rmbus-web -> the page drawn with it (its age when the snapshot was
                built, plus the time since; the server and browser share this machine's clock)
for each view (Overview, Jobs, Machines: each draws a different part), and /proc for rmbus-web:
  CPU           (utime + stime) over --cpu-s seconds with one page open, as % of one core
  memory        VmRSS at the end, VmHWM (peak)
Figures are printed per run and as medians. Everything started here is stopped at the end.

  tools/web/bench_web.py --build build [--nodes 10000 --jobs 20000] [--runs 5] [--updates 5] [--cpu-s 30]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chromium_driver import start_chromium, stop_chromium  # noqa: E402


def proc_cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def read_line(proc, prefix, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("%s ended before printing '%s'" % (proc.args[0], prefix))
        if line.startswith(prefix):
            return line
    raise RuntimeError("no '%s' line within %d s" % (prefix, timeout_s))


def wait_for(what, timeout_s, cond, poll_s=0.25):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(poll_s)
    raise RuntimeError("within %d s: %s" % (timeout_s, what))


def snapshot_health(url):
    try:
        with urllib.request.urlopen(url + "api/snapshot", timeout=10) as r:
            body = r.read()
        return json.loads(body)["health"], len(body)
    except Exception:
        return None, 0


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--updates", type=int, default=5, help="updates timed per view and run")
    ap.add_argument("--cpu-s", type=int, default=30)
    a = ap.parse_args()
    tools = os.path.join(a.build, "tools")
    procs = []
    try:
        load = subprocess.Popen([os.path.join(tools, "load", "rmbus-load"), "--nodes", str(a.nodes), "--jobs",
                                 str(a.jobs), "--phases", "serve", "--serve-s", "3600"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(load)
        words = read_line(load, "serving:", 600).split()
        bus_sub, admin = words[2], words[4]
        web = subprocess.Popen([os.path.join(tools, "web", "rmbus-web"), "--bus-sub", bus_sub, "--admin", admin,
                                "--listen", "127.0.0.1:0", "--log-level", "warn"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(web)
        url = read_line(web, "rmbus-web: serving", 30).split()[2]
        health, size = wait_for("rmbus-web has a round of %d nodes" % a.nodes, 300,
                                lambda: (lambda h: h if h[0] and h[0].get("round_interval_ms") is not None and
                                         h[0].get("nodes", 0) >= a.nodes else None)(snapshot_health(url)))
        print("cluster: %d nodes, %d jobs in rm.state; rounds every %s ms; snapshot %.1f MB" %
              (health["nodes"], health["jobs"], health["round_interval_ms"], size / 1e6), flush=True)

        firsts, updates, renders, cpus, rss = [], {}, {}, [], []
        for run in range(1, a.runs + 1):
            driver = start_chromium()
            try:
                driver.get(url)
                first = wait_for("the first render", 60, lambda: driver.execute_script("return rmbusWeb.firstRenderMs"))
                firsts.append(first)
                line = "run %d: first render %.0f ms" % (run, first)
                for view in ("overview", "jobs", "machines"):
                    driver.execute_script("location.hash = arguments[0]; rmbusWeb.updates.length = 0;"
                                          "rmbusWeb.renders.length = 0", view)
                    got = wait_for("%d updates on %s" % (a.updates, view), 30 + 5 * a.updates,
                                   lambda: (lambda u: u if len(u) >= a.updates else None)(
                                       driver.execute_script("return rmbusWeb.updates.filter(x => x[0] === arguments[0])"
                                                             ".map(x => x[1])", view)))
                    r = driver.execute_script("return rmbusWeb.renders.filter(x => x[0] === arguments[0]).map(x => x[1])",
                                              view)
                    updates.setdefault(view, []).append(med(got))
                    renders.setdefault(view, []).append(med(r))
                    line += "; %s update %.0f ms (parse+draw %.0f ms)" % (view, med(got), med(r))
                # CPU with this page open (on the Overview, where a user starts).
                driver.execute_script("location.hash = 'overview'")
                c0, t0 = proc_cpu_s(web.pid), time.monotonic()
                time.sleep(a.cpu_s)  # the measurement window itself
                cpu = 100 * (proc_cpu_s(web.pid) - c0) / (time.monotonic() - t0)
                cpus.append(cpu)
                rss.append(proc_kb(web.pid, "VmRSS") / 1024)
                line += "; rmbus-web CPU %.1f%% of a core, resident %.0f MB" % (cpu, rss[-1])
                print(line, flush=True)
            finally:
                stop_chromium(driver)
        print("=== medians of %d runs (%d nodes, %d jobs)" % (a.runs, health["nodes"], health["jobs"]))
        print("first render %.0f ms (target < 2000)" % med(firsts))
        for view in ("overview", "jobs", "machines"):
            print("update, %s view: %.0f ms (target < 500); parse + draw in the page %.0f ms" %
                  (view, med(updates[view]), med(renders[view])))
        print("rmbus-web CPU %.1f%% of one core (target < 10%%), resident %.0f MB, peak %.0f MB (target < 200)" %
              (med(cpus), med(rss), proc_kb(web.pid, "VmHWM") / 1024))
        return 0
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


if __name__ == "__main__":
    sys.exit(main())
