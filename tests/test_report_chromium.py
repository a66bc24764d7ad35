"""The HTML report as a browser shows it: rendered in headless Chromium (Debian's ``chromium`` package, installed
by this test's setup where it is absent and the test runs as root; skipped with the reason otherwise), at a
laptop's first screen (1280 x 800 CSS pixels) and at a narrow one (900 wide). Every image loads, no element
runs past the page's width, and the verdict's first sentence (what to run) lies wholly in the first screen.

A copy of the report gets a script that measures the page once it has loaded and writes what it found into
an attribute; ``--dump-dom`` prints the page then. The report itself holds no script (tests/test_plan.py)."""

import html
import json
import os
import re
import shutil
import subprocess

import pytest

from spare_jax.planner.plan import Costs, Fleet, PlanOptions, plan
from spare_jax.planner.report import render_html

pytestmark = pytest.mark.slow  # a plan, Chromium's start and two renders: about 20 s on 2 cores

CHECK = """<script>
window.addEventListener("load", () => {
  const W = document.documentElement.clientWidth, H = window.innerHeight;
  const imgs = [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0}));
  const over = [...document.body.querySelectorAll("*")].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.right > W + 0.5 || r.left < -0.5);
  }).map(e => e.tagName + "." + e.className + ": " + (e.textContent || "").slice(0, 80));
  const answer = document.querySelector("p.verdict .answer");
  let rects = [];
  if (answer) { const range = document.createRange(); range.selectNodeContents(answer);
                rects = [...range.getClientRects()].map(r => [r.left, r.top, r.right, r.bottom]); }
  document.body.setAttribute("data-check", JSON.stringify({
    W, H, scroll_width: document.documentElement.scrollWidth, imgs, over, rects,
    answer: answer ? answer.textContent : null}));
});
</script>"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium():
    path = _chromium()
    if path is None and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run("apt-get update -qq && apt-get install -y -qq chromium", shell=True, capture_output=True,
                       timeout=1200, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        path = _chromium()
    if path is None:
        pytest.skip("headless Chromium is absent (Debian's chromium package) and cannot be installed here: "
                    "installing it needs root and apt-get")
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A small plan's report (16 groups, a harsh failure rate, a deadline), written to a file."""
    res = plan(Fleet(1536, 96, gpu_mtbf_hours=300.0), Costs(work_hours=100.0, deadline_hours=160.0),
               PlanOptions(r_max=4, runs=20, sensitivity=False))
    path = tmp_path_factory.mktemp("report") / "plan.html"
    path.write_text(render_html(res), encoding="utf-8")
    return path, res


def render(chromium: str, page: str, width: int, height: int) -> dict:
    """What the check script found on ``page`` (an HTML file's text) at ``width`` x ``height``."""
    d = os.path.dirname(os.path.abspath(__file__))
    probe = os.path.join(d, f".report_probe_{os.getpid()}_{width}.html")
    try:
        with open(probe, "w", encoding="utf-8") as fh:
            fh.write(page.replace("</body>", CHECK + "\n</body>"))
        out = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                              f"--window-size={width},{height}", "--virtual-time-budget=10000", "--dump-dom",
                              "file://" + probe], capture_output=True, text=True, timeout=120)
    finally:
        os.remove(probe)
    m = re.search(r'data-check="([^"]*)"', out.stdout)
    assert m, out.stderr[-2000:]
    return json.loads(html.unescape(m.group(1)))


@pytest.mark.parametrize("width,height", [(1280, 800), (900, 800)])
def test_the_report_renders_whole_with_the_answer_in_the_first_screen(chromium, report, width, height):
    path, res = report
    found = render(chromium, path.read_text(encoding="utf-8"), width, height)
    assert 0 < found["W"] <= width, found["W"]
    assert len(found["imgs"]) >= 2 and all(i["ok"] for i in found["imgs"]), found["imgs"]
    assert not found["over"], found["over"][:5]
    assert found["scroll_width"] <= found["W"], (found["scroll_width"], found["W"])
    first = res.verdict["text"].split("\n")[0]
    assert found["answer"] == first
    assert found["rects"], "the verdict's first sentence has no box"
    for left, top, right, bottom in found["rects"]:
        assert 0 <= top and bottom <= found["H"] and 0 <= left and right <= found["W"], (found["rects"], found["H"])
