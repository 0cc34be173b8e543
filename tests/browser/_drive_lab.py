"""Drive the explorer notebook in a running JupyterLab with headless Chromium.

Usage: ``python -m tests.browser._drive_lab --base URL --token T --notebook NB.ipynb
--site FILE:LINE --screenshots DIR --result JSON``

The JupyterLab server is the test's (``test_explorer_lab.py`` starts and always kills it);
this script only browses it, in these steps:

1. open the notebook and wait until ``window.jupyterapp`` shows it ready with a kernel that is
   ``connected`` and ``idle`` (the toolbar's "idle" shows before the kernel exists);
2. Run > Run All Cells through the menu, retried (up to 3 times) when no prompt turns
   ``[*]``/``[n]``;
3. wait for ``.acl-lab-explorer`` holding two ``.js-plotly-plot`` with traces, failing fast
   on a Traceback in an output;
4. select the race finding in the explorer's ``<select>`` and wait for the timeline's x range
   to change and the source pane to show ``--site``; screenshots along the way;
5. read the computed colours of the source pane, the stream table and the timeline (its page
   background, paper, plot area and tick labels), switch JupyterLab to its Dark theme
   (the ``apputils:change-theme`` command, no re-run) and read them again.

Everything seen (ranges, options, source pane text, JavaScript errors, non-local requests)
goes to the result file; the assertions are the test's. Exit status 1: a step failed (the
result file then says which, and a ``-fail`` screenshot is saved).
"""

from __future__ import annotations

import argparse
import contextlib
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

from tests.browser._browser import Log, launch, watched_page, write_result

KERNEL_READY_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session
            && w.sessionContext.session.kernel;
  return !!(w && w.context && w.context.isReady && w.isRevealed && k
            && k.connectionStatus === 'connected' && k.status === 'idle');
}"""

RUN_STARTED_JS = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
  .some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))"""

#: 'ok' when the explorer shows two plots with traces (and a set x range on the first);
#: 'error: ...' as soon as an output holds a traceback; false meanwhile.
EXPLORER_READY_JS = """() => {
  const errs = [...document.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .filter(e => /Traceback|Error\\b/.test(e.textContent));
  if (errs.length) return 'error: ' + errs[0].textContent.slice(0, 3000);
  const ex = document.querySelector('.jp-OutputArea .acl-lab-explorer');
  if (!ex) return false;
  const plots = [...ex.querySelectorAll('.js-plotly-plot')];
  const drawn = p => Array.isArray(p.data) && p.data.length > 0 && !!p._fullLayout;
  if (plots.length < 2 || !plots.every(drawn)) return false;
  const r = plots[0].layout && plots[0].layout.xaxis && plots[0].layout.xaxis.range;
  if (!Array.isArray(r) || r.length !== 2) return false;
  return ex.querySelectorAll('select option').length > 0 ? 'ok' : false;
}"""

#: What the explorer shows now: plots, the timeline's x range, the list, the source pane.
EXPLORER_STATE_JS = """() => {
  const ex = document.querySelector('.jp-OutputArea .acl-lab-explorer');
  const plots = [...ex.querySelectorAll('.js-plotly-plot')];
  const site = ex.querySelector('code.acl-site');
  const pane = site && site.closest('.widget-html-content');
  const sel = ex.querySelector('select');
  return {
    plots: plots.map(p => ({traces: (p.data || []).length,
                            full_traces: (p._fullData || []).length,
                            width: p.getBoundingClientRect().width,
                            height: p.getBoundingClientRect().height})),
    x_range: plots[0].layout.xaxis.range.slice(),
    options: [...sel.options].map(o => o.textContent),
    selected: sel.selectedIndex,
    sites: [...ex.querySelectorAll('code.acl-site')].map(e => e.textContent),
    source_pane: pane ? pane.innerText : null,
    explorer_count: document.querySelectorAll('.acl-lab-explorer').length,
    stream_table: (() => {
      const t = ex.querySelector('table.acl-stream-state');
      const box = t && t.closest('.widget-vbox');
      if (!t || !box) return null;
      const tr = t.getBoundingClientRect(), br = box.getBoundingClientRect();
      return {table_left: tr.left, table_right: tr.right, pane_left: br.left,
              pane_right: br.right, explorer_right: ex.getBoundingClientRect().right,
              rows: t.querySelectorAll('tbody tr').length};
    })(),
  };
}"""

#: True once the timeline's x range differs from ``arg.range`` and the source pane shows
#: ``arg.site``.
FOLLOWED_JS = """(arg) => {
  const ex = document.querySelector('.jp-OutputArea .acl-lab-explorer');
  const p = ex.querySelector('.js-plotly-plot');
  const r = p && p.layout && p.layout.xaxis && p.layout.xaxis.range;
  const moved = Array.isArray(r) && (r[0] !== arg.range[0] || r[1] !== arg.range[1]);
  const sites = [...ex.querySelectorAll('code.acl-site')].map(e => e.textContent);
  return moved && sites.some(s => s.endsWith(arg.site));
}"""


#: Computed colours of the explorer's panes and timeline; ``page`` is the first opaque
#: background behind the plot (what its transparent paper shows).
THEME_COLOURS_JS = r"""() => {
  const ex = document.querySelector('.jp-OutputArea .acl-lab-explorer');
  const plot = ex.querySelector('.js-plotly-plot');
  const cs = e => e ? getComputedStyle(e) : null;
  const behind = e => {
    for (let n = e; n; n = n.parentElement) {
      const c = getComputedStyle(n).backgroundColor;
      if (c && c !== 'transparent' && !/rgba\([^)]*,\s*0\)$/.test(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  // an SVG element's fill with its fill-opacity folded in (Plotly sets the two apart)
  const fill = e => {
    if (!e) return null;
    const c = cs(e), m = c.fill.match(/[\d.]+/g);
    if (!m || m.length < 3) return c.fill;
    const a = (m.length > 3 ? +m[3] : 1) * +c.fillOpacity;
    return `rgba(${m[0]}, ${m[1]}, ${m[2]}, ${a})`;
  };
  const pre = ex.querySelector('pre.acl-source');
  const th = ex.querySelector('table.acl-stream-state th');
  const td = ex.querySelector('table.acl-stream-state td');
  const tick = plot.querySelector('.xtick text');
  const bg = plot.querySelector('.bglayer rect.bg');
  const body = document.body;
  const v = name => getComputedStyle(body).getPropertyValue(name).trim();
  return {
    theme: body.dataset.jpThemeName, theme_light: body.dataset.jpThemeLight,
    vars: {layout0: v('--jp-layout-color0'), font1: v('--jp-ui-font-color1'),
           border1: v('--jp-border-color1')},
    source: pre && {color: cs(pre).color, background: cs(pre).backgroundColor,
                    behind: behind(pre.parentElement)},
    table: th && td && {color: cs(td).color, border: cs(th).borderBottomColor,
                        behind: behind(td)},
    figure: {page: behind(plot), paper: cs(plot.querySelector('svg.main-svg')).backgroundColor,
             plot_area: fill(bg), tick: fill(tick)},
  };
}"""

DARK_THEME = "JupyterLab Dark"


def switch_theme(page: Page, theme: str) -> None:
    """Switch JupyterLab to ``theme`` with its own command and wait until its CSS applies."""
    page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: t})", theme)
    page.wait_for_function("(t) => document.body.dataset.jpThemeName === t", arg=theme)
    # the new theme's stylesheet loads after the attribute changes: wait for its colour
    page.wait_for_function("() => getComputedStyle(document.body)"
                           ".getPropertyValue('--jp-layout-color0').trim() !== 'white'")
    page.wait_for_timeout(500)


def run_all(page: Page, log: Log) -> int:
    """Run > Run All Cells through the menu until a prompt shows it ran; the attempts made."""
    for attempt in range(1, 4):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(RUN_STARTED_JS, timeout=10_000)
            return attempt
        except PlaywrightError:
            log(f"Run All Cells had no visible effect (attempt {attempt}); retrying")
            page.keyboard.press("Escape")  # close the menu if it is still open
            if page.locator(".jp-Dialog").count():
                page.locator(".jp-Dialog .jp-mod-accept").click()
    raise RuntimeError("Run > Run All Cells never started executing")


def open_and_run_all(page: Page, browser: Any, base: str, token: str, notebook: str,
                     result: dict[str, Any], log: Log) -> None:
    """Open ``notebook`` in JupyterLab, wait for an idle kernel, then Run All Cells
    (``result["step"]`` follows along; the attempts go to ``result["run_all_attempts"]``)."""
    result["step"] = "open"
    page.goto(f"{base}/lab/tree/{notebook}?token={token}")
    page.wait_for_function(KERNEL_READY_JS)
    log(f"notebook open, kernel connected and idle (Chromium {browser.version})")
    result["step"] = "run all"
    result["run_all_attempts"] = run_all(page, log)
    log(f"Run All Cells started (attempt {result['run_all_attempts']})")


def select_race(page: Page, before: list[float], site: str, log: Log) -> int:
    """Pick the race finding in the explorer's list until the timeline follows (3 tries)."""
    select = page.locator(".jp-OutputArea .acl-lab-explorer select").first
    labels = select.locator("option").all_text_contents()
    races = [i for i, text in enumerate(labels) if re.search(r"\brace\b", text)]
    if len(races) != 1:
        raise RuntimeError(f"expected one race finding in the list, got {labels}")
    others = [i for i in range(len(labels)) if i != races[0]]
    for attempt in range(1, 4):
        select.select_option(index=races[0])
        try:
            page.wait_for_function(FOLLOWED_JS, arg={"range": before, "site": site},
                                   timeout=15_000)
            return attempt
        except PlaywrightError:
            log(f"the timeline did not follow the race selection (attempt {attempt})")
            if others:  # select something else, so that the race is a change again
                select.select_option(index=others[0])
                page.wait_for_timeout(500)
    raise RuntimeError("selecting the race finding never moved the timeline")


def main() -> None:
    """Browse the notebook, run it, drive the explorer, write what was seen to ``--result``."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", required=True, help="http://127.0.0.1:PORT")
    ap.add_argument("--token", required=True)
    ap.add_argument("--notebook", required=True, help="the notebook's path under the root")
    ap.add_argument("--site", required=True, help="FILE:LINE of the racing call")
    ap.add_argument("--screenshots", type=Path, required=True, help="folder for the PNGs")
    ap.add_argument("--result", type=Path, required=True)
    ap.add_argument("--timeout", type=float, default=45.0, help="seconds per wait")
    a = ap.parse_args()
    log = Log()
    shots = a.screenshots
    result: dict[str, Any] = {"page_errors": [], "console_errors": [], "external_requests": [],
                              "screenshots": [], "step": "start"}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = watched_page(browser, a.base, result, height=1800, timeout_s=a.timeout)
            try:
                open_and_run_all(page, browser, a.base, a.token, a.notebook, result, log)

                result["step"] = "render"
                status = page.wait_for_function(EXPLORER_READY_JS).json_value()
                if status != "ok":
                    raise RuntimeError(f"the notebook raised in JupyterLab: {status}")
                page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]')
                result["rendered"] = page.evaluate(EXPLORER_STATE_JS)
                log(f"explorer rendered: {result['rendered']['plots']}")
                explorer = page.locator(".jp-OutputArea .acl-lab-explorer").first
                explorer.scroll_into_view_if_needed()
                explorer.screenshot(path=str(shots / "explorer-lab-rendered.png"))
                result["screenshots"].append(str(shots / "explorer-lab-rendered.png"))

                result["step"] = "select race"
                before = result["rendered"]["x_range"]
                result["select_attempts"] = select_race(page, before, a.site, log)
                result["selected"] = page.evaluate(EXPLORER_STATE_JS)
                log(f"race selected: x range {before} -> {result['selected']['x_range']}")
                page.wait_for_timeout(300)  # let Plotly finish the relayout before the shot
                explorer.screenshot(path=str(shots / "explorer-lab-race.png"))
                page.screenshot(path=str(shots / "explorer-lab-page.png"))
                result["screenshots"] += [str(shots / "explorer-lab-race.png"),
                                          str(shots / "explorer-lab-page.png")]

                result["step"] = "dark theme"
                result["colours_light"] = page.evaluate(THEME_COLOURS_JS)
                switch_theme(page, DARK_THEME)
                result["colours_dark"] = page.evaluate(THEME_COLOURS_JS)
                log(f"theme switched: {result['colours_light']} -> {result['colours_dark']}")
                explorer.screenshot(path=str(shots / "explorer-lab-dark.png"))
                result["screenshots"].append(str(shots / "explorer-lab-dark.png"))
                result["step"] = "done"
            except Exception as e:
                result["error"] = f"{type(e).__name__}: {e}"
                with contextlib.suppress(PlaywrightError):
                    page.screenshot(path=str(shots / "explorer-lab-fail.png"))
                    result["screenshots"].append(str(shots / "explorer-lab-fail.png"))
                raise
            finally:
                browser.close()
    finally:
        log(f"driver finished at step {result['step']!r}")
        write_result(a.result, result)


if __name__ == "__main__":
    main()
