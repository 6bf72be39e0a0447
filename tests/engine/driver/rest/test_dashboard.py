"""The dashboard page in a real browser: headless Chromium (Debian's package) driven by
Playwright, on a running job: the graph shows every operator and how busy its task is,
the records/s numbers rise, the checkpoint table fills, and the savepoint button takes a
savepoint."""
import shutil

import pytest

from tests.engine.driver.rest.rest_job import OPERATORS, get, job_id, start_job

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Chromium: apt-get install chromium (.ci/run installs it)")


def test_the_dashboard_shows_the_running_job_and_takes_a_savepoint(tmp_path):
    from playwright.sync_api import sync_playwright
    savepoints = tmp_path / "savepoints"
    client, url, _ = start_job(tmp_path, "local", "dashboard", **{
        "web.savepoint.enable": "true", "state.savepoints.dir": savepoints})
    try:
        vertices = get(f"{url}/jobs/{job_id(url)}")["vertices"]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url + "/")

            page.wait_for_function(f"document.querySelectorAll('#graph .vertex').length == "
                                   f"{len(vertices)}")
            graph = page.text_content("#graph")
            assert all(operator in graph for operator in OPERATORS), graph
            assert "HASH" in graph and "Parallelism: 2" in graph
            assert page.inner_text("#job-state") == "RUNNING"

            page.wait_for_function("Number(document.getElementById('records-in')"
                                   ".textContent.replace(/,/g, '')) > 0")
            # each operator's task shows how busy it is
            page.wait_for_function("[...document.querySelectorAll('#graph .busy')].every("
                                   "text => /^busy \\d+ %$/.test(text.textContent))")
            page.wait_for_function("document.querySelector('#throughput polyline')"
                                   ".getAttribute('points').split(' ').length >= 3")
            page.wait_for_function("document.querySelectorAll('#checkpoints tbody tr')"
                                   ".length >= 1", timeout=60_000)
            assert "COMPLETED" in page.inner_text("#checkpoints tbody")
            assert page.is_disabled("#cancel") and not page.is_disabled("#savepoint")

            page.click("#savepoint")
            page.wait_for_function("document.getElementById('action-result').textContent"
                                   ".startsWith('Savepoint: ')", timeout=60_000)
            location = page.inner_text("#action-result").split(": ", 1)[1]
            assert location.startswith(str(savepoints))
            page.wait_for_function(
                "[...document.querySelectorAll('#checkpoints tbody tr')].some("
                "row => row.textContent.includes('savepoint'))", timeout=60_000)
            page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
            browser.close()
        assert errors == []
    finally:
        client.cancel().result(timeout=60)
