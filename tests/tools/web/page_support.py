"""What the headless-Chromium tests of rmbus-web share: rmbus-web started on a free port, bounded waits on the
page that print what held, and the teardown of the processes a test started."""
import argparse
import os
import signal
import subprocess
import sys
import time

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from script_support import Fail, check


def wait(driver, timeout_s, cond, what):
    try:
        got = WebDriverWait(driver, timeout_s, poll_frequency=0.2).until(lambda d: cond(d))
    except TimeoutException:
        raise Fail("within %d s: %s" % (timeout_s, what))
    print("ok:", what, flush=True)
    return got


def text_of(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def start_web(web_bin, sub, admin, work, procs):
    """rmbus-web on a free port of 127.0.0.1, following the bus at port `sub` and the admin at port `admin`;
    returns the page's URL, which its first line on stdout names."""
    web = subprocess.Popen([web_bin, "--bus-sub", "tcp://127.0.0.1:%d" % sub, "--admin",
                            "tcp://127.0.0.1:%d" % admin, "--listen", "127.0.0.1:0", "--log-level", "warn"],
                           stdout=subprocess.PIPE, stderr=open(os.path.join(work, "web.log"), "w"), text=True)
    procs.append(web)
    line = web.stdout.readline()
    check(line.startswith("rmbus-web: serving http://127.0.0.1:"), "rmbus-web says where it serves: " + line.strip())
    return line.split()[2]


def stop_processes(procs, grace_s=5):
    """SIGTERM to every process still running, SIGKILL to those not gone within `grace_s` in all."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def parse_args():
    """The command line both browser tests take from ctest; also puts tools/web (chromium_driver) on the path."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rmbus", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--web", required=True)
    ap.add_argument("--source", required=True, help="the source tree (rmbus-sim.toml, tools/web)")
    ap.add_argument("--artifacts", required=True, help="where the screenshots go")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.source, "tools", "web"))
    os.makedirs(a.artifacts, exist_ok=True)
    return a


def start_logged(args, work, log, procs):
    """A process with its output in `work`/`log`, listed in `procs` for stop_processes."""
    p = subprocess.Popen(args, stdout=open(os.path.join(work, log), "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def start_rmbus(a, pub, sub, admin, log_level, work, procs):
    """rmbus on the simulation's timings (tools/sim/rmbus-sim.toml) at the given loopback ports."""
    return start_logged([a.rmbus, "--config", os.path.join(a.source, "tools/sim/rmbus-sim.toml"), "--bus-pub",
                         "tcp://127.0.0.1:%d" % pub, "--bus-sub", "tcp://127.0.0.1:%d" % sub, "--admin",
                         "tcp://127.0.0.1:%d" % admin, "--metrics", "off", "--log-level", log_level],
                        work, "rmbus.log", procs)


def check_console(driver):
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not errors, "the browser console has no errors: %s" % errors[:3])


def report_failure(failure, driver, screenshot, work):
    """What a failed check leaves: its words, the page as it stood (`screenshot`), and the last lines of each
    process's log in `work` (kept: the caller removes `work` only after a pass)."""
    print("FAILED:", failure, flush=True)
    if driver:
        driver.save_screenshot(screenshot)
    for log in ("rmbus.log", "sim.log", "web.log"):
        path = os.path.join(work, log)
        if os.path.exists(path):
            print("---- last lines of", log)
            print("".join(open(path).readlines()[-15:]))
