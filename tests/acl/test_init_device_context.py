"""pyACL surface: return shapes, argument parsing, init/finalize, devices, contexts, the trace.

Facts come from docs/sources.md sections 1, 2.1-2.3, 5(c), 5(e), 8 and 9.1.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_DDR_MEM,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session

HERE = Path(__file__).resolve()


def free_bytes(acl: ModuleType) -> int:
    """Free device memory of the current device (DDR on the default Ascend310P3 profile)."""
    free, total, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
    assert ret == ACL_SUCCESS
    assert 0 <= free <= total
    return free


def next_line() -> int:
    """The line number just after the caller's line (the call a test is about to make)."""
    return sys._getframe(1).f_lineno + 1


def in_new_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a fresh threading.Thread (no ACL context) and return its result."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def body() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    t = threading.Thread(target=body)
    t.start()
    t.join(60)
    assert not t.is_alive()
    if errors:
        raise errors[0]
    return box[0]


# ----------------------------------------------------------------------------- return shapes


def test_get_version_is_header_version_then_ret(acl: ModuleType) -> None:
    """acl.get_version() returns (major, minor, patch, ret) = (1, 17, 0, 0)."""
    assert acl.get_version() == (1, 17, 0, 0)


def test_output_first_ret_last(ready: ModuleType) -> None:
    """Calls with one output return (value, ret) with the value first and ret last."""
    ptr, ret = ready.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS and ptr != 0
    stream, ret = ready.rt.create_stream()
    assert ret == ACL_SUCCESS and stream != 0
    dev, ret = ready.rt.get_device()
    assert (dev, ret) == (0, ACL_SUCCESS)
    ctx, ret = ready.rt.get_context()
    assert ret == ACL_SUCCESS and ctx != 0


def test_get_mem_info_returns_free_total_ret(ready: ModuleType, session: Session) -> None:
    """get_mem_info returns (free, total, ret), total excluding the reserved memory."""
    result = ready.rt.get_mem_info(ACL_DDR_MEM)
    assert len(result) == 3
    free, total, ret = result
    assert ret == ACL_SUCCESS
    assert total == session.profile.memory_bytes - session.profile.reserved_bytes
    assert free == total


def test_failed_output_call_gives_zero_value(acl: ModuleType) -> None:
    """On failure the out value is 0: malloc(0, 0) gives (0, 100000)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    assert acl.rt.malloc(0, 0) == (0, ACL_ERROR_INVALID_PARAM)


def test_value_only_functions_return_a_bare_value(ready: ModuleType, session: Session) -> None:
    """Functions whose C version returns a pointer, size or string return it alone."""
    name = ready.get_soc_name()
    assert name == session.profile.soc_name
    buf = ready.create_data_buffer(0, 0)
    assert isinstance(buf, int) and buf != 0
    assert ready.get_data_buffer_addr(buf) == 0
    assert ready.get_data_buffer_size(buf) == 0
    assert ready.get_data_buffer_size_v2(buf) == 0
    assert ready.data_type_size(1) == 2  # ACL_FLOAT16
    assert isinstance(ready.get_recent_err_msg(), str)


# ----------------------------------------------------------------------------- argument parsing

BAD_CALLS: list[tuple[str, Callable[[ModuleType], Any]]] = [
    ("malloc str size", lambda acl: acl.rt.malloc("10", 0)),
    ("malloc float size", lambda acl: acl.rt.malloc(1.5, 0)),
    ("malloc numpy float", lambda acl: acl.rt.malloc(np.float64(10), 0)),
    ("malloc None policy", lambda acl: acl.rt.malloc(10, None)),
    ("malloc too few", lambda acl: acl.rt.malloc(10)),
    ("malloc too many", lambda acl: acl.rt.malloc(10, 0, 0)),
    ("set_device None", lambda acl: acl.rt.set_device(None)),
    ("set_device str", lambda acl: acl.rt.set_device("0")),
    ("set_device too many", lambda acl: acl.rt.set_device(0, 0)),
    ("init int path", lambda acl: acl.init(5)),
    ("memcpy too few", lambda acl: acl.rt.memcpy(1, 2, 3, 4)),
    ("free str", lambda acl: acl.rt.free("0x10")),
]


@pytest.mark.parametrize("call", [c for _, c in BAD_CALLS], ids=[n for n, _ in BAD_CALLS])
def test_wrong_argument_types_raise_type_error_without_effect(
        ready: ModuleType, session: Session, call: Callable[[ModuleType], Any]) -> None:
    """Wrong argument types or counts raise TypeError("... args parse failed"), with no effect."""
    before_calls = session.trace().calls.rows
    before_free = free_bytes(ready)
    with pytest.raises(TypeError) as info:
        call(ready)
    assert str(info.value).endswith("args parse failed")
    assert session.trace().calls.rows == before_calls + 1  # only free_bytes' own call
    assert free_bytes(ready) == before_free
    assert ready.rt.get_device() == (0, ACL_SUCCESS)


def test_type_error_message_names_the_function(ready: ModuleType) -> None:
    """The TypeError message names the pyACL function whose arguments failed to parse."""
    with pytest.raises(TypeError, match=r"acl\.rt\.malloc.*args parse failed$"):
        ready.rt.malloc("10", 0)


def test_numpy_integers_are_accepted_as_ints(acl: ModuleType) -> None:
    """numpy integer scalars are accepted where the binding parses ``i``/``I`` (through
    ``__index__``), and refused where it parses ``k`` (sizes, pointers, handles: CPython's
    ``k`` wants a real int)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(np.int32(0)) == ACL_SUCCESS
    before = free_bytes(acl)
    with pytest.raises(TypeError, match=r"^acl\.rt\.malloc args parse failed$"):
        acl.rt.malloc(np.int64(100), ACL_MEM_MALLOC_NORMAL_ONLY)
    ptr, ret = acl.rt.malloc(100, np.int32(ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ret == ACL_SUCCESS
    assert before - free_bytes(acl) == 160
    with pytest.raises(TypeError, match=r"^acl\.rt\.free args parse failed$"):
        acl.rt.free(np.uint64(ptr))
    assert acl.rt.free(int(np.uint64(ptr))) == ACL_SUCCESS
    assert free_bytes(acl) == before


# ----------------------------------------------------------------------------- init / finalize


def test_repeat_init_returns_100002(acl: ModuleType) -> None:
    """A second acl.init() returns ACL_ERROR_REPEAT_INITIALIZE (100002)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.init() == ACL_ERROR_REPEAT_INITIALIZE


def test_repeat_finalize_returns_100037(acl: ModuleType) -> None:
    """finalize after a successful finalize returns ACL_ERROR_REPEAT_FINALIZE (100037)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.finalize() == ACL_SUCCESS
    assert acl.finalize() == ACL_ERROR_REPEAT_FINALIZE


def test_finalize_resets_the_count_even_after_repeat_init(acl: ModuleType) -> None:
    """finalize sets the init count to 0 at once: after init twice, one finalize is enough."""
    assert acl.init() == ACL_SUCCESS
    assert acl.init() == ACL_ERROR_REPEAT_INITIALIZE
    assert acl.finalize() == ACL_SUCCESS
    assert acl.finalize() == ACL_ERROR_REPEAT_FINALIZE


def test_finalize_reference_counts_down(acl: ModuleType) -> None:
    """finalize_reference decrements the init count and de-initialises only at zero."""
    assert acl.init() == ACL_SUCCESS
    assert acl.init() == ACL_ERROR_REPEAT_INITIALIZE
    assert acl.rt.set_device(0) == ACL_SUCCESS
    assert acl.finalize_reference() == (1, ACL_SUCCESS)
    assert acl.rt.get_device() == (0, ACL_SUCCESS)  # still initialised
    assert acl.finalize_reference() == (0, ACL_SUCCESS)
    assert acl.rt.get_device() == (0, ACL_ERROR_RT_CONTEXT_NULL)  # devices released
    assert acl.finalize_reference() == (0, ACL_ERROR_REPEAT_FINALIZE)


def test_finalize_releases_devices(ready: ModuleType) -> None:
    """After finalize the thread has no context any more."""
    assert ready.finalize() == ACL_SUCCESS
    assert ready.rt.get_context() == (0, ACL_ERROR_RT_CONTEXT_NULL)


# ----------------------------------------------------------------------------- devices


@pytest.mark.parametrize("device", [1, -1, 16])
def test_set_device_with_invalid_id_returns_107001(acl: ModuleType, device: int) -> None:
    """set_device with an id outside the machine returns ACL_ERROR_RT_INVALID_DEVICEID."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(device) == ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.get_device() == (0, ACL_ERROR_RT_CONTEXT_NULL)


@pytest.mark.parametrize("device", [1, -1])
def test_create_context_with_invalid_id_returns_107001(acl: ModuleType, device: int) -> None:
    """create_context with an invalid device id returns (0, 107001)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.create_context(device) == (0, ACL_ERROR_RT_INVALID_DEVICEID)


def test_get_device_and_context_without_context_return_107002(acl: ModuleType) -> None:
    """get_device and get_context before any set_device return (0, 107002)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.get_device() == (0, ACL_ERROR_RT_CONTEXT_NULL)
    assert acl.rt.get_context() == (0, ACL_ERROR_RT_CONTEXT_NULL)


def test_reset_device_without_set_device_returns_107000(acl: ModuleType) -> None:
    """reset_device of a device that was never set returns 107000."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_ERROR_RT_PARAM_INVALID


def test_set_device_is_reference_counted(acl: ModuleType) -> None:
    """Two set_device calls need two reset_device calls before the device is released."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    empty = free_bytes(acl)
    leaked, ret = acl.rt.malloc(1000, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS
    used = empty - free_bytes(acl)
    assert used > 0
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    # One reference left: the context and the leaked block are still there.
    assert acl.rt.get_device() == (0, ACL_SUCCESS)
    assert empty - free_bytes(acl) == used
    assert acl.rt.memset(leaked, 1000, 1, 1000) == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    assert acl.rt.get_device() == (0, ACL_ERROR_RT_CONTEXT_NULL)
    assert acl.rt.reset_device(0) == ACL_ERROR_RT_PARAM_INVALID  # over-reset


def test_last_reset_reclaims_leaked_memory(acl: ModuleType) -> None:
    """The final reset_device recycles leaked blocks; freeing one afterwards returns 107000."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    empty = free_bytes(acl)
    leaked, ret = acl.rt.malloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    assert free_bytes(acl) == empty
    assert acl.rt.free(leaked) == ACL_ERROR_RT_PARAM_INVALID


def test_last_reset_waits_for_queued_tasks(acl: ModuleType, session: Session) -> None:
    """The final reset_device returns only after the device's queued tasks have finished."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    n = 8 << 20
    host, ret = acl.rt.malloc_host(n)
    assert ret == ACL_SUCCESS
    dev, ret = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS
    stream, ret = acl.rt.create_stream()
    assert ret == ACL_SUCCESS
    assert acl.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    trace = session.trace()
    [copy_call] = trace.calls_named("acl.rt.memcpy_async")
    [reset_call] = trace.calls_named("acl.rt.reset_device")
    [task] = [i for i in range(trace.tasks.rows) if trace.tasks["call"][i] == copy_call]
    assert trace.tasks["end_ns"][task] > trace.calls["end_ns"][copy_call]
    assert trace.calls["end_ns"][reset_call] >= trace.tasks["end_ns"][task]


def test_reset_device_force_releases_whatever_the_count(acl: ModuleType) -> None:
    """reset_device_force releases a device set twice in one call."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    assert acl.rt.reset_device_force(0) == ACL_SUCCESS
    assert acl.rt.get_device() == (0, ACL_ERROR_RT_CONTEXT_NULL)


# ----------------------------------------------------------------------------- contexts


def test_default_context_cannot_be_destroyed(ready: ModuleType) -> None:
    """destroy_context refuses the default context of set_device, which stays usable."""
    ctx, ret = ready.rt.get_context()
    assert ret == ACL_SUCCESS
    assert ready.rt.destroy_context(ctx) != ACL_SUCCESS
    assert ready.rt.get_context() == (ctx, ACL_SUCCESS)
    ptr, ret = ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS
    assert ready.rt.free(ptr) == ACL_SUCCESS


def test_create_context_becomes_current(ready: ModuleType) -> None:
    """create_context makes the new context current; set_context switches back."""
    default, _ = ready.rt.get_context()
    ctx, ret = ready.rt.create_context(0)
    assert ret == ACL_SUCCESS and ctx not in (0, default)
    assert ready.rt.get_context() == (ctx, ACL_SUCCESS)
    assert ready.rt.set_context(default) == ACL_SUCCESS
    assert ready.rt.get_context() == (default, ACL_SUCCESS)
    assert ready.rt.destroy_context(ctx) == ACL_SUCCESS
    assert ready.rt.get_context() == (default, ACL_SUCCESS)


def test_create_context_without_set_device_works(acl: ModuleType) -> None:
    """create_context alone gives the thread a context and device."""
    assert acl.init() == ACL_SUCCESS
    ctx, ret = acl.rt.create_context(0)
    assert ret == ACL_SUCCESS
    assert acl.rt.get_device() == (0, ACL_SUCCESS)
    ptr, ret = acl.rt.malloc(10, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == ACL_SUCCESS
    assert acl.rt.free(ptr) == ACL_SUCCESS
    assert acl.rt.destroy_context(ctx) == ACL_SUCCESS


@pytest.mark.timeout(120)
def test_new_thread_has_no_context(ready: ModuleType) -> None:
    """A fresh threading.Thread gets (0, 107002) from malloc, create_stream, get_*."""

    def calls() -> list[Any]:
        return [ready.rt.malloc(10, ACL_MEM_MALLOC_NORMAL_ONLY), ready.rt.create_stream(),
                ready.rt.get_context(), ready.rt.get_device(), ready.rt.create_event()]

    assert in_new_thread(calls) == [(0, ACL_ERROR_RT_CONTEXT_NULL)] * 5
    assert ready.rt.get_device() == (0, ACL_SUCCESS)  # the main thread keeps its own


@pytest.mark.timeout(120)
def test_new_thread_get_mem_info_returns_107002(ready: ModuleType) -> None:
    """get_mem_info in a thread with no context returns (0, 0, 107002)."""
    assert in_new_thread(lambda: ready.rt.get_mem_info(ACL_DDR_MEM)) == \
        (0, 0, ACL_ERROR_RT_CONTEXT_NULL)


@pytest.mark.timeout(120)
def test_threads_sharing_set_device_share_the_default_context(ready: ModuleType) -> None:
    """Threads that call set_device on the same device share its default context."""
    main_ctx, _ = ready.rt.get_context()

    def other() -> tuple[int, tuple[int, int]]:
        return ready.rt.set_device(0), ready.rt.get_context()

    assert in_new_thread(other) == (ACL_SUCCESS, (main_ctx, ACL_SUCCESS))


# ----------------------------------------------------------------------------- error messages


def test_recent_err_msg_explains_a_failure(ready: ModuleType) -> None:
    """After a failed call get_recent_err_msg returns a non-empty explanation."""
    assert ready.rt.malloc(0, 0) == (0, ACL_ERROR_INVALID_PARAM)
    msg = ready.get_recent_err_msg()
    assert isinstance(msg, str) and msg.strip()


def test_recent_err_msg_is_empty_without_failure(ready: ModuleType) -> None:
    """Without a failed call get_recent_err_msg returns an empty string."""
    assert ready.get_recent_err_msg() == ""


@pytest.mark.timeout(120)
def test_recent_err_msg_after_107002_mentions_set_context(ready: ModuleType) -> None:
    """The message after 107002 in a new thread tells the user to call set_context."""

    def fail_then_ask() -> tuple[tuple[int, int], str]:
        return ready.rt.malloc(10, 0), ready.get_recent_err_msg()

    result, msg = in_new_thread(fail_then_ask)
    assert result == (0, ACL_ERROR_RT_CONTEXT_NULL)
    assert "set_context" in msg


def test_recent_err_msg_is_per_thread(ready: ModuleType) -> None:
    """A failure in another thread does not show up in this thread's message."""
    assert in_new_thread(lambda: ready.rt.malloc(10, 0)) == (0, ACL_ERROR_RT_CONTEXT_NULL)
    assert ready.get_recent_err_msg() == ""


# ----------------------------------------------------------------------------- the trace


def test_trace_records_every_call_with_ret_and_site(acl: ModuleType, session: Session) -> None:
    """Every API call is one row of calls, failed ones carry their code, sites are exact."""
    lines: list[int] = []
    lines.append(next_line())
    acl.init()
    lines.append(next_line())
    acl.rt.set_device(0)
    lines.append(next_line())
    ptr, _ = acl.rt.malloc(100, ACL_MEM_MALLOC_NORMAL_ONLY)
    lines.append(next_line())
    acl.rt.free(ptr)
    lines.append(next_line())
    acl.rt.free(ptr)  # double free: 107000
    lines.append(next_line())
    acl.rt.malloc(0, ACL_MEM_MALLOC_NORMAL_ONLY)  # 100000
    with pytest.raises(TypeError):
        acl.rt.malloc("1", 0)  # not a call: the binding never reaches C
    lines.append(next_line())
    acl.rt.reset_device(0)
    lines.append(next_line())
    acl.finalize()

    trace = session.trace()
    assert trace.calls.rows == len(lines)
    names = [trace.call_name(i) for i in range(trace.calls.rows)]
    assert names == ["acl.init", "acl.rt.set_device", "acl.rt.malloc", "acl.rt.free",
                     "acl.rt.free", "acl.rt.malloc", "acl.rt.reset_device", "acl.finalize"]
    assert list(trace.calls["ret"]) == [0, 0, 0, 0, ACL_ERROR_RT_PARAM_INVALID,
                                        ACL_ERROR_INVALID_PARAM, 0, 0]
    for i, line in enumerate(lines):
        file, got = trace.call_site(i)
        assert Path(file).resolve() == HERE
        assert got == line


@pytest.mark.timeout(120)
def test_trace_records_calls_of_every_thread(ready: ModuleType, session: Session) -> None:
    """Calls made in another thread are recorded too, with that thread and its 107002."""
    before = len(session.trace().api_calls())
    in_new_thread(lambda: ready.rt.get_device())
    trace = session.trace()
    api = trace.api_calls()
    assert len(api) == before + 1
    last = int(api[-1])
    assert trace.call_name(last) == "acl.rt.get_device"
    assert trace.calls["ret"][last] == ACL_ERROR_RT_CONTEXT_NULL
    assert trace.calls["thread"][last] != trace.calls["thread"][0]

