#!/usr/bin/python3
"""An idle RM reads as idle in rmbus-web, not as a dead one (issue 51): headless Chromium against a real rmbus,
a short rmbus-sim run and rmbus-web on loopback.

  1. while rmbus-sim runs, the page shows the rounds and no IDLE badge;
  2. when it ends (no work map comes any more), the header shows IDLE with the RM's reason ("idle: no work map
     for ...") and no STALE, and keeps doing so; the Health view says idle;
  3. when the RM hangs (SIGSTOP), its word stops coming and the page says STALE instead.
Exit status 0 when every check passed; the first failed check is printed. Screenshots go to --artifacts.
"""
import os
import shutil
import signal
import sys
import tempfile
import time

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..", "support"))
from script_support import Fail, check, free_port  # noqa: E402
from page_support import (check_console, parse_args, report_failure, start_logged, start_rmbus,  # noqa: E402
                          start_web, stop_processes, text_of, wait)

SCENARIO = """
name = "web-idle-test"
description = "one job for a few seconds, then no orchestrator"

[cluster]
nodes = "2x32G@default:idle"

[orchestrator]
init_ms = 200

[[job]]
at_s = 0
user = "ann"
class = "normal"
memory = "4G"
items = 200000
threads = 2
item_ms = 1000
"""


def shown(driver, element_id):
    return driver.find_element(By.ID, element_id).is_displayed()


def main():
    a = parse_args()
    from chromium_driver import start_chromium, stop_chromium

    work = tempfile.mkdtemp(prefix="rmbus-web-idle-")
    scenario = os.path.join(work, "idle.toml")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    pub, sub, admin = (free_port() for _ in range(3))
    procs = []

    driver = None
    passed = False
    rm = None
    try:
        rm = start_rmbus(a, pub, sub, admin, "info", work, procs)
        url = start_web(a.web, sub, admin, work, procs)
        driver = start_chromium()
        driver.get(url)

        # 1. Rounds while the simulated orchestrator publishes (the RM's map period is 250 ms).
        sim = start_logged([a.sim, "--bus-pub", "tcp://127.0.0.1:%d" % pub, "--bus-sub",
                            "tcp://127.0.0.1:%d" % sub, "--scenario", scenario, "--seconds", "6",
                            "--summary-every-ms", "0"], work, "sim.log", procs)
        wait(driver, 60, lambda d: text_of(d, "hdr-cycle").startswith("cycle "), "the header shows the rounds")
        check(not shown(driver, "idle"), "no IDLE badge while rounds come")

        # 2. The orchestrator is gone: the RM says it is idle (after 2 map periods, reported every second); the
        # page shows it and not STALE, and goes on so (STALE used to come 3 round periods after the last round).
        sim.wait(60)
        wait(driver, 15, lambda d: shown(d, "idle") and text_of(d, "idle") == "IDLE", "the IDLE badge shows")
        why = text_of(driver, "hdr-why")
        check(why.startswith("idle: no work map for ") and "(the last round was " in why,
              "the header says why: " + why)
        end = time.monotonic() + 6
        while time.monotonic() < end:
            check(not shown(driver, "stale"), "no STALE beside IDLE (6 s watched)")
            check(shown(driver, "idle"), "IDLE stays (6 s watched)")
            time.sleep(0.5)
        driver.execute_script("location.hash = arguments[0]", "health")
        wait(driver, 5, lambda d: d.find_elements(By.ID, "health-why") and
             text_of(d, "health-why") == "idle", "the Health view says idle")
        driver.save_screenshot(os.path.join(a.artifacts, "idle.png"))

        # 3. A hung RM: its reports stop, and after 3 report periods (1 s each) the page says STALE.
        rm.send_signal(signal.SIGSTOP)
        wait(driver, 15, lambda d: shown(d, "stale") and not shown(d, "idle"), "a hung RM shows STALE, not IDLE")
        wait(driver, 5, lambda d: d.find_elements(By.ID, "health-stale"), "the Health view says STALE")
        driver.save_screenshot(os.path.join(a.artifacts, "idle-then-hung.png"))
        rm.send_signal(signal.SIGCONT)

        check_console(driver)
        print("all checks passed; screenshots in", a.artifacts)
        passed = True
        return 0
    except Fail as f:
        report_failure(f, driver, os.path.join(a.artifacts, "idle-failure.png"), work)
        return 1
    finally:
        if driver:
            stop_chromium(driver)
        if rm is not None and rm.poll() is None:
            rm.send_signal(signal.SIGCONT)
        stop_processes(procs)
        if passed:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
