"""What the grader says of a sandbox killed for memory, and a deadlock rebuilt from the pipe's
plain values, whatever the other side sent."""

from __future__ import annotations

import pickle

from acl_lab import DeadlockError
from acl_lab.grading import grade
from acl_lab.runtime.errors import WaitEdge


def test_an_out_of_memory_kill_is_named_as_the_sandboxs_memory_limit() -> None:
    """The kernel killed a process of the sandbox's group for memory: the reason says the
    whole sandbox's limit, not a signal 'perhaps for lack of memory'."""
    opts = grade.GradeOptions(memory_mb=512)
    why = grade._death_reason(-9, False, "", opts, "before exercise 04.1 finished",
                              out_of_memory=True)
    assert why.startswith("memory limit of 512 MiB exceeded before exercise 04.1 finished")
    assert "heap, files in /tmp and /dev/shm and child processes together" in why
    plain = grade._death_reason(-9, False, "", opts, "before exercise 04.1 finished")
    assert "killed by signal SIGKILL" in plain and "512 MiB" not in plain


def test_a_deadlock_crosses_as_plain_values_and_back_whole() -> None:
    """to_wire/from_wire and pickling keep every field; fields of the wrong type from the
    other side are left out, never raised on."""
    err = DeadlockError("thread 1 waits forever", [WaitEdge("thread 1", "stream 2", "why",
                                                             "prog.py", 7)],
                        "stacks", "thread 1", "prog.py", 7, quiet=True)
    back = DeadlockError.from_wire(err.to_wire())
    assert (back.report, back.edges, back.quiet) == (err.report, err.edges, True)
    assert pickle.loads(pickle.dumps(err)).report == err.report
    odd = DeadlockError.from_wire(["s", "yes", [["a", "b"], 5, ["w", "t", 3, None, "x"]],
                                   None, 9, [], "line"])
    assert odd.summary == "s" and not odd.quiet and odd.line == 0
    assert odd.edges == [WaitEdge("w", "t", "", "", 0)]
    assert DeadlockError.from_wire(None).summary == ""
