"""The package as users install it (issue 16): a numpy-only core, extras that name
themselves when missing, the course inside, and the small CLI items.

A missing optional module is simulated in a subprocess by a meta-path finder that refuses
to import it (nothing is uninstalled). Building the wheel and the sdist is in
``tests/e2e/test_packaging.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import acl_lab
from acl_lab import course
from acl_lab._extras import EXTRA_OF, MissingExtra, require

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: pip's vendored TOML reader
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
#: Distribution that provides each optional top-level module.
DISTRIBUTION = {"plotly": "plotly", "onnx": "onnx", "PIL": "pillow", "av": "av",
                "ipywidgets": "ipywidgets", "anywidget": "anywidget"}

#: Prepended to subprocess code: refuse to import the modules named in $ACL_LAB_BLOCK.
BLOCKER = textwrap.dedent("""
    import os, sys
    _BLOCKED = set(os.environ["ACL_LAB_BLOCK"].split(","))
    class _Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in _BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _Blocker())
    for _m in [m for m in sys.modules if m.split(".")[0] in _BLOCKED]:
        del sys.modules[_m]
""")


def blocked(code: str, block: str, *args: str, cwd: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where the modules in ``block`` cannot be imported."""
    env = dict(os.environ, ACL_LAB_BLOCK=block)
    return subprocess.run([sys.executable, "-c", BLOCKER + textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def acl_lab_cli(block: str, *args: str, cwd: Path | None = None
                ) -> subprocess.CompletedProcess[str]:
    """``acl-lab ARGS`` with ``block`` unimportable."""
    return blocked("import sys\nfrom acl_lab.cli import main\nsys.exit(main(sys.argv[1:]))",
                   block, *args, cwd=cwd)


def names(reqs: list[str]) -> set[str]:
    """Normalised distribution names of requirement strings."""
    return {Requirement(r).name.lower().replace("_", "-") for r in reqs}


def expand(extra: str) -> set[str]:
    """Distribution names an extra brings, following ``acl_lab[...]`` self-references."""
    out: set[str] = set()
    for req in map(Requirement, EXTRAS[extra]):
        if req.name.lower().replace("_", "-") == "acl-lab":
            for inner in req.extras:
                out |= expand(inner)
        else:
            out.add(req.name.lower())
    return out


# ----------------------------------------------------------------------------- metadata
def test_core_depends_on_numpy_only() -> None:
    """Running programs and exporting traces need numpy alone."""
    assert names(PROJECT["dependencies"]) == {"numpy"}


def test_extras_bring_each_feature() -> None:
    """views, atc, media, lab and test hold what their features import."""
    assert names(EXTRAS["views"]) == {"plotly"}
    assert names(EXTRAS["atc"]) == {"onnx"}
    assert {"pillow", "av"} <= names(EXTRAS["media"])
    assert {"plotly", "onnx", "pillow", "jupyterlab", "ipywidgets", "anywidget"} <= \
        expand("lab")
    assert expand("lab") <= expand("test")
    assert {"pytest", "pytest-timeout", "hypothesis"} <= expand("test")


def test_every_optional_module_is_in_the_extra_it_names() -> None:
    """The extra a MissingExtra message names really installs that module."""
    for module, extra in EXTRA_OF.items():
        assert DISTRIBUTION[module] in expand(extra), (module, extra)


def test_installed_metadata_matches_pyproject() -> None:
    """The environment the tests run in installed this pyproject (version and core deps)."""
    assert metadata.version("acl_lab") == PROJECT["version"] == acl_lab.__version__
    core = [r for r in metadata.requires("acl_lab") or [] if "extra ==" not in r]
    assert names(core) == {"numpy"}


def test_project_metadata() -> None:
    """License, classifiers and the typed marker."""
    assert PROJECT["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert (Path(acl_lab.__file__).parent / "py.typed").is_file()


# ----------------------------------------------------------------------------- import guards
def test_require_names_the_extra() -> None:
    """require() of a missing module raises MissingExtra: an ImportError with one line."""
    with pytest.raises(MissingExtra) as info:
        require("acl_lab_no_such_module_xyz", "views", "the thing")
    msg = str(info.value)
    assert isinstance(info.value, ImportError) and "\n" not in msg
    assert msg == ("the thing: acl_lab_no_such_module_xyz is not installed "
                   "(pip install 'acl_lab[views]')")


def test_require_keeps_errors_from_inside_an_installed_module(tmp_path: Path) -> None:
    """A module that exists but fails on one of *its* imports is a real error, not an extra."""
    (tmp_path / "acl_lab_broken_mod.py").write_text("import acl_lab_missing_inner_xyz\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ModuleNotFoundError) as info:
            require("acl_lab_broken_mod", "views", "x")
        assert not isinstance(info.value, MissingExtra)
        assert info.value.name == "acl_lab_missing_inner_xyz"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("acl_lab_broken_mod", None)


@pytest.fixture(scope="module")
def saved_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small saved trace (made with plotly blocked: recording needs numpy only)."""
    out = tmp_path_factory.mktemp("pkg") / "run.acltrace"
    res = blocked("""
        import sys, acl_lab
        from acl_lab import Session
        with Session() as s:
            acl = acl_lab.install()
            assert acl.init() == 0 and acl.rt.set_device(0) == 0
            p, ret = acl.rt.malloc(64, 0)
            assert ret == 0 and acl.rt.free(p) == 0
            trace = s.finish()
        trace.save(sys.argv[1])
        trace.save_chrome_trace(sys.argv[1] + ".json")
        print(any(m.split(".")[0] in ("plotly", "onnx", "PIL", "ipywidgets")
                  for m in sys.modules))
    """, "plotly,onnx,PIL,av,ipywidgets,anywidget,IPython", str(out))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "False"
    json.loads(Path(str(out) + ".json").read_text())
    return out


def test_core_runs_records_and_exports_without_extras(saved_trace: Path, tmp_path: Path
                                                      ) -> None:
    """acl-lab run and export work with every optional module missing."""
    prog = tmp_path / "prog.py"
    prog.write_text("import acl\nassert acl.init() == 0\nassert acl.finalize() == 0\n")
    res = acl_lab_cli("plotly,onnx,PIL,av,ipywidgets,anywidget", "run", "--quiet", "--trace",
                      str(tmp_path / "p.acltrace"), str(prog), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = acl_lab_cli("plotly,onnx,PIL,av,ipywidgets,anywidget", "export", str(saved_trace),
                      "--chrome", str(tmp_path / "c.json"))
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "c.json").read_text())


def test_report_without_plotly_is_one_line(saved_trace: Path, tmp_path: Path) -> None:
    """acl-lab report without plotly: exit 2 and one line naming the views extra."""
    out = tmp_path / "r.html"
    res = acl_lab_cli("plotly", "report", str(saved_trace), "-o", str(out))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "pip install 'acl_lab[views]'" in lines[0] and "plotly" in lines[0]
    assert "Traceback" not in res.stderr and not out.exists()


def test_run_report_without_plotly_keeps_the_exit_code(tmp_path: Path) -> None:
    """run --report without plotly: the program's exit code stands, the report is one line."""
    prog = tmp_path / "prog.py"
    prog.write_text("import sys, acl\nassert acl.init() == 0\nacl.finalize()\nsys.exit(3)\n")
    res = acl_lab_cli("plotly", "run", "--quiet", "--report", str(tmp_path / "r.html"),
                      str(prog), cwd=tmp_path)
    assert res.returncode == 3, res.stderr
    assert "pip install 'acl_lab[views]'" in res.stderr and "Traceback" not in res.stderr


def test_views_without_plotly_name_the_extra() -> None:
    """Importing the views, or acl_lab.timeline, raises MissingExtra naming views."""
    res = blocked("""
        import acl_lab
        from acl_lab._extras import MissingExtra
        for get in (lambda: __import__("acl_lab.tracer.views"), lambda: acl_lab.timeline):
            try:
                get()
            except MissingExtra as e:
                print(e.extra, e.module)
    """, "plotly")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["views", "plotly", "views", "plotly"]


@pytest.mark.parametrize("missing", ["ipywidgets", "anywidget"])
def test_explore_without_widgets_names_the_lab_extra(missing: str) -> None:
    """acl_lab.explore without ipywidgets or anywidget names the lab extra."""
    res = blocked("""
        import acl_lab
        from acl_lab._extras import MissingExtra
        try:
            acl_lab.explore
        except MissingExtra as e:
            print(e.extra, e.module)
    """, missing)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["lab", missing]


def test_atc_without_onnx_names_the_extra(tmp_path: Path) -> None:
    """acl-lab atc without onnx fails like ATC, its message naming the atc extra."""
    (tmp_path / "m.onnx").write_bytes(b"")
    res = acl_lab_cli("onnx", "atc", "--model=m.onnx", "--framework=5", "--output=m",
                      "--soc_version=Ascend310P3", cwd=tmp_path)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "pip install 'acl_lab[atc]'" in out and "Traceback" not in out
    assert not (tmp_path / "m.om").exists()


def test_pictures_without_pillow_name_the_media_extra() -> None:
    """The media ladder's JPEG helpers without Pillow name the media extra."""
    res = blocked("""
        from acl_lab import ladder
        from acl_lab._extras import MissingExtra
        try:
            ladder.decode_rgb(b"not a jpeg")
        except MissingExtra as e:
            print(e.extra, e.module)
    """, "PIL")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["media", "PIL"]


_JPEG_CALLS = {
    "JPEG decoding (DVPP JPEGD)": "acl.media.dvpp_jpeg_decode_async(desc, buf, 4096, out, "
                                  "stream)",
    "JPEG encoding (DVPP JPEGE)": "acl.media.dvpp_jpeg_encode_async(desc, out, buf, "
                                  "acl.util.numpy_to_ptr(size), "
                                  "acl.media.dvpp_create_jpege_config(), stream)",
}


@pytest.mark.parametrize("feature", sorted(_JPEG_CALLS))
def test_jpeg_call_without_pillow_fails_at_its_call(tmp_path: Path, feature: str) -> None:
    """A DVPP JPEG decode (or encode) without Pillow fails at the call that queues it,
    naming the media extra, before any task is queued (not later, inside the stream's
    task)."""
    prog = tmp_path / "jpeg.py"
    prog.write_text(textwrap.dedent("""\
        import acl, numpy
        acl.init(); acl.rt.set_device(0)
        ctx, _ = acl.rt.create_context(0)
        stream, _ = acl.rt.create_stream()
        desc = acl.media.dvpp_create_channel_desc()
        acl.media.dvpp_create_channel(desc)
        out = acl.media.dvpp_create_pic_desc()
        buf, _ = acl.media.dvpp_malloc(4096)
        size = numpy.array([4096], numpy.uint32)
        try:
            CALL
        except ImportError as e:
            print("refused:", e)
    """).replace("CALL", _JPEG_CALLS[feature]))
    res = acl_lab_cli("PIL", "run", "--quiet", "--trace", str(tmp_path / "t.acltrace"),
                      str(prog), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"refused: {feature}" in res.stdout
    assert "pip install 'acl_lab[media]'" in res.stdout
    from acl_lab.tracer.trace import Trace
    assert Trace.load(tmp_path / "t.acltrace").tasks.rows == 0


# ----------------------------------------------------------------------------- CLI items
@pytest.mark.parametrize("command", [["-m", "acl_lab"], ["-c", "from acl_lab.cli import main; "
                                                         "raise SystemExit(main())"]])
def test_version(command: list[str]) -> None:
    """acl-lab --version and python -m acl_lab --version print the installed version."""
    res = subprocess.run([sys.executable, *command, "--version"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"acl-lab {metadata.version('acl_lab')}"


def test_python_m_acl_lab_runs_subcommands(tmp_path: Path) -> None:
    """python -m acl_lab is the acl-lab command: a subcommand runs and keeps its exit code."""
    res = subprocess.run([sys.executable, "-m", "acl_lab", "course", str(tmp_path / "c")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "c" / "exercises").is_dir()
    res = subprocess.run([sys.executable, "-m", "acl_lab", "nonsense"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 2 and "invalid choice" in res.stderr


def _tree(top: Path) -> dict[str, bytes]:
    return {str(f.relative_to(top)): f.read_bytes() for f in sorted(top.rglob("*"))
            if f.is_file()}


def test_course_copies_notebooks_and_exercises(tmp_path: Path) -> None:
    """acl-lab course DIR copies notebooks/ and exercises/ (byte for byte), not solutions/."""
    from acl_lab.cli import main
    assert main(["course", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exercises", "notebooks"]
    for part in course.LEARNER_PARTS:
        assert _tree(tmp_path / part) == _tree(ROOT / part)
    assert len(list((tmp_path / "exercises").glob("*.ipynb"))) >= 5


def test_course_never_overwrites_without_force(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A second copy is refused (exit 1, one line, nothing written); --force overwrites."""
    from acl_lab.cli import main
    assert main(["course", str(tmp_path)]) == 0
    edited = tmp_path / "exercises" / "04_buffer_pitfalls.ipynb"
    edited.write_text("my work")
    (tmp_path / "notebooks" / "README.md").unlink()
    capsys.readouterr()
    assert main(["course", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--force" in err
    assert edited.read_text() == "my work"
    assert not (tmp_path / "notebooks" / "README.md").exists()  # all or nothing
    assert main(["course", str(tmp_path), "--force"]) == 0
    assert edited.read_bytes() == (ROOT / "exercises" / edited.name).read_bytes()


def test_course_solutions_only_with_the_flag(tmp_path: Path) -> None:
    """--solutions adds solutions/ for instructors."""
    from acl_lab.cli import main
    assert main(["course", str(tmp_path), "--solutions"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exercises", "notebooks", "solutions"]
    assert _tree(tmp_path / "solutions") == _tree(ROOT / "solutions")


def test_course_skips_hidden_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints and other hidden files of a checkout are not copied."""
    fake = tmp_path / "src"
    for part in course.PARTS:
        (fake / part / ".ipynb_checkpoints").mkdir(parents=True)
        (fake / part / "a.ipynb").write_text("{}")
        (fake / part / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    monkeypatch.setattr(course, "SHIPPED", fake)
    assert course.course_root() == fake
    written = course.copy_course(tmp_path / "out", solutions=True)
    assert sorted(str(w.relative_to(tmp_path / "out")) for w in written) == \
        ["exercises/a.ipynb", "notebooks/a.ipynb", "solutions/a.ipynb"]


def test_course_without_course_files_says_so(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An installation without the course fails with one line, not a traceback."""
    monkeypatch.setattr(course, "SHIPPED", tmp_path / "none")
    monkeypatch.setattr(course, "CHECKOUT", tmp_path / "none")
    assert course.course_root() is None
    with pytest.raises(FileNotFoundError):
        course.copy_course(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_grade_release_defaults_to_the_course_exercises() -> None:
    """grade --release defaults to the exercises that ship with the package."""
    from acl_lab.grading.grade import default_release_dir
    release = default_release_dir()
    assert release == course.course_dir("exercises") and release.is_dir()
    assert {p.name for p in release.glob("*.ipynb")} == \
        {p.name for p in (ROOT / "exercises").glob("*.ipynb")}


def test_shipped_solutions_are_protected_from_graded_notebooks() -> None:
    """The grader guards the solutions a wheel ships, not only a checkout's."""
    from acl_lab.grading.worker import solution_dirs
    dirs = solution_dirs()
    assert os.path.realpath(course.SHIPPED / "solutions") in dirs
    assert os.path.realpath(ROOT / "solutions") in dirs
