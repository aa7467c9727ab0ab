# SPDX-License-Identifier: Apache-2.0
"""What the phone scripts share: Debian's Chromium at a small phone's size, a page's main text, and
waiting for what a page must show."""
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def chromium(mobile=True):
    """Headless Chromium, 360 x 740 px (as a phone, with its user agent, when `mobile`)."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=360,740"]:
        options.add_argument(argument)
    if mobile:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": 360, "height": 740, "pixelRatio": 1.0},
            "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Mobile Safari/537.36",
        })
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def main_text(driver):
    """The page's main text; empty while a new page loads."""
    try:
        return driver.find_element(By.TAG_NAME, "main").text
    except Exception:
        return ""


def waited(predicate, seconds):
    """Whether `predicate` came true within `seconds` (an exception counts as not yet)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.2)
    return False
