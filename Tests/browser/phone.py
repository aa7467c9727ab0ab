#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rider's phone, played by Debian's Chromium through Selenium and chromium-driver.

Run by the Swift test WebBrowserTests against a real `rideguard run` and `rideguard web`:
    phone.py BASE_URL CODE SHOTS_FOLDER PRESS_COMMAND_JSON
It pairs with CODE, then checks what a rider does, 360 x 740 px like a small phone, and keeps a
screenshot of each page in SHOTS_FOLDER. Prints one JSON object of what it saw; exits 1 with the
reason on the first check that fails.
"""
import json
import subprocess
import sys
import time

from selenium.webdriver.common.by import By

from phone_browser import chromium, main_text, waited

base, code, shots, press = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
seen = {}


def fail(reason):
    print(json.dumps({"failed": reason, "seen": seen}))
    sys.exit(1)


def check(condition, reason):
    if not condition:
        fail(reason)


def wait_for(predicate, seconds, reason):
    """`reason` is called when the wait fails (what the page shows then)."""
    if not waited(predicate, seconds):
        fail(reason())


def text():
    return main_text(driver)


def fits(name):
    """No horizontal scrolling: the page is no wider than the screen."""
    width, screen = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    check(width <= screen, f"{name}: the page is {width} px wide on a {screen} px screen (it scrolls sideways)")
    driver.save_screenshot(f"{shots}/{name}.png")


driver = chromium()
try:
    # Not paired yet: the page says how to pair, and shows nothing of the rider's.
    driver.get(base + "/contacts")
    check("not paired" in text(), f"an unpaired phone saw: {text()[:200]}")
    fits("not-paired")

    # A made-up code is refused.
    driver.get(base + "/pair?code=abcdefghjkmn")
    check("does not work" in text(), f"a made-up code was not refused: {text()[:200]}")

    # The real code pairs this phone and lands on the status page, which goes live.
    driver.get(base + "/pair?code=" + code)
    check(driver.current_url.rstrip("/") == base, f"pairing went to {driver.current_url}")
    wait_for(lambda: "Protecting" in text(), 20, lambda: f"the status page never said Protecting: {text()[:300]}")
    fits("status")

    # The same code again is refused, even on the phone it paired.
    driver.get(base + "/pair?code=" + code)
    check("does not work" in text(), f"a used code was not refused: {text()[:200]}")

    # A contact with a bad number: the error is shown and what was typed is kept; then a good one.
    driver.get(base + "/contacts")
    form = driver.find_elements(By.CSS_SELECTOR, "form")[-1]
    form.find_element(By.NAME, "name").send_keys("Alex")
    form.find_element(By.NAME, "number").send_keys("12345")
    form.find_element(By.TAG_NAME, "button").click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[role=alert]"), 5, lambda: f"no error shown for a bad number: {text()[:300]}")
    seen["bad_number_error"] = driver.find_element(By.CSS_SELECTOR, "[role=alert]").text
    check(driver.find_elements(By.CSS_SELECTOR, "form")[-1].find_element(By.NAME, "number").get_attribute("value") == "12345",
          "the bad number typed was lost")
    fits("contacts-error")
    form = driver.find_elements(By.CSS_SELECTOR, "form")[-1]
    number = form.find_element(By.NAME, "number")
    number.clear()
    number.send_keys("+44 7700 900123")
    form.find_element(By.TAG_NAME, "button").click()
    wait_for(lambda: "+447700900123" in text(), 5, lambda: f"the good contact is not listed: {text()[:300]}")
    seen["contacts"] = [li.text.split("\n")[0] for li in driver.find_elements(By.CSS_SELECTOR, "ol.list li")]
    fits("contacts")
    # A test SMS to the new contact (the second): queued, said so.
    driver.find_elements(By.CSS_SELECTOR, "ol.list li")[1].find_element(By.XPATH, ".//button[text()='Test SMS']").click()
    wait_for(lambda: "Test SMS queued" in text(), 5, lambda: f"the test SMS was not queued: {text()[:300]}")

    # The button, pressed on the bike, seen live on the status page and on the checks page.
    driver.get(base + "/")
    wait_for(lambda: "Waiting for a press" in text() or "Button" in text(), 10, lambda: "the status page shows no button")
    started = time.time()
    subprocess.run(press, check=True, capture_output=True)
    wait_for(lambda: "Pressed" in text() or "is pressed" in text(), 5, lambda: f"the press was not seen on the status page: {text()[:300]}")
    seen["press_seen_after_s"] = round(time.time() - started, 2)
    driver.get(base + "/checks")
    wait_for(lambda: "Pressed" in text() or "is pressed" in text(), 5, lambda: "the press was not seen on the checks page")
    fits("checks")
    driver.find_element(By.XPATH, "//button[text()='Sound the buzzer']").click()
    wait_for(lambda: "buzzer sounded" in text(), 5, lambda: f"the buzzer was not sounded: {text()[:300]}")

    # A recording: started, stopped, listed; its report opens and its CSV is a trace.
    driver.get(base + "/recordings")
    form = driver.find_elements(By.CSS_SELECTOR, "form")[0]
    form.find_element(By.NAME, "name").send_keys("phone-test")
    form.find_element(By.TAG_NAME, "button").click()
    wait_for(lambda: "Recording to phone-test.csv" in text(), 5, lambda: f"the recording did not start: {text()[:300]}")
    time.sleep(2)
    driver.find_element(By.XPATH, "//button[text()='Stop recording']").click()
    wait_for(lambda: "Stopped: phone-test.csv" in text(), 5, lambda: f"the recording did not stop: {text()[:300]}")
    fits("recordings")
    csv = driver.execute_async_script(
        "const done = arguments[0]; fetch('/recordings/file?name=phone-test.csv').then(r => r.text()).then(done)")
    check(csv.startswith("# rideguard-trace v1"), f"the CSV download is not a trace: {csv[:80]}")
    seen["recording_lines"] = len(csv.splitlines())
    driver.find_element(By.LINK_TEXT, "Report").click()
    wait_for(lambda: "phone-test" in driver.page_source and "svg" in driver.page_source, 10, lambda: "the report did not open")
    driver.save_screenshot(f"{shots}/report.png")

    for page in ["profile", "journal", "card"]:
        driver.get(base + "/" + page)
        fits(page)
    driver.get(base + "/journal?kind=system")
    check("contact added: Alex" in text(), f"the journal does not show the new contact: {text()[:300]}")
    driver.get(base + "/checks/doctor")
    wait_for(lambda: "✓" in text(), 30, lambda: "the doctor's list did not come")
    fits("doctor")
    print(json.dumps(seen))
finally:
    driver.quit()
