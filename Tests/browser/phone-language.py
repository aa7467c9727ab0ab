#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rider's phone, in the rider's language: Debian's Chromium through Selenium and chromium-driver.

Run by the Swift test WebTests against a real `rideguard run` and `rideguard web`, the rider's
language set beforehand:
    phone-language.py BASE_URL CODE SHOTS_FOLDER
It pairs with CODE, meets the refusals a rider meets (a number without its country code, an alert
message too short), then chooses German on the Rider page. Prints one JSON object of what each page
said (the Swift test checks the words); exits 1 with the reason when a page never came.
"""
import json
import sys
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from phone_browser import chromium, main_text, waited

base, code, shots = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}


def fail(reason):
    print(json.dumps({"failed": reason, "seen": seen}))
    sys.exit(1)


def wait_for(predicate, seconds, reason):
    if not waited(predicate, seconds):
        fail(reason)


def text():
    return main_text(driver)


def page(name):
    """What the page says, its language and its sections; a screenshot."""
    driver.save_screenshot(f"{shots}/{name}.png")
    return {"lang": driver.find_element(By.TAG_NAME, "html").get_attribute("lang"), "text": text(),
            "nav": [a.text for a in driver.find_elements(By.CSS_SELECTOR, "nav a")],
            "said": [p.text for p in driver.find_elements(By.CSS_SELECTOR, "[role=status]")],
            "alert": [p.text for p in driver.find_elements(By.CSS_SELECTOR, "[role=alert]")]}


driver = chromium(mobile=False)
try:
    driver.get(base + "/contacts")
    seen["not_paired"] = page("lang-not-paired")
    driver.get(base + "/pair?code=" + code)
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#status .big"), 20, "the status page never came")
    time.sleep(1)
    seen["status"] = page("lang-status")

    driver.get(base + "/contacts")
    form = driver.find_elements(By.CSS_SELECTOR, "form")[-1]
    form.find_element(By.NAME, "name").send_keys("Léa")
    form.find_element(By.NAME, "number").send_keys("06 98 76 54 32")
    form.find_element(By.TAG_NAME, "button").click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[role=alert]"), 5, "no error for a number without its country code")
    seen["bad_number"] = page("lang-contacts-error")
    form = driver.find_elements(By.CSS_SELECTOR, "form")[-1]
    number = form.find_element(By.NAME, "number")
    number.clear()
    number.send_keys("+33 6 98 76 54 32")
    form.find_element(By.TAG_NAME, "button").click()
    wait_for(lambda: "+33698765432" in text(), 5, "the contact was not added")
    seen["added"] = page("lang-contacts")

    driver.get(base + "/profile")
    message = driver.find_element(By.NAME, "message")
    message.clear()
    message.send_keys("Aïe")
    driver.find_elements(By.CSS_SELECTOR, "form button")[-1].click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[role=alert]"), 5, "no error for a message too short")
    seen["short_message"] = page("lang-profile-error")

    driver.get(base + "/profile")
    Select(driver.find_element(By.NAME, "language")).select_by_value("de")
    driver.find_elements(By.CSS_SELECTOR, "form button")[-1].click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "[role=status]"), 5, "the language was not saved")
    seen["german"] = page("lang-profile-german")
    driver.get(base + "/checks")
    seen["german_checks"] = page("lang-checks-german")
    print(json.dumps(seen))
finally:
    driver.quit()
