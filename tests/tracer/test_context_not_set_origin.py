"""context_not_set names the context the other thread really had, even when the last call made
there was the create_context or set_context that made it current (``calls.ctx`` is the context
a call was entered with, so it still shows the previous one)."""

from __future__ import annotations

from pathlib import Path

from tests.tracer.test_pitfall_findings import line_of, only, run_program

WORKER = """
results = {}


def worker():
    dev, ret = acl.rt.malloc(1024, ACL_MEM_MALLOC_NORMAL_ONLY)  # <- malloc
    results["ret"] = ret


assert acl.init() == 0
assert acl.rt.set_device(0) == 0
SETUP
t = threading.Thread(target=worker, name="worker-0")
t.start()
t.join()
TEARDOWN
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
"""


def _program(setup: str, teardown: str) -> str:
    return WORKER.replace("SETUP", setup).replace("TEARDOWN", teardown)


def test_context_created_just_before_the_threads_start_is_named(tmp_path: Path) -> None:
    """create_context is the main thread's last call before the worker fails: the finding
    names that context's create_context line, not the default context of set_device."""
    run = run_program(tmp_path, _program("ctx, ret = acl.rt.create_context(0)",
                                         "assert acl.rt.destroy_context(ctx) == 0"))
    assert run.env["results"] == {"ret": 107002}
    f = only(run, "malloc", "context_not_set")
    create = line_of(run, "acl.rt.create_context(0)")
    assert f"ctx was created at {run.path}:{create} in thread 0 (MainThread)" in f.message
    assert "default context" not in f.message


def test_context_set_just_before_the_threads_start_is_named(tmp_path: Path) -> None:
    """set_context(ctx_a) is the main thread's last call: the finding names ctx_a's line."""
    run = run_program(tmp_path, _program(
        "ctx_a, ret = acl.rt.create_context(0)\n"
        "ctx_b, ret = acl.rt.create_context(0)\n"
        "assert acl.rt.set_context(ctx_a) == 0",
        "assert acl.rt.destroy_context(ctx_b) == 0\n"
        "assert acl.rt.destroy_context(ctx_a) == 0"))
    f = only(run, "malloc", "context_not_set")
    create_a = line_of(run, "ctx_a, ret = acl.rt.create_context(0)")
    assert f"ctx was created at {run.path}:{create_a} in thread 0" in f.message
