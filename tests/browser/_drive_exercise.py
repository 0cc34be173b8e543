"""Drive an exercise notebook in a running JupyterLab: run it, fix one part, rerun its check.

Usage: ``python -m tests.browser._drive_exercise --base URL --token T --notebook NB.ipynb
--exercise 04.1 --cell-id part1-learner --source-file SOLUTION.py --checks 4
--screenshots DIR --result JSON``

The JupyterLab server is the test's (``test_exercise_lab.py`` starts and always kills it);
this script only browses it:

1. open the notebook and wait until the kernel is connected and idle (as ``_drive_lab``);
2. Run > Run All Cells, then wait for ``--checks`` check widgets (``.acl-lab-check``) and an
   idle kernel, failing fast on a traceback in an output;
3. record every check's item statuses and screenshot the ``--exercise`` check ("before");
4. replace the text of learner cell ``--cell-id`` by the file's text in its CodeMirror editor
   (click it, select all, insert the text, as a learner pasting a fix), falling back to
   the cell model's ``setSource`` only if the editor did not take the text;
5. Shift+Enter on that cell and on the check cell after it, wait until the exercise's
   check shows every item passed, record the statuses again and screenshot ("after").

Everything seen goes to the result file; the assertions are the test's. Exit status 1: a step
failed (the result file then says which, and a ``-fail`` screenshot is saved).
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

from tests.browser._browser import Log, launch, watched_page, write_result
from tests.browser._drive_lab import open_and_run_all

#: 'ok' once ``arg`` check widgets show items and the kernel is idle; 'error: ...' as soon
#: as an output holds a traceback; false meanwhile.
CHECKS_READY_JS = """(n) => {
  const errs = [...document.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .filter(e => /Traceback|Error\\b/.test(e.textContent));
  if (errs.length) return 'error: ' + errs[0].textContent.slice(0, 3000);
  const checks = [...document.querySelectorAll('.jp-OutputArea .acl-lab-check')];
  if (checks.length < n) return false;
  if (!checks.every(c => c.querySelectorAll('.acl-lab-item').length > 0)) return false;
  const busy = document.querySelector('.jp-Notebook-ExecutionIndicator[data-status="busy"]');
  const running = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .some(e => /\\[\\*\\]/.test(e.textContent));
  return busy || running ? false : 'ok';
}"""

#: ``{exercise: {item: status}}`` of every check widget, plus each score line.
STATUSES_JS = """() => {
  const out = {};
  for (const c of document.querySelectorAll('.jp-OutputArea .acl-lab-check')) {
    const items = {};
    for (const i of c.querySelectorAll('.acl-lab-item')) items[i.dataset.item] = i.dataset.status;
    const score = c.querySelector('.acl-lab-score');
    out[c.dataset.exercise] = {items, score: score ? score.textContent : null};
  }
  return out;
}"""

#: The index and source of the cell with id ``arg`` (nbformat cell id), or null.
CELL_JS = """(id) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const i = nb.widgets.findIndex(c => c.model.id === id);
  if (i < 0) return null;
  return {index: i, source: nb.widgets[i].model.sharedModel.getSource(),
          active: nb.activeCellIndex, count: nb.widgets.length};
}"""

#: Fallback: set the cell's source through the model (``arg``: {id, source}).
SET_SOURCE_JS = """(arg) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const cell = nb.widgets.find(c => c.model.id === arg.id);
  cell.model.sharedModel.setSource(arg.source);
  return cell.model.sharedModel.getSource();
}"""

#: The id of the active cell.
ACTIVE_JS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  return nb.activeCell ? nb.activeCell.model.id : null;
}"""

#: True when the check of exercise ``arg`` shows items and all of them passed; a string
#: when an output holds a traceback.
ALL_PASS_JS = """(ex) => {
  const errs = [...document.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .filter(e => /Traceback|Error\\b/.test(e.textContent));
  if (errs.length) return 'error: ' + errs[0].textContent.slice(0, 3000);
  const c = document.querySelector(`.jp-OutputArea .acl-lab-check[data-exercise="${ex}"]`);
  if (!c) return false;
  const items = [...c.querySelectorAll('.acl-lab-item')];
  return items.length > 0 && items.every(i => i.dataset.status === 'pass');
}"""


def check_cell(page: Page, exercise: str) -> Any:
    """The notebook cell whose output holds the check widget of ``exercise``."""
    widget = page.locator(f'.jp-OutputArea .acl-lab-check[data-exercise="{exercise}"]')
    return page.locator(".jp-Notebook .jp-Cell", has=widget).first


def replace_source(page: Page, cell_id: str, source: str, log: Log) -> str:
    """Replace cell ``cell_id``'s text in its editor; returns how ('editor' or 'model')."""
    info = page.evaluate(CELL_JS, cell_id)
    if info is None:
        raise RuntimeError(f"no cell with id {cell_id!r} in the notebook")
    editor = page.locator(".jp-Notebook .jp-Cell").nth(info["index"]).locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(source)
    page.wait_for_timeout(200)
    if page.evaluate(CELL_JS, cell_id)["source"] == source:
        return "editor"
    log("the editor did not take the text exactly; setting the cell model's source")
    if page.evaluate(SET_SOURCE_JS, {"id": cell_id, "source": source}) != source:
        raise RuntimeError("could not set the learner cell's source")
    return "model"


def run_cell_and_next(page: Page, cell_id: str, log: Log) -> None:
    """Shift+Enter on cell ``cell_id`` (now in edit mode) and on the cell after it."""
    info = page.evaluate(CELL_JS, cell_id)
    if info["active"] != info["index"]:
        page.locator(".jp-Notebook .jp-Cell").nth(info["index"]).locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(f"() => ({ACTIVE_JS})() !== {cell_id!r}")
    log(f"ran {cell_id}; active cell now {page.evaluate(ACTIVE_JS)}")
    page.keyboard.press("Shift+Enter")


def main() -> None:
    """Run the notebook, fix one learner cell, rerun its check; write what was seen."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", required=True, help="http://127.0.0.1:PORT")
    ap.add_argument("--token", required=True)
    ap.add_argument("--notebook", required=True, help="the notebook's path under the root")
    ap.add_argument("--exercise", required=True, help="the exercise id to fix, e.g. 04.1")
    ap.add_argument("--cell-id", required=True, help="nbformat id of its learner cell")
    ap.add_argument("--source-file", type=Path, required=True, help="the fixed cell's text")
    ap.add_argument("--checks", type=int, required=True, help="check widgets to wait for")
    ap.add_argument("--screenshots", type=Path, required=True, help="folder for the PNGs")
    ap.add_argument("--result", type=Path, required=True)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per wait")
    a = ap.parse_args()
    log = Log()
    shots = a.screenshots
    stem = f"exercise-lab-{a.exercise.replace('.', '_')}"
    source = a.source_file.read_text()
    result: dict[str, Any] = {"page_errors": [], "console_errors": [], "external_requests": [],
                              "screenshots": [], "step": "start"}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = watched_page(browser, a.base, result, height=1600, timeout_s=a.timeout)
            try:
                open_and_run_all(page, browser, a.base, a.token, a.notebook, result, log)
                status = page.wait_for_function(CHECKS_READY_JS, arg=a.checks).json_value()
                if status != "ok":
                    raise RuntimeError(f"the notebook raised in JupyterLab: {status}")
                result["before"] = page.evaluate(STATUSES_JS)
                log(f"checks rendered: {result['before']}")
                cell = check_cell(page, a.exercise)
                cell.scroll_into_view_if_needed()
                cell.screenshot(path=str(shots / f"{stem}-before.png"))
                result["screenshots"].append(str(shots / f"{stem}-before.png"))

                result["step"] = "edit"
                result["edited_with"] = replace_source(page, a.cell_id, source, log)
                result["cell_source"] = page.evaluate(CELL_JS, a.cell_id)["source"]
                log(f"learner cell replaced through the {result['edited_with']}")

                result["step"] = "rerun"
                run_cell_and_next(page, a.cell_id, log)
                status = page.wait_for_function(ALL_PASS_JS, arg=a.exercise).json_value()
                if status is not True:
                    raise RuntimeError(f"the fixed cell raised in JupyterLab: {status}")
                page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]')
                result["after"] = page.evaluate(STATUSES_JS)
                log(f"after the fix: {result['after'].get(a.exercise)}")
                cell = check_cell(page, a.exercise)
                cell.scroll_into_view_if_needed()
                page.wait_for_timeout(300)
                cell.screenshot(path=str(shots / f"{stem}-after.png"))
                result["screenshots"].append(str(shots / f"{stem}-after.png"))
                result["step"] = "done"
            except Exception as e:
                result["error"] = f"{type(e).__name__}: {e}"
                with contextlib.suppress(PlaywrightError):
                    page.screenshot(path=str(shots / f"{stem}-fail.png"))
                    result["screenshots"].append(str(shots / f"{stem}-fail.png"))
                raise
            finally:
                browser.close()
    finally:
        log(f"driver finished at step {result['step']!r}")
        write_result(a.result, result)


if __name__ == "__main__":
    main()
