"""Model execution speed: the zoo ResNet-50 run once, in real time (target < 2 s).

Three figures for the zoo "resnet50" (1x3x224x224 fp32, 8.2 GFLOP): the graph executor alone
(``OmModel.run``), a whole ``acl.mdl.execute`` through the emulator (dataset checks, the model
task, its data effects), and the virtual time the profile assigns to that execution.
Generation of the model (first use only) is not timed. Every repeat executes on a new image
(copied in before the timed call), so a loaded model's memo of recent outputs never answers.
"""

from __future__ import annotations

import time

import numpy as np

from acl_lab import zoo
from acl_lab.constants import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.runtime.model import load_om

from .common import Row, acl_session, check, median

NAME = "models"


def run(quick: bool) -> list[Row]:
    """Time the zoo ResNet-50 (3 repeats, or 1 with ``quick``)."""
    path = zoo.path("resnet50")
    om = load_om(path)
    image = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    repeats = 1 if quick else 3
    direct = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        om.run([image])
        direct.append(time.perf_counter() - t0)
    emulated, virtual = [], []
    with acl_session() as (s, acl):
        mid, ret = acl.mdl.load_from_file(path)
        check(ret, "load_from_file")
        desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(desc, mid), "get_desc")
        datasets = []
        inputs: list[tuple[int, int]] = []
        for kind, n in (("in", acl.mdl.get_num_inputs(desc)),
                        ("out", acl.mdl.get_num_outputs(desc))):
            ds = acl.mdl.create_dataset()
            for i in range(n):
                size = (acl.mdl.get_input_size_by_index(desc, i) if kind == "in"
                        else acl.mdl.get_output_size_by_index(desc, i))
                ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
                check(ret, "malloc")
                acl.mdl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))
                if kind == "in":
                    inputs.append((ptr, size))
            datasets.append(ds)
        rng = np.random.default_rng(1)
        for _ in range(repeats):
            for ptr, size in inputs:
                data = rng.standard_normal(size // 4).astype(np.float32).tobytes()
                check(acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), size,
                                    ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
            th = s.thread()
            v0 = th.clock
            t0 = time.perf_counter()
            check(acl.mdl.execute(mid, datasets[0], datasets[1]), "execute")
            emulated.append(time.perf_counter() - t0)
            virtual.append((th.clock - v0) / 1e6)
    return [
        Row(NAME, "resnet50_graph_run", median(direct), "s", 2.0),
        Row(NAME, "resnet50_acl_mdl_execute", median(emulated), "s", 2.0),
        Row(NAME, "resnet50_virtual_time_Ascend310P3", median(virtual), "ms"),
    ]
