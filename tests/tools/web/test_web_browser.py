#!/usr/bin/python3
"""rmbus-web in a real browser: headless Chromium (Debian's chromium + chromium-driver, python3-selenium)
against a real rmbus and a simulated cluster (rmbus-sim) on loopback.

What a user sees, as they see it (the page's DOM text, not its data):
  1. the page loads and lists the expected jobs, users and machines;
  2. sort order, selection and filters survive the updates that keep arriving;
  3. a job's explain opens, with the RM's numbers;
  4. a change on the bus (a job the scenario submits later) shows up without a reload;
  5. killing the RM (SIGKILL) shows the stale marker.
A screenshot of each view is saved under --artifacts. Every wait has a deadline; every process started here
is killed at the end. Exit status 0 when every check passed; the first failed check is printed.
"""
import os
import shutil
import signal
import sys
import tempfile

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..", "support"))
from script_support import Fail, check, free_port  # noqa: E402
from page_support import (check_console, parse_args, report_failure, start_logged, start_rmbus,  # noqa: E402
                          start_web, stop_processes, text_of, wait)

SCENARIO = """
name = "web-browser-test"
description = "ann in normal, bob in high, eve's forty small jobs in low, a late job 45 s in"

[cluster]
nodes = "4x32G@default:web,2x64G@default:big"

[orchestrator]
init_ms = 500

[[job]]
at_s = 0
user = "ann"
class = "normal"
memory = "4G"
items = 200000
threads = 2
item_ms = 1000
count = 2

[[job]]
at_s = 0
user = "bob"
class = "high"
memory = "8G"
items = 200000
threads = 2
item_ms = 1000

# Forty small jobs, so the job table is taller than its window and its scroll position can be checked.
[[job]]
at_s = 0
user = "eve"
class = "low"
memory = "1G"
items = 200000
threads = 1
item_ms = 1000
max_processes = 1
count = 40

[[job]]
at_s = 45
id = "late"
user = "dan"
class = "normal"
memory = "4G"
items = 200000
threads = 1
item_ms = 1000
"""




def click(driver, css):
    """A real click on a row; rows are redrawn by every update, so a row found just before may be replaced."""
    for _ in range(10):
        try:
            driver.find_element(By.CSS_SELECTOR, css).click()
            return
        except StaleElementReferenceException:
            continue
    raise Fail("could not click %s: it was redrawn under the pointer 10 times" % css)


def set_input(driver, element_id, value):
    driver.execute_script("const e = document.getElementById(arguments[0]); e.value = arguments[1];"
                          "e.dispatchEvent(new Event('input'))", element_id, value)


def show(driver, tab):
    driver.execute_script("location.hash = arguments[0]", tab)
    wait(driver, 5, lambda d: d.execute_script("return S.tab") == tab, "the %s tab shows" % tab)


def main():
    a = parse_args()
    from chromium_driver import start_chromium, stop_chromium

    for old in os.listdir(a.artifacts):  # screenshots of an earlier run, a failure's among them
        if old.endswith(".png"):
            os.remove(os.path.join(a.artifacts, old))
    work = tempfile.mkdtemp(prefix="rmbus-web-browser-")
    scenario = os.path.join(work, "web.toml")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    pub, sub, admin = (free_port() for _ in range(3))
    procs = []

    driver = None
    passed = False
    try:
        rm = start_rmbus(a, pub, sub, admin, "warn", work, procs)
        start_logged([a.sim, "--bus-pub", "tcp://127.0.0.1:%d" % pub, "--bus-sub", "tcp://127.0.0.1:%d" % sub,
               "--scenario", scenario, "--speed", "1", "--seconds", "200", "--summary-every-ms", "0"], work,
                     "sim.log", procs)
        url = start_web(a.web, sub, admin, work, procs)

        driver = start_chromium()
        driver.get(url)
        page_id = driver.execute_script("return window.__testPageId = Math.random()")

        # 1. The page lists the expected users, jobs and machines.
        wait(driver, 60, lambda d: "ann" in text_of(d, "pools") and "bob" in text_of(d, "pools"),
             "the Overview lists users ann and bob")
        overview = text_of(driver, "pools")
        check("--default--" in overview, "the Overview shows the pool --default--")
        check("normal" in overview and "high" in overview, "the Overview shows classes normal and high")
        check("6 of 6 nodes up" in overview, "the Overview counts the 6 nodes up")
        driver.save_screenshot(os.path.join(a.artifacts, "overview.png"))

        show(driver, "jobs")
        wait(driver, 30, lambda d: all(j in text_of(d, "j-table") for j in ("ann-1", "ann-2", "bob-1")),
             "the Jobs view lists ann-1, ann-2 and bob-1")
        check("43 of 43 jobs" in text_of(driver, "j-count"), "the Jobs view counts all 43 jobs")
        set_input(driver, "j-text", "late")
        check(text_of(driver, "j-count").startswith("0 of 43"), "the late job is not there yet")
        set_input(driver, "j-text", "")

        show(driver, "machines")
        wait(driver, 20, lambda d: all(n in text_of(d, "m-table") for n in
                                       ("web-001", "web-002", "web-003", "web-004", "big-001", "big-002")),
             "the Machines view lists all six nodes")
        painted = driver.execute_script("""
            const c = document.getElementById('viz'), g = c.getContext('2d');
            const px = g.getImageData(0, 0, c.width, c.height).data;
            let coloured = 0;
            for (let i = 0; i < px.length; i += 4) if (px[i + 3] && !(px[i] === px[i + 1] && px[i + 1] === px[i + 2])) coloured++;
            return coloured;""")
        check(painted > 100, "the memory picture paints shares in user colours (%d coloured pixels)" % painted)
        # Filter by state: nothing is down, so 'down' lists no node.
        set_input(driver, "m-state", "down")
        check(text_of(driver, "m-count").startswith("0 of 6"), "filtering by state 'down' lists no node")
        set_input(driver, "m-state", "")
        driver.save_screenshot(os.path.join(a.artifacts, "machines.png"))

        # 2. Sort, selection and filter survive updates.
        show(driver, "jobs")
        header = driver.find_element(By.CSS_SELECTOR, "#j-table .vhead > div[data-col='1']")  # user
        header.click()  # by user, ascending
        click(driver, "#j-table .vrow[data-key='ann-2']")
        seen = driver.execute_script("return rmbusWeb.snapshots")
        wait(driver, 15, lambda d: d.execute_script("return rmbusWeb.snapshots") >= seen + 3,
             "three more snapshots arrive")
        # Rows are redrawn by every update: read them in one go, in the page.
        order = driver.execute_script("return [...document.querySelectorAll('#j-table .vrow')].map(e => e.dataset.key)")
        users = [driver.execute_script("return S.snap.jobs[S.jobIndex.get(arguments[0])][1]", k) for k in order]
        check(users == sorted(users) and order[:2] == ["ann-1", "ann-2"],
              "the job list is still sorted by user: %s..." % order[:5])
        check("sorted-asc" in header.get_attribute("class"), "the user column still shows its sort mark")
        selected = driver.execute_script(
            "return [...document.querySelectorAll('#j-table .vrow.selected')].map(e => e.dataset.key)")
        check(selected == ["ann-2"], "ann-2 is still selected")
        driver.save_screenshot(os.path.join(a.artifacts, "jobs.png"))

        # The job table scrolled down stays where the reader left it.
        body = driver.find_element(By.CSS_SELECTOR, "#j-table .vbody")
        driver.execute_script("arguments[0].scrollTop = 330; arguments[0].dispatchEvent(new Event('scroll'))", body)
        top_row = lambda d: d.execute_script(
            "const b = arguments[0].getBoundingClientRect();"
            "return document.elementFromPoint(b.left + 30, b.top + 5).closest('.vrow').dataset.key", body)
        before = top_row(driver)
        seen = driver.execute_script("return rmbusWeb.snapshots")
        wait(driver, 15, lambda d: d.execute_script("return rmbusWeb.snapshots") >= seen + 3,
             "three more snapshots arrive")
        check(driver.execute_script("return arguments[0].scrollTop", body) == 330,
              "the job table's scroll position is kept")
        check(top_row(driver) == before, "the same job (%s) is still at the top of the window" % before)

        # 3. A job's explain opens with the RM's numbers.
        wait(driver, 20, lambda d: d.find_elements(By.ID, "explain-ok"), "explain of ann-2 arrives")
        check("Job ann-2" in text_of(driver, "job-title"), "the job view opened for ann-2")
        explain = text_of(driver, "job-explain")
        check("job ann-2" in explain and "pure fair share" in explain, "explain shows the RM's text for ann-2")
        check("shares on" in text_of(driver, "job-share-count"), "the job view lists where its shares run")
        driver.execute_script("document.getElementById('job').scrollIntoView()")
        driver.save_screenshot(os.path.join(a.artifacts, "job.png"))

        # A job the RM never listed, opened by its address right after ann-2: nothing of ann-2 stays.
        driver.execute_script("location.hash = '#job=nosuch'")
        wait(driver, 10, lambda d: "nosuch" in text_of(d, "job-title"), "the job view opens for nosuch")
        seen = driver.execute_script("return rmbusWeb.snapshots")
        wait(driver, 15, lambda d: d.execute_script("return rmbusWeb.snapshots") >= seen + 2,
             "two more snapshots arrive")
        title = text_of(driver, "job-title")
        check(title == "Job nosuch (not known)", "a job never listed says 'not known': %r" % title)
        count = text_of(driver, "job-share-count")
        check(count == "", "no share count of another job for nosuch: %r" % count)
        shares = text_of(driver, "job-shares")
        check(shares == "none", "no shares of another job for nosuch: %r" % shares)
        facts = text_of(driver, "job-facts")
        check("ann" not in facts and "has not listed this job" in facts, "no facts of ann-2 for nosuch: %r" % facts)
        driver.save_screenshot(os.path.join(a.artifacts, "job-not-known.png"))

        # 4. A change on the bus shows up without a reload: the scenario submits 'late' 45 s in.
        driver.execute_script("window.scrollTo(0, 0)")
        set_input(driver, "j-text", "late")
        wait(driver, 90, lambda d: "late" in text_of(d, "j-table"), "the late job appears in the Jobs view")
        check(driver.execute_script("return window.__testPageId") == page_id, "the page was not reloaded")

        show(driver, "events")
        wait(driver, 10, lambda d: d.execute_script("return document.querySelectorAll('#e-list .ev').length") > 0,
             "the Events view lists the RM's events")
        kinds = driver.execute_script("return [...document.getElementById('e-kind').options].map(o => o.value)"
                                      ".filter(v => v)")
        check(len(kinds) > 0, "the kind filter offers the kinds seen: %s" % kinds)
        set_input(driver, "e-kind", kinds[0])
        shown = driver.execute_script("return [...document.querySelectorAll('#e-list .ev .kind')].map(e => e.textContent)")
        check(shown and all(k == kinds[0] for k in shown), "filtered by kind %s, only its events show" % kinds[0])
        set_input(driver, "e-kind", "")
        driver.save_screenshot(os.path.join(a.artifacts, "events.png"))

        show(driver, "health")
        check("no rm.ha" in text_of(driver, "health"), "Health says this RM sends no HA beacon")
        check(not driver.find_element(By.ID, "stale").is_displayed(), "no stale marker while the RM publishes")

        # 5. Killing the RM shows the stale marker (3 round periods of 250 ms, at least 2 s; ticks every second).
        rm.send_signal(signal.SIGKILL)
        rm.wait(10)
        wait(driver, 15, lambda d: d.find_element(By.ID, "stale").is_displayed(), "the stale marker shows")
        wait(driver, 5, lambda d: d.find_elements(By.ID, "health-stale"), "the Health view says STALE")
        driver.save_screenshot(os.path.join(a.artifacts, "health-stale.png"))

        check_console(driver)
        print("all checks passed; screenshots in", a.artifacts)
        passed = True
        return 0
    except Fail as f:
        report_failure(f, driver, os.path.join(a.artifacts, "failure.png"), work)
        return 1
    finally:
        if driver:
            stop_chromium(driver)
        stop_processes(procs)
        if passed:  # a failure keeps the logs (their last lines are printed above)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
