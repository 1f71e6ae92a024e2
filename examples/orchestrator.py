#!/usr/bin/python3
"""The two sides a site writes to plug a cluster into rmbus, in one small program (docs/protocol.md):

  agents        one per node, publishing `agent.heartbeat` (4.1);
  orchestrator  publishing `orchestrator.workmap`: a full map, then deltas between full maps (4.2, 4.2.1),
                and carrying out `rm.state` (4.3) behind the HA epoch fence (4.8): it starts a process for
                every `new` share and stops those marked `preempt` or `evict`, and says so in its next map,
                which echoes `rm_epoch` and `rm_cycle`.

The agents and the processes are simulated: a process is "starting" when its share is seen `new`, and
"running" --init-ms later. Everything travels as two ZeroMQ frames [topic, MessagePack map] through the
RM's forwarder: publish to its --bus-pub endpoint, subscribe at its --bus-sub endpoint (docs/bus.md).

Needs only Debian's python3-zmq and python3-msgpack. Example, against an RM started with tools/sim/rmbus-sim.toml:
  examples/orchestrator.py --bus-pub tcp://127.0.0.1:5560 --bus-sub tcp://127.0.0.1:5561 --nodes 4 --seconds 30
Exit status: 0 when every job had all its processes running within --seconds, 1 otherwise, 2 on bad options.
"""
import argparse
import sys
import time

import msgpack
import zmq

MAX_BODY_BYTES = 16 * 1024 * 1024  # the RM's own bound on a body (protocol section 6)


class Publisher:
    """One PUB socket; every body gets the envelope of section 2, with `seq` counted per (src, topic)."""

    def __init__(self, ctx, endpoint):
        self.sock = ctx.socket(zmq.PUB)
        self.sock.setsockopt(zmq.LINGER, 500)
        self.sock.connect(endpoint)
        self.seqs = {}

    def send(self, topic, src, fields):
        seq = self.seqs.get((src, topic), 0) + 1
        self.seqs[(src, topic)] = seq
        # A full map's `work` comes last (fields' order): the RM then decodes only the items that changed (4.2).
        body = {"v": 1, "seq": seq, "ts_ms": int(time.time() * 1000), "src": src, **fields}
        self.sock.send_multipart([topic.encode(), msgpack.packb(body)])
        return seq


class Agents:
    """The node side: one heartbeat per node per interval (4.1). A real agent reports its own machine."""

    def __init__(self, pub, nodes, memory_mb):
        self.pub, self.nodes, self.memory_mb = pub, nodes, memory_mb

    def beat(self):
        for node in self.nodes:
            self.pub.send("agent.heartbeat", node, {"node": node, "ip": "127.0.0.1", "memory_mb": self.memory_mb})


class EpochFence:
    """4.8: act only on an rm.state whose epoch is at least the highest accepted; once one was accepted, a
    schedule without an epoch counts as 0. Echo the highest as rm_epoch, the last cycle acted on as rm_cycle."""

    def __init__(self):
        self.highest = None  # None: no epoch ever seen (HA off): the map carries no rm_epoch
        self.cycle = None    # None: no schedule acted on yet: the map carries no rm_cycle

    def accept(self, epoch, cycle):
        """Returns (accepted, raised): raised when the epoch is above every one accepted before."""
        e = epoch if epoch is not None else 0
        if self.highest is not None and e < self.highest:
            return False, False
        raised = epoch is not None and (self.highest is None or epoch > self.highest)
        if epoch is not None:
            self.highest = epoch
        self.cycle = cycle
        return True, raised

    def echo(self):
        return {k: v for k, v in (("rm_epoch", self.highest), ("rm_cycle", self.cycle)) if v is not None}


class Orchestrator:
    """The work side: the work map it publishes, and what it does with each schedule."""

    SRC = "example-orchestrator"

    def __init__(self, pub, a, nodes):
        self.pub, self.a = pub, a
        self.fence = EpochFence()
        self.work = {}         # id -> work item (4.2), as the RM last saw it or about to
        self.dirty = set()     # ids changed since the last map
        self.added = set()     # ids added since the last map
        self.started_at = {}   # share id -> when its process was started (simulated initialization)
        self.node_memory = {n: a.node_mb for n in nodes}  # lets a restarted RM size a node not heard yet
        self.last_seq = None   # seq of the last map published (a delta's base_seq)
        self.maps_since_full = 0
        self.need_full = True

    def submit(self, job_id, user):
        self.work[job_id] = {
            "id": job_id, "kind": "job", "user": user, "class": self.a.job_class, "memory_mb": self.a.process_mb,
            "submitted_ms": int(time.time() * 1000), "state": "waiting", "max_processes": self.a.processes,
            "threads": 1, "items_total": 100000, "items_done": 0, "item_ms": 0, "processes": []}
        self.added.add(job_id)
        print(f"submit {job_id} (user {user}): {self.a.processes} processes of {self.a.process_mb} MB", flush=True)

    def publish(self):
        """A full map every --full-every maps (and when the RM asked for one), a delta otherwise."""
        echo = self.fence.echo()
        if self.need_full or self.last_seq is None or self.maps_since_full + 1 >= self.a.full_every:
            seq = self.pub.send("orchestrator.workmap", self.SRC, {**echo, "work": list(self.work.values())})
            self.maps_since_full, self.need_full = 0, False
            what = f"full map, {len(self.work)} jobs"
        else:
            delta = {"base_seq": self.last_seq, **echo}
            added, changed = sorted(self.added), sorted(self.dirty - self.added)  # an id in one list only
            for key, ids in (("added", added), ("changed", changed)):
                if ids:
                    delta[key] = [self.work[i] for i in ids]
            seq = self.pub.send("orchestrator.workmap", self.SRC, delta)
            self.maps_since_full += 1
            what = f"delta on {self.last_seq}, added {added}, changed {changed}" if added or changed else ""
        if what:
            print(f"map seq {seq}: {what}" + (f", echoing {echo}" if echo else ""), flush=True)
        self.last_seq = seq
        self.added.clear()
        self.dirty.clear()

    def on_state(self, env_epoch, body):
        """Carries out one rm.state behind the fence. Returns True when the map should go out at once."""
        cycle = body["cycle"]
        accepted, raised = self.fence.accept(env_epoch, cycle)
        if not accepted:
            print(f"rm.state cycle {cycle} of epoch {env_epoch} ignored: below the accepted epoch "
                  f"{self.fence.highest} (a deposed RM)", flush=True)
            return False
        if raised:
            print(f"accepted epoch {env_epoch}: the next map echoes it at once", flush=True)
        for job in body["jobs"]:
            item = self.work.get(job["id"])
            if item is None:
                continue
            for share in job["shares"]:
                self.follow(item, share, cycle)
        return raised

    def follow(self, item, share, cycle):
        procs = item["processes"]
        mine = next((p for p in procs if p["id"] == share["id"]), None)
        if share["status"] == "new" and mine is None:
            procs.append({"id": share["id"], "node": share["node"], "state": "starting", "init_ms": 0, "run_ms": 0,
                          "node_memory_mb": self.node_memory.get(share["node"], self.a.node_mb)})
            self.started_at[share["id"]] = time.monotonic()
            self.dirty.add(item["id"])
            print(f"cycle {cycle}: start {item['id']} share {share['id']} on {share['node']}", flush=True)
        elif share["status"] in ("preempt", "evict") and mine is not None:
            procs.remove(mine)  # the process is stopped; the next map no longer shows it
            self.started_at.pop(share["id"], None)
            self.dirty.add(item["id"])
            print(f"cycle {cycle}: stop {item['id']} share {share['id']} on {share['node']} ({share['status']})",
                  flush=True)

    def initialize(self):
        """Simulated start-up: a process is running --init-ms after it started; its job is then running."""
        for item in self.work.values():
            for p in item["processes"]:
                begun = self.started_at.get(p["id"])
                if p["state"] == "starting" and begun is not None and time.monotonic() - begun >= self.a.init_ms / 1000:
                    p["state"], p["init_ms"] = "running", self.a.init_ms
                    item["state"] = "running"
                    self.dirty.add(item["id"])
                    print(f"{item['id']} share {p['id']} running on {p['node']}", flush=True)

    def running(self):
        return sum(1 for w in self.work.values() for p in w["processes"] if p["state"] == "running")

    def all_running(self):
        return all(sum(p["state"] == "running" for p in w["processes"]) >= w["max_processes"]
                   for w in self.work.values())


def decode(topic, body):
    """Untrusted bytes: bounded, a map with string keys, envelope version 1; else None with the reason printed."""
    try:
        if len(body) > MAX_BODY_BYTES:
            raise ValueError(f"body of {len(body)} bytes exceeds {MAX_BODY_BYTES}")
        m = msgpack.unpackb(body, raw=False)  # the size is bounded above
        if not isinstance(m, dict) or m.get("v") != 1:
            raise ValueError("not a version 1 map")
        return m
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        print(f"{topic}: dropped a message that does not decode: {e}", file=sys.stderr, flush=True)
        return None


def valid_state(m):
    """The rm.state keys this program reads (4.3), with their types; other keys are ignored, as 4.3 asks."""
    epoch = m.get("epoch")
    return (epoch is None or isinstance(epoch, int)) and isinstance(m.get("cycle"), int) and \
        isinstance(m.get("jobs"), list) and all(
            isinstance(j, dict) and isinstance(j.get("id"), str) and isinstance(j.get("shares"), list) and all(
                isinstance(s, dict) and all(isinstance(s.get(k), str) for k in ("id", "node", "status"))
                for s in j["shares"]) for j in m["jobs"])


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bus-pub", required=True, help="the RM forwarder's publish side (rmbus --bus-pub)")
    ap.add_argument("--bus-sub", required=True, help="the RM forwarder's subscribe side (rmbus --bus-sub)")
    ap.add_argument("--nodes", type=int, default=4, help="simulated agents (default 4)")
    ap.add_argument("--node-mb", type=int, default=8192, help="memory each node offers, MB (default 8192)")
    ap.add_argument("--jobs", type=int, default=3, help="jobs submitted, one every --period-ms (default 3)")
    ap.add_argument("--processes", type=int, default=2, help="processes per job (default 2)")
    ap.add_argument("--process-mb", type=int, default=2048, help="memory per process, MB (default 2048)")
    ap.add_argument("--job-class", default="", help="scheduling class; empty: the RM's default class")
    ap.add_argument("--heartbeat-ms", type=int, default=200,
                    help="heartbeat period; below the RM's [timing] heartbeat_interval_ms (default 200)")
    ap.add_argument("--period-ms", type=int, default=250,
                    help="work map period; the RM's [timing] orchestrator_publish_ms (default 250)")
    ap.add_argument("--full-every", type=int, default=8, help="a full map every N maps, deltas between (default 8)")
    ap.add_argument("--init-ms", type=int, default=500, help="simulated process initialization (default 500)")
    ap.add_argument("--seconds", type=float, default=60, help="give up after this long (default 60)")
    a = ap.parse_args()
    for name in ("nodes", "node_mb", "jobs", "processes", "process_mb", "heartbeat_ms", "period_ms", "full_every"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.init_ms < 0 or a.seconds <= 0:
        ap.error("--init-ms must be at least 0 and --seconds above 0")
    return a


def main():
    a = parse_args()
    ctx = zmq.Context()
    try:
        agents = Agents(Publisher(ctx, a.bus_pub), [f"node-{i + 1}" for i in range(a.nodes)], a.node_mb)
        orch = Orchestrator(Publisher(ctx, a.bus_pub), a, agents.nodes)
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(a.bus_sub)
    except zmq.ZMQError as e:
        print(f"cannot connect to --bus-pub {a.bus_pub} or --bus-sub {a.bus_sub}: {e}", file=sys.stderr)
        return 2
    sub.setsockopt(zmq.SUBSCRIBE, b"rm.state")
    sub.setsockopt(zmq.SUBSCRIBE, b"rm.events")
    print(f"{a.nodes} agents of {a.node_mb} MB heartbeating every {a.heartbeat_ms} ms to {a.bus_pub}; "
          f"following rm.state at {a.bus_sub}; {a.jobs} jobs to run within {a.seconds:g} s", flush=True)

    start = time.monotonic()
    deadline = start + a.seconds
    next_beat = next_map = start
    submitted = 0
    ok = False
    while time.monotonic() < deadline:
        t = time.monotonic()
        if t >= next_beat:
            agents.beat()
            next_beat += a.heartbeat_ms / 1000
        if t >= next_map:
            if submitted < a.jobs:  # one job per period: the later ones arrive in deltas' `added`
                submitted += 1
                orch.submit(f"job-{submitted}", ["alice", "bob"][submitted % 2])
            orch.initialize()
            if orch.all_running() and submitted == a.jobs:
                ok = True
                break
            orch.publish()
            next_map += a.period_ms / 1000
        wait_ms = max(0, int((min(next_beat, next_map, deadline) - time.monotonic()) * 1000))
        if not sub.poll(wait_ms):
            continue
        frames = sub.recv_multipart()
        if len(frames) != 2:
            print(f"dropped a message of {len(frames)} frames (expected [topic, body])", file=sys.stderr, flush=True)
            continue
        topic = frames[0].decode(errors="replace")
        body = decode(topic, frames[1])
        if body is None:
            continue
        if topic == "rm.state":
            if not valid_state(body):
                print("rm.state: dropped a schedule without the keys and types of protocol 4.3", file=sys.stderr,
                      flush=True)
            elif orch.on_state(body.get("epoch"), body):
                orch.publish()  # a new active grants nothing until a map echoes its epoch
        elif topic == "rm.events" and body.get("kind") in ("workmap_resync", "workmap_delta_refused") \
                and isinstance(body.get("detail"), dict) and body["detail"].get("src") == orch.SRC:
            print(f"rm.events {body['kind']}: {body['detail']}; the next map is full", flush=True)
            orch.need_full = True

    took = time.monotonic() - start
    print(f"running processes: {orch.running()} of {a.jobs * a.processes} wanted, after {took:.1f} s", flush=True)
    print(f"ok: every job has its {a.processes} processes running" if ok else
          f"failed: not every job had its processes running within {a.seconds:g} s", flush=True)
    ctx.destroy(linger=500)  # closes the sockets; the last map leaves within half a second
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
