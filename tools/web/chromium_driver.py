"""Headless Chromium for rmbus-web's browser tests and benchmark (Debian's chromium, chromium-driver and
python3-selenium).

The flags: headless with no sandbox and no GPU (tests run as root, without a display); no QUIC, first-run,
background networking, component updates or sync, because on a machine without a network Chromium otherwise
keeps trying to reach Google's services and misbehaves; a fresh profile every time, so no run sees another's
state.
"""
import os
import shutil
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def start_chromium(width=1400, height=1000):
    """A headless Chromium under WebDriver; call stop_chromium(driver) when done."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            raise RuntimeError("%s is missing: install Debian's chromium and chromium-driver "
                               "(tools/install-deps.sh)" % path)
    profile = tempfile.mkdtemp(prefix="rmbus-web-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--user-data-dir=" + profile,
                 "--window-size=%d,%d" % (width, height)):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    driver.rmbus_profile = profile
    return driver


def stop_chromium(driver):
    try:
        driver.quit()
    finally:
        shutil.rmtree(getattr(driver, "rmbus_profile", ""), ignore_errors=True)
