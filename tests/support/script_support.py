"""What the Python test scripts share: loopback ports claimed against other test processes, and checks that
print what held and raise Fail on what did not."""
import fcntl
import os
import random
import socket

_claimed_ports = []  # open claim files: their locks hold until this process exits


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)
    print("ok:", what, flush=True)


def free_port():
    """A loopback port below the kernel's ephemeral range (so no connection's source port can take it before
    rmbus binds it), claimed against other test processes as tests/support/child_process.cpp does (the same
    claim files)."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    os.makedirs("/tmp/rmbus-test-ports", exist_ok=True)
    for _ in range(1000):
        port = random.randint(10000, low - 1)
        claim = open(f"/tmp/rmbus-test-ports/{port}", "a")
        try:
            fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            claim.close()
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _claimed_ports.append(claim)
        return port
    raise Fail("no free loopback port below the ephemeral range")
