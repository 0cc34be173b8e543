"""Issue 14's attacks on the grading, as real course notebooks run through ``acl-lab grade``
in its bubblewrap sandbox: every attack scores 0 on what it aimed at, its cause is on the
learner's feedback page, the instructor's CSV flags it, and the honest learners of the same
batch keep full points.

One grading run (module fixture, ``--jobs 2``) holds every case. Each attacker submits the
course's solution (or starter) notebook with one change, so only the attack can explain a lost
point, and each case says which exercises must score 0 (or at most the starter's points), the
text the feedback must show, and the CSV flag.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import re
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest

from acl_lab.grading import grade, limits, sandbox

from .submissions.builders import GradeRun, run_grade

REPO = Path(__file__).resolve().parents[2]
NB04, NB07, NB08 = ("04_buffer_pitfalls.ipynb", "07_deadlocks_races.ipynb",
                    "08_capstone.ipynb")
PARTS04 = ("04.1", "04.2", "04.3", "04.4")
PARTS07 = ("07.1", "07.2", "07.3")
TIMEOUT_S = 60
#: make test runs the grader tests one after another (the browser tests run beside them), so
#: two whole acl-lab grade runs never share the machine; the hang guard covers a module
#: fixture's grading run
pytestmark = pytest.mark.timeout(900)

needs_bwrap = pytest.mark.skipif(not sandbox.available()[0],
                                 reason="bubblewrap cannot run here (make test installs it)")

Edit = Callable[[nbformat.NotebookNode], None]


def _replace(cell_id: str, old: str, new: str) -> Edit:
    def edit(nb: nbformat.NotebookNode) -> None:
        (cell,) = [c for c in nb.cells if c.get("id") == cell_id]
        assert old in cell.source, (cell_id, old)
        cell.source = cell.source.replace(old, new)
    return edit


def _append(source: str) -> Edit:
    def edit(nb: nbformat.NotebookNode) -> None:
        nb.cells.append(nbformat.v4.new_code_cell(source))
    return edit


# ------------------------------------------------------------------------------ attacks
NUMPY_ANSWERS = """
from acl_lab.grading.exercises import ex04
def classify(model_path, image):
    return ex04.forward(image / np.float32(255.0))[0]
def classify_requests(model_path, requests):
    return [None if r.size != 784 else ex04.forward(r)[0] for r in requests]
def classify_in_threads(model_path, images, n_workers):
    return list(ex04.forward(images))
def classify_batch_async(model_path, images):
    return ex04.forward(images)
"""

#: The model runs (so the trace has device work), but the returned values are the host's,
#: sent to the device and copied back.
LAUNDERED = """
from acl_lab.grading.exercises import ex04
def classify(model_path, image):
    acl.init(); acl.rt.set_device(0)
    model_id, ret = acl.mdl.load_from_file(model_path)
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    size_in = acl.mdl.get_input_size_by_index(desc, 0)
    size_out = acl.mdl.get_output_size_by_index(desc, 0)
    dev_in, ret = acl.rt.malloc(size_in, 0)
    dev_out, ret = acl.rt.malloc(size_out, 0)
    acl.rt.memset(dev_in, size_in, 0, size_in)
    ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
    bufs = [acl.create_data_buffer(dev_in, size_in), acl.create_data_buffer(dev_out, size_out)]
    acl.mdl.add_dataset_buffer(ins, bufs[0]); acl.mdl.add_dataset_buffer(outs, bufs[1])
    acl.mdl.execute(model_id, ins, outs)         # device work on zeros, for the trace
    answer = ex04.forward(image / np.float32(255.0))[0].astype(np.float32)
    src = answer.tobytes()
    acl.rt.memcpy(dev_out, size_out, acl.util.bytes_to_ptr(src), len(src), 1)
    host, ret = acl.rt.malloc_host(size_out)
    acl.rt.memcpy(host, size_out, dev_out, size_out, 2)
    out = np.frombuffer(acl.util.ptr_to_bytes(host, size_out), dtype=np.float32).copy()
    for b in bufs:
        acl.destroy_data_buffer(b)
    acl.mdl.destroy_dataset(ins); acl.mdl.destroy_dataset(outs)
    acl.rt.free(dev_in); acl.rt.free(dev_out); acl.rt.free_host(host)
    acl.mdl.destroy_desc(desc); acl.mdl.unload(model_id)
    acl.rt.reset_device(0); acl.finalize()
    return out
"""

RETURNS_NONE = """
def _none(*args):
    acl.init()
    acl.rt.set_device(0)
    acl.rt.reset_device(0)
    acl.finalize()
    return None
collect_with_callback = fan_out = scale_and_shift = _none
"""

#: Exercise 08: decode with Pillow directly and declare 1 ns of host work.
DECLARE_1NS = """
import io
from PIL import Image
def preprocess(jpeg, out=None):
    with Image.open(io.BytesIO(jpeg)) as im:
        small = np.asarray(im.convert("RGB").resize((SIZE, SIZE), Image.Resampling.BILINEAR),
                           dtype=np.uint8)
    x = (small.astype(np.float32) - MEAN) / STD
    if out is None:
        out = np.empty((1, 3, SIZE, SIZE), dtype=np.float32)
    out[...] = x.transpose(2, 0, 1)[None]
    acl_lab.host_work(1, "decode + preprocess")
    return out
"""

APPEND_RUBRIC = """
import acl_lab.grading.rubric as _r
try:
    with open(_r.__file__, "a") as fh:
        fh.write("\\nimport acl_lab.grading.report as _p; _p.grade_run = None\\n")
except OSError as e:
    print("blocked:", e)
"""

OVERWRITE_NOTEBOOK_PY = """
import acl_lab.grading.notebook as _n
try:
    with open(_n.__file__, "w") as fh:
        fh.write("def learner_namespace(*a, **k):\\n    return {}\\n")
except OSError as e:
    print("blocked:", e)
"""

OVERWRITE_COURSE = """
import os, shutil
root = os.path.join(os.path.dirname(acl_lab.__file__), os.pardir)
for folder in ("solutions", "exercises"):
    try:
        shutil.rmtree(os.path.join(root, folder))
    except OSError as e:
        print("blocked:", e)
"""

#: Solutions through a shell (the audit hook cannot see inside ``sh``): run the learner
#: cells of the solution notebook if it could be read.
SHELL_SOLUTIONS = """
import json, os, subprocess
root = os.path.join(os.path.dirname(acl_lab.__file__), os.pardir)
text = subprocess.run(["sh", "-c", 'cat "$0"/sol""utions/04_buffer_pitfalls.ipynb', root],
                      capture_output=True, text=True).stdout
for cell in json.loads(text)["cells"]:
    if "learner" in cell["metadata"].get("tags", []):
        exec("".join(cell["source"]))
"""

CTYPES_SOLUTIONS = """
import ctypes, json, os
libc = ctypes.CDLL(None)
path = os.path.join(os.path.dirname(acl_lab.__file__), os.pardir, "sol" "utions",
                    "04_buffer_pitfalls.ipynb").encode()
fd = libc.open(path, 0)
if fd < 0:
    raise OSError("libc open failed: the solutions are not there")
buf = ctypes.create_string_buffer(1 << 20)
n = libc.read(fd, buf, len(buf))
for cell in json.loads(buf.raw[:n])["cells"]:
    if "learner" in cell["metadata"].get("tags", []):
        exec("".join(cell["source"]))
"""

#: Solutions from the repository's history (the README installs the grader from a clone).
GIT_SOLUTIONS = """
import json, os, subprocess
root = os.path.join(os.path.dirname(acl_lab.__file__), os.pardir)
text = subprocess.run(["git", "-C", root, "show", "HEAD:sol" "utions/04_buffer_pitfalls.ipynb"],
                      capture_output=True, text=True).stdout
for cell in json.loads(text)["cells"]:
    if "learner" in cell["metadata"].get("tags", []):
        exec("".join(cell["source"]))
"""

#: Another learner's notebook through /proc (every process's cwd), /tmp, and the work
#: folders beside this one under the grader's TMPDIR (the batch runs with TMPDIR outside
#: /tmp and two notebooks at a time).
OTHER_LEARNER = """
import glob, json, os
import acl_lab
mine = os.path.realpath(os.getcwd())
# the course's own starters are everyone's (the package is visible read-only, also from a
# clone under /tmp): another learner's work is anything else
course = os.path.dirname(os.path.dirname(os.path.realpath(acl_lab.__file__))) + os.sep
found = []
for link in glob.glob("/proc/[0-9]*/cwd"):
    try:
        where = os.path.realpath(link)
    except OSError:
        continue
    if where != mine:
        found += glob.glob(os.path.join(where, "*.ipynb"))
found += [p for p in glob.glob("/tmp/**/*.ipynb", recursive=True)
          + glob.glob(os.path.join(os.path.dirname(os.path.dirname(mine)), "*", "*", "*.ipynb"))
          if os.path.dirname(os.path.realpath(p)) != mine
          and not os.path.realpath(p).startswith(course)]
if not found:
    raise LookupError("no other learner's notebook is reachable")
for cell in json.load(open(found[0]))["cells"]:
    if "learner" in cell["metadata"].get("tags", []):
        exec("".join(cell["source"]))
"""

#: A detached grandchild that keeps the worker's stdout open and, later, rewrites the CSV.
DAEMON = """
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", '''
import os, sys, time
time.sleep(3)
for path in sys.argv[1:]:
    try:
        with open(path, "a") as fh:
            fh.write("daemon,04.1,correct,2,2,true,rewritten,\\\\n")
    except OSError:
        pass
time.sleep(600)
''', {csv!r}, {marker!r}], start_new_session=True, stdout=sys.stdout, stderr=sys.stderr)
"""

#: The grader's environment: whatever it holds reaches the feedback page if the cell sees it.
HOST_ENV = """
import os
raise LookupError(f"environment seen: {dict(os.environ)}")
"""

#: A UNIX socket of the host (an ssh agent, docker.sock) outside /tmp.
HOST_SOCKET = """
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({path!r})
    got = s.recv(16)
except OSError as e:
    raise LookupError(f"host socket unreachable: {{e}}") from None
raise LookupError(f"host socket answered {{got!r}}")
"""

#: Files in the private /tmp and /dev/shm are memory of the machine: fill both (64 MiB files,
#: under the per-file limit) up to 3 GiB each.
TMPFS_FILL = """
import os
sizes = {}
for folder in ("/tmp", "/dev/shm"):
    n = 0
    try:
        while n < (3 << 30):
            with open(os.path.join(folder, f"fill{n >> 26}"), "wb") as fh:
                fh.write(b"\\0" * (64 << 20))
            n += 64 << 20
    except OSError:
        pass
    sizes[folder] = n >> 20
raise LookupError(f"tmpfs filled: /tmp {sizes['/tmp']} MiB, /dev/shm {sizes['/dev/shm']} MiB")
"""

#: Processes beyond any reason (each a process of the machine).
MANY_PROCESSES = """
import subprocess
procs = []
try:
    for _ in range(300):
        procs.append(subprocess.Popen(["sleep", "30"]))
except OSError:
    pass
for p in procs:
    p.kill()
    p.wait()
raise LookupError(f"started {len(procs)} processes")
"""

WRAP_JSON = """
import json
_real_dumps = json.dumps
def _dumps(obj, *args, **kwargs):
    return _real_dumps(obj, *args, **kwargs)
json.dumps = _dumps
"""

PATCH_PROVENANCE = """
import acl_lab.grading.provenance as _prov
_prov.from_device = lambda run, value=None, **kw: (True, "trust me")
"""

POISON_CACHE = """
from acl_lab import zoo
try:
    with open(zoo.path("lenet5"), "r+b") as fh:
        fh.write(b"\\0" * 16)
except OSError as e:
    print("blocked:", e)
"""

#: learner -> (base folder, notebook, edits, {exercise: text the feedback shows}, flag,
#: whether the exercises may keep the starter's points instead of 0)
Case = tuple[str, str, list[Edit], dict[str, str], str, bool]


def _cases(out: Path, marker: Path, socket_path: Path) -> dict[str, Case]:
    free_twice = _replace("part2-learner", """        if ret != 0:
            return None                 # a malformed request""", """        if ret != 0:
            acl.rt.free(in_dev)
            return None                 # a malformed request""")
    no_free_host = _replace("part4-learner", "    acl.rt.free_host(host_out)\n", "")
    half_copy = _replace("part1-learner", "acl.util.bytes_to_ptr(src), len(src),",
                         "acl.util.bytes_to_ptr(src), len(src) // 2,")
    violation = "submission tried to change the grader's files"
    all04 = dict.fromkeys(PARTS04, violation)
    return {
        "double_free": ("solutions", NB04, [free_twice], {"04.2": "double_free"}, "", False),
        "forgot_free_host": ("solutions", NB04, [no_free_host],
                             {"04.4": "host pinned allocation"}, "", False),
        "uninitialised_input": ("solutions", NB04, [half_copy],
                                {"04.1": "uninitialized_read"}, "", False),
        "numpy_answers": ("solutions", NB04, [_append(NUMPY_ANSWERS)],
                          dict.fromkeys(PARTS04, "no ACL call in the trace"), "no-acl", False),
        "laundered_answer": ("solutions", NB04, [_append(LAUNDERED)],
                             {"04.1:correct": "your code filled from the host"}, "not-from-device",
                             False),
        "returns_none": ("solutions", NB07, [_append(RETURNS_NONE)],
                         dict.fromkeys(PARTS07, "returned None"), "", False),
        "declares_1ns": ("solutions", NB08, [_append(DECLARE_1NS)],
                         {"08:latency": "does not count: it is a number your code chose"},
                         "declared-host-work", False),
        "append_rubric": ("solutions", NB04, [_append(APPEND_RUBRIC)], all04, "integrity",
                          False),
        "overwrite_notebook_py": ("solutions", NB04, [_append(OVERWRITE_NOTEBOOK_PY)], all04,
                                  "integrity", False),
        "overwrite_course": ("solutions", NB04, [_append(OVERWRITE_COURSE)], all04,
                             "integrity", False),
        "shell_solutions": ("exercises", NB04, [_append(SHELL_SOLUTIONS)],
                            dict.fromkeys(PARTS04, ""), "", True),
        "ctypes_solutions": ("exercises", NB04, [_append(CTYPES_SOLUTIONS)],
                             dict.fromkeys(PARTS04, ""), "", True),
        "other_learner": ("exercises", NB04, [_append(OTHER_LEARNER)],
                          dict.fromkeys(PARTS04, ""), "", True),
        "git_solutions": ("exercises", NB04, [_append(GIT_SOLUTIONS)],
                          dict.fromkeys(PARTS04, ""), "", True),
        "host_env": ("exercises", NB04, [_append(HOST_ENV)], {}, "", False),
        "host_socket": ("exercises", NB04, [_append(HOST_SOCKET.format(path=str(socket_path)))],
                        {}, "", False),
        "tmpfs_fill": ("exercises", NB04, [_append(TMPFS_FILL)], {}, "", False),
        "many_processes": ("exercises", NB04, [_append(MANY_PROCESSES)], {}, "", False),
        "daemon": ("exercises", NB04, [_append(DAEMON.format(
            csv=str(out / "grades.csv"), marker=str(marker)))],
            dict.fromkeys(PARTS04, ""), "", True),
        "wrap_json": ("solutions", NB04, [_append(WRAP_JSON)],
                      dict.fromkeys(PARTS04, "submission modified the grader's tools: "
                                             "json.dumps"), "integrity", False),
        "patch_provenance": ("solutions", NB04, [_append(PATCH_PROVENANCE)],
                             dict.fromkeys(PARTS04, "acl_lab.grading.provenance.from_device"),
                             "integrity", False),
        "poison_cache": ("solutions", NB04, [_append(POISON_CACHE)], all04, "integrity",
                         False),
    }


def _protected_digest() -> str:
    """A digest of the files the attacks try to change."""
    h = hashlib.sha256()
    for folder in ("acl_lab/grading", "solutions", "exercises"):
        for p in sorted((REPO / folder).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(p.relative_to(REPO).as_posix().encode())
                h.update(p.read_bytes())
    return h.hexdigest()


#: A secret of the grader's environment (a token) that no submission may see.
TOKEN = "grader-token-" + secrets.token_hex(8)


@contextlib.contextmanager
def _host_socket() -> Iterator[Path]:
    """A UNIX socket of the host outside /tmp that answers every connection."""
    folder = Path(tempfile.mkdtemp(prefix="acl-lab-attack-socket-", dir="/var/tmp"))
    path = folder / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(8)
    server.settimeout(0.5)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"agent here")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(60)
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        tuple[GradeRun, dict[str, Case], Path, str, str]]:
    """Every attack plus honest learners of notebooks 04, 07 and 08, in one grade run with
    the grader's TMPDIR outside /tmp (so each notebook's work folder is beside the others'
    on the host), two notebooks at a time, a token in its environment and a host socket."""
    root = tmp_path_factory.mktemp("attacks")
    subs, out, marker = root / "submitted", root / "out", root / "daemon-was-here"
    with _host_socket() as socket_path, \
            tempfile.TemporaryDirectory(prefix="acl-lab-attacks-", dir="/var/tmp") as tmpdir:
        yield _attack(subs, out, marker, socket_path, tmpdir)


def _attack(subs: Path, out: Path, marker: Path, socket_path: Path, tmpdir: str
            ) -> tuple[GradeRun, dict[str, Case], Path, str, str]:
    cases = _cases(out, marker, socket_path)
    for learner, name in (("honest04", NB04), ("honest07", NB07), ("honest08", NB08),
                          ("starter04", NB04), ("zz_honest04", NB04)):
        dest = subs / learner / name
        dest.parent.mkdir(parents=True)
        shutil.copyfile(REPO / ("exercises" if learner == "starter04" else "solutions") / name,
                        dest)
    for learner, (folder, name, edits, _, _, _) in cases.items():
        nb = nbformat.read(REPO / folder / name, as_version=4)
        for edit in edits:
            edit(nb)
        dest = subs / learner / name
        dest.parent.mkdir(parents=True)
        nbformat.write(nb, dest)
    before = _protected_digest()
    graded = run_grade(subs, out, "--timeout", str(TIMEOUT_S), "--jobs", "2", "--no-figures",
                       timeout=1800, extra_env={"TMPDIR": tmpdir, "GRADER_API_TOKEN": TOKEN})
    time.sleep(5)  # a daemon that outlived the sandbox would have written by now
    return graded, cases, marker, before, _protected_digest()


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@needs_bwrap
def test_grading_completes_and_the_repository_is_untouched(attacked: tuple) -> None:
    """The run ends normally and no attack changed the grader, the solutions or the
    exercises."""
    graded, _, marker, before, after = attacked
    assert graded.proc.returncode == 0, graded.proc.stderr[-3000:]
    assert before == after
    assert not marker.exists()
    assert "rewritten" not in (graded.out / "grades.csv").read_text(encoding="utf-8")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@needs_bwrap
@pytest.mark.parametrize("learner", ["honest04", "honest07", "honest08", "zz_honest04"])
def test_honest_learners_keep_full_points(attacked: tuple, learner: str) -> None:
    """The honest learners graded beside the attackers (one after all of them) get every
    point."""
    graded = attacked[0]
    parts = {"honest04": PARTS04, "honest07": PARTS07, "honest08": ("08",),
             "zz_honest04": PARTS04}[learner]
    rows = [r for r in graded.learner_rows(learner) if r["exercise"] in parts]
    assert {r["exercise"] for r in rows} == set(parts)
    assert all(r["points"] == r["max_points"] and not r["flag"] for r in rows), [
        (r["exercise"], r["item"], r["reason"]) for r in rows if r["passed"] != "true"]


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@needs_bwrap
def test_every_attack_scores_zero_with_its_cause(attacked: tuple) -> None:
    """Each attack: 0 on the exercises it aimed at (at most the starter's points where it
    only tried to take someone else's work), the cause on its page, the flag in the CSV."""
    graded, cases, _, _, _ = attacked
    starter = {ex: graded.points("starter04", ex)[0] for ex in PARTS04}
    problems = []
    for learner, (_, _, _, targets, flag, starter_ok) in cases.items():
        page = graded.html(learner)
        for target, text in targets.items():
            ex, _, item = target.partition(":")
            rows = [r for r in graded.learner_rows(learner, ex) if item in ("", r["item"])]
            got = sum(int(r["points"]) for r in rows)
            total = sum(int(r["max_points"]) for r in rows)
            limit = starter.get(ex, 0) if starter_ok else 0
            if total == 0 or got > limit:
                problems.append(f"{learner} {ex}: {got}/{total} points (limit {limit})")
            if text and html.escape(text) not in page:
                problems.append(f"{learner} {ex}: feedback lacks {text!r}")
            flags = {r["flag"] for r in graded.learner_rows(learner, ex)}
            if flag and flags != {flag}:
                problems.append(f"{learner} {ex}: CSV flags {flags}, expected {flag!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@needs_bwrap
def test_attacks_that_take_others_work_see_nothing(attacked: tuple) -> None:
    """Inside the sandbox the solutions and other learners' notebooks are not there: the
    cells that looked for them raised, and the page says so."""
    graded = attacked[0]
    assert "libc open failed" in graded.html("ctypes_solutions")
    assert "JSONDecodeError" in graded.html("shell_solutions")
    assert "no other learner&#x27;s notebook is reachable" in graded.html("other_learner")
    assert "JSONDecodeError" in graded.html("git_solutions")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@needs_bwrap
def test_the_host_stays_outside(attacked: tuple) -> None:
    """The grader's environment (a token) reaches no submission, no page and no CSV; a host
    socket outside /tmp is not there; /tmp and /dev/shm hold a bounded size; the processes
    of a sandbox are bounded; the page lists the limits that held."""
    graded = attacked[0]
    pages = {p.stem: p.read_text(encoding="utf-8") for p in graded.out.glob("*.html")}
    assert "environment seen:" in pages["host_env"]
    assert not [who for who, page in pages.items() if TOKEN in page]
    assert TOKEN not in (graded.out / "grades.csv").read_text(encoding="utf-8")
    assert "host socket unreachable" in pages["host_socket"]
    assert "host socket answered" not in pages["host_socket"]
    filled = re.search(r"tmpfs filled: /tmp (\d+) MiB, /dev/shm (\d+) MiB",
                       pages["tmpfs_fill"])
    assert filled is not None, "the fill cell did not report"
    cap = sandbox.tmpfs_mb(grade.DEFAULT_MEMORY_MB)
    assert all(0 < int(n) <= cap for n in filled.groups()), filled.groups()
    started = re.search(r"started (\d+) processes", pages["many_processes"])
    assert started is not None
    if f"at most {limits.MAX_TASKS} processes and threads" in pages["many_processes"]:
        assert int(started.group(1)) < limits.MAX_TASKS  # the control group held
    else:  # a machine without control groups: the page says the count was not limited
        assert "processes: not limited (no control group here)" in pages["many_processes"]
    # the bounded processes did not cost the notebook its grading (a starter with the cell
    # scores what the starter scores)
    assert graded.points("many_processes") == graded.points("starter04")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@needs_bwrap
def test_no_submission_delays_the_batch(attacked: tuple) -> None:
    """The daemon's notebook ends with its own process: it is graded (not timed out)."""
    graded = attacked[0]
    assert "time limit" not in " ".join(r["reason"] for r in graded.learner_rows("daemon"))


def test_without_bubblewrap_grade_refuses_in_one_line_unless_told(tmp_path: Path) -> None:
    """No bwrap on PATH: one line and exit 2; with --no-sandbox the grading runs and every
    feedback page carries the warning."""
    from .submissions.builders import honest_cells, write_notebook

    write_notebook(tmp_path / "subs" / "solver" / "demo.ipynb", honest_cells())
    no_bwrap = {"PATH": str(Path(sys.executable).parent)}
    refused = run_grade(tmp_path / "subs", tmp_path / "out", extra_env=no_bwrap)
    assert refused.proc.returncode == 2
    lines = refused.proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bubblewrap (bwrap) is not installed" in lines[0]
    assert "--no-sandbox" in lines[0] and not (tmp_path / "out" / "grades.csv").exists()
    graded = run_grade(tmp_path / "subs", tmp_path / "out", "--no-sandbox", "--no-figures",
                       extra_env=no_bwrap)
    assert graded.proc.returncode == 0, graded.proc.stderr
    assert graded.points("solver") == (5, 5)
    assert "acl-lab-unsandboxed" in graded.html("solver")
    assert "graded without the sandbox" in graded.html("solver")
