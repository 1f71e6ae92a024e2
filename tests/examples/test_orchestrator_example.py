#!/usr/bin/python3
"""examples/orchestrator.py against the real rmbus on loopback (README, "Connecting a cluster").

--case run: rmbus starts on free loopback ports with a small configuration (heartbeats every 300 ms, so its
start-up stability window is 0.6 s); the example plays 4 agents and an orchestrator with 3 jobs of 2
processes. Passes when
  1. the example exits 0 and reports all 6 processes running;
  2. the RM's own rm.state, heard by this test on the bus, lists each job with 2 shares `running` (the RM
     has taken the processes the example's maps showed: its full map and its deltas);
  3. the RM published no bad_message and no workmap_delta_refused about the example's messages.
--case fence: the example's epoch fence (docs/protocol.md 4.8) on a sequence of epochs.
Every wait has a deadline; rmbus is stopped at the end. Exit status 0 when every check passed.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

import msgpack
import zmq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from script_support import Fail, check, free_port  # noqa: E402

CONFIG = """
[scheduling]
quantum = "1G"

[timing]
heartbeat_interval_ms = 300
node_stability = 4
init_stability = 2
orchestrator_publish_ms = 250
round_timeout_ms = 3000

[[nodepool]]
name = "--default--"            # no node list: it takes every node

[[class]]
name = "normal"
policy = "FAIR_SHARE"
nodepool = "--default--"
priority = 10
weight = 100
default = true
"""
JOBS, PROCESSES = 3, 2



def running_shares(state):
    """job id -> shares `running` in one rm.state body."""
    return {j["id"]: sum(s["status"] == "running" for s in j["shares"]) for j in state["jobs"]}


def case_run(a):
    work = tempfile.mkdtemp(prefix="rmbus-example-orchestrator-")
    config = os.path.join(work, "rmbus.toml")
    with open(config, "w") as f:
        f.write(CONFIG)
    pub, sub, admin = (f"tcp://127.0.0.1:{free_port()}" for _ in range(3))
    rm_log = os.path.join(work, "rmbus.log")
    rm = subprocess.Popen([a.rmbus, "--config", config, "--bus-pub", pub, "--bus-sub", sub, "--admin", admin,
                           "--metrics", "off", "--log-level", "info"],
                          stdout=open(rm_log, "w"), stderr=subprocess.STDOUT)
    ctx = zmq.Context()
    bus = ctx.socket(zmq.SUB)
    bus.setsockopt(zmq.LINGER, 0)
    bus.setsockopt(zmq.RCVHWM, 100000)
    bus.connect(sub)
    bus.setsockopt(zmq.SUBSCRIBE, b"rm.state")
    bus.setsockopt(zmq.SUBSCRIBE, b"rm.events")
    try:
        out = subprocess.run([a.example, "--bus-pub", pub, "--bus-sub", sub, "--nodes", "4", "--jobs", str(JOBS),
                              "--processes", str(PROCESSES), "--seconds", "40"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        print(out.stdout, end="", flush=True)
        check(rm.poll() is None, "rmbus is still running")
        check(out.returncode == 0, f"the example exits 0 (it exited {out.returncode})")
        want = JOBS * PROCESSES
        check(f"running processes: {want} of {want} wanted" in out.stdout,
              f"the example reports {want} processes running")
        check("delta on" in out.stdout, "the example sent deltas between full maps")

        states, refusals = [], []
        while bus.poll(200):
            topic, body = bus.recv_multipart()
            m = msgpack.unpackb(body, raw=False)
            if topic == b"rm.state":
                states.append(m)
            elif m["kind"] in ("bad_message", "workmap_delta_refused"):
                refusals.append(m)
        check(not refusals, f"the RM refused none of the example's messages: {refusals}")
        full = [s["cycle"] for s in states if running_shares(s) == {f"job-{i + 1}": PROCESSES for i in range(JOBS)}]
        last = running_shares(states[-1]) if states else "none heard"
        check(full, f"an rm.state lists each of the {JOBS} jobs with {PROCESSES} shares running "
                    f"({len(states)} heard; the last: {last})")
        print(f"ok: first such schedule: cycle {full[0]}", flush=True)
    finally:
        bus.close()
        ctx.term()
        if rm.poll() is None:
            rm.send_signal(signal.SIGTERM)
            try:
                rm.wait(timeout=10)
            except subprocess.TimeoutExpired:
                rm.kill()
                rm.wait()
        with open(rm_log) as f:
            print("rmbus log (last lines):\n" + "".join(f.readlines()[-15:]), flush=True)


def case_fence(a):
    sys.path.insert(0, os.path.dirname(a.example))
    from orchestrator import EpochFence

    fence = EpochFence()
    check(fence.echo() == {}, "before any schedule the map echoes nothing")
    check(fence.accept(None, 1) == (True, False), "HA off: a schedule without an epoch is acted on")
    check(fence.echo() == {"rm_cycle": 1}, "HA off: rm_cycle only, no rm_epoch")
    check(fence.accept(20001, 2) == (True, True), "a first epoch is accepted and raises the fence")
    check(fence.accept(10002, 3) == (False, False), "a lower epoch (a deposed RM) is ignored")
    check(fence.accept(None, 4) == (False, False), "once an epoch was accepted, none counts as 0: ignored")
    check(fence.echo() == {"rm_epoch": 20001, "rm_cycle": 2}, "the echo names the last schedule acted on")
    check(fence.accept(20001, 5) == (True, False), "the same epoch again is acted on, without raising")
    check(fence.accept(30000, 6) == (True, True), "a higher epoch raises the fence")
    check(fence.echo() == {"rm_epoch": 30000, "rm_cycle": 6}, "the echo follows the new active")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=["run", "fence"], required=True)
    ap.add_argument("--rmbus", help="the rmbus executable (case run)")
    ap.add_argument("--example", required=True, help="examples/orchestrator.py")
    a = ap.parse_args()
    try:
        case_run(a) if a.case == "run" else case_fence(a)
    except Fail as e:
        print("FAILED:", e, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
