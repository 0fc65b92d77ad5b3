"""The MSCCL++ execution plan (JSON), as the executor of a pinned release reads it.

Pinned: microsoft/mscclpp v0.10.0 (commit 6231b4f38ddcff0ef5da7bcc117ae99f2cb06e69). The reader is
``src/core/executor/execution_plan.cc`` (``ExecutionPlan::Impl``), the limits are
``src/core/include/execution_common.hpp`` and ``src/core/executor/executor.cc``; the shape of the
JSON is what ``python/mscclpp/language`` (the DSL: ``program.py`` ``to_json``, ``internal/gpu.py``,
``internal/threadblock.py``, ``internal/operations.py``) writes. Every rule below names the line
it mirrors (``execution_plan.cc:NNN`` etc.).

:func:`parse_plan` reads a plan's text into plain Python values and applies the reader's rules
(keys it indexes with ``obj["key"]`` must exist and have the type nlohmann::json converts, names it
looks up must be known, ``gpus[rank]["id"] == rank``...) and the executor's fixed-size arrays.
The result is the JSON document itself (dicts and lists); :mod:`solver.mscclpp.interpreter`
executes it.
"""

from __future__ import annotations

import json
import math

from solver.model.errors import ForestCollError

RELEASE = "v0.10.0"
COMMIT = "6231b4f38ddcff0ef5da7bcc117ae99f2cb06e69"
PLAN = "src/core/executor/execution_plan.cc"
COMMON = "src/core/include/execution_common.hpp"
EXECUTOR = "src/core/executor/executor.cc"
KERNEL = "src/core/include/execution_kernel.hpp"


class MscclppError(ForestCollError):
    """An MSCCL++ execution plan cannot be produced, read or checked (one-line message)."""


# getOpType (execution_plan.cc:25-89): every name the reader knows
OP_NAMES = (
    "nop",
    "barrier",
    "put",
    "pws",
    "pwsf",
    "get",
    "copy",
    "signal",
    "wait",
    "flush",
    "re",
    "res",
    "rre",
    "rres",
    "ppkt",
    "rppkt",
    "respkt",
    "cpkt",
    "upkt",
    "repkt",
    "recpkt",
    "recspkt",
    "glres",
    "gstore",
    "gstorepkt",
    "rlxsignal",
    "rlxwait",
    "pipeline",
    "sem_acquire",
    "sem_release",
)
BUFFER_TYPES = ("i", "o", "s")  # convertToBufferType (execution_plan.cc:91-101)
CHANNEL_TYPES = ("memory", "port", "none", "switch")  # convertToChannelType (:103-115)
# the DSL's collective names (python/mscclpp/language/collectives.py:104, 150, 198)
COLLECTIVE_NAMES = {
    "allgather": "allgather",
    "reduce-scatter": "reducescatter",
    "allreduce": "allreduce",
}
PROTOCOLS = ("Simple", "LL")  # loadExecutionPlan: "LL" selects packets (execution_plan.cc:243-246)

MAX_OPERATION = 64  # ops per threadblock (execution_common.hpp:17; refused at executor.cc:457-461)
MAX_CHANNEL = (
    16  # memory / port channels and remote buffers per threadblock (execution_common.hpp:15, 74-86)
)
MAX_CHANNEL_PER_OPERATION = 8  # channel_ids per op (execution_common.hpp:16, 114)
MAX_BUFFERS_PER_OPERATION = 10  # src_buff / dst_buff entries (2 + 8, execution_common.hpp:13, 98)
MAX_DEVICE_SEMAPHORES = 16  # semaphore_ids per op (execution_common.hpp:20, 134)
# executionKernel is __launch_bounds__(1024, 1) (execution_kernel.hpp:794) and launched with one block
# per threadblock of the plan (execution_kernel.cu:16): blocks that spin on each other's signals must
# all be resident at once, one per SM/CU. 108 = the SMs of an A100, the fewest among A100 (108),
# H100 (132), MI250X GCD (110) and MI300X (304).
RESIDENT_THREADBLOCKS = 108
UINT32_MAX = (
    2**32 - 1
)  # offsets and sizes are uint32_t in the device plan (execution_common.hpp:115-118)
UINT64_MAX = 2**64 - 1  # max_message_size default (execution_plan.cc:133)

TOP_KEYS = ("name", "collective", "protocol", "inplace", "gpus")  # obj[...] at :126-127, 239-254
GPU_KEYS = (
    "id",
    "input_chunks",
    "output_chunks",
    "scratch_chunks",
    "threadblocks",
    "channels",
    "remote_buffers",
)  # gpu[...] at :257-262, 317, 350, 420
DSL_TOP_KEYS = (
    "name",
    "collective",
    "protocol",
    "inplace",
    "reuse_resources",
    "gpus",
    "num_threads_per_block",
    "use_double_scratch_buffer",
    "buffer_alignment",
    "min_message_size",
    "max_message_size",
)  # program.py to_json


def cite(where: str) -> str:
    return f"mscclpp {RELEASE} {where}"


def _fail(where: str, message: str) -> None:
    raise MscclppError(f"{where}: {message}")


def _int(value, where: str, name: str, low: int = 0, high: int = 2**31 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(
            where,
            f"{name} must be an integer, got {json.dumps(value)[:40]} (nlohmann::json "
            f"throws type_error converting it, {cite(PLAN)})",
        )
    if not low <= value <= high:
        _fail(where, f"{name}={value} is outside {low}..{high}")
    return value


def _list(value, where: str, name: str) -> list:
    if not isinstance(value, list):
        _fail(where, f"{name} must be a list ({cite(PLAN)} iterates it)")
    return value


def _dict(value, where: str, name: str) -> dict:
    if not isinstance(value, dict):
        _fail(where, f"{name} must be an object")
    return value


def _get(obj: dict, key: str, where: str, line: str):
    if key not in obj:
        _fail(where, f"missing key {key!r} (the reader indexes it, {cite(PLAN)}:{line})")
    return obj[key]


def parse_plan(text: str, where: str = "<plan>", resident: int | None = None) -> dict:
    """The plan document of ``text`` after the reader's rules; raises :class:`MscclppError`."""
    try:
        doc = json.loads(text, parse_constant=lambda c: _fail(where, f"{c} is not JSON"))
    except ValueError as exc:
        raise MscclppError(f"{where}: not JSON ({exc})") from None
    except RecursionError:
        raise MscclppError(f"{where}: nested too deeply") from None
    validate(doc, where, resident)
    return doc


def validate(doc, where: str = "<plan>", resident: int | None = None) -> None:
    """The reader's and the executor's rules on a plan document (see the module doc);
    ``resident``: threadblocks per rank that can run at once (default RESIDENT_THREADBLOCKS)."""
    resident = resident or RESIDENT_THREADBLOCKS
    _dict(doc, where, "the plan")
    for key, line in zip(TOP_KEYS, ("126", "127", "243", "128", "254")):
        _get(doc, key, where, line)
    if not isinstance(doc["name"], str) or not isinstance(doc["collective"], str):
        _fail(where, "name and collective must be strings (std::string, execution_plan.cc:126-127)")
    if doc["protocol"] not in PROTOCOLS:
        _fail(
            where,
            f"protocol {json.dumps(doc['protocol'])[:30]} is not Simple or LL "
            f"({cite(PLAN)}:243-246 reads 'LL' as packets, anything else as Simple)",
        )
    if not isinstance(doc["inplace"], bool):
        _fail(where, f"inplace must be true or false ({cite(PLAN)}:128 reads a bool)")
    for key in ("reuse_resources", "use_double_scratch_buffer"):
        if key in doc and not isinstance(doc[key], bool):
            _fail(where, f"{key} must be true or false ({cite(PLAN)}:129-130)")
    align = _int(doc.get("buffer_alignment", 16), where, "buffer_alignment", 1, UINT32_MAX)
    if align & (align - 1):
        _fail(where, f"buffer_alignment {align} is not a power of two")
    lo = _int(doc.get("min_message_size", 0), where, "min_message_size", 0, UINT64_MAX)
    hi = _int(doc.get("max_message_size", UINT64_MAX), where, "max_message_size", 0, UINT64_MAX)
    if lo > hi:
        _fail(
            where,
            f"min_message_size {lo} > max_message_size {hi}: checkMessageSize refuses every "
            f"size ({cite(PLAN)}:308)",
        )
    _int(doc.get("num_threads_per_block", 1024), where, "num_threads_per_block", 1, 1024)
    gpus = _list(doc["gpus"], where, "gpus")
    if not gpus:
        _fail(where, "gpus is empty")
    for rank, gpu in enumerate(gpus):
        _gpu(_dict(gpu, where, f"gpus[{rank}]"), rank, len(gpus), f"{where}: gpu {rank}", resident)


def _gpu(gpu: dict, rank: int, n: int, where: str, resident: int) -> None:
    for key, line in zip(GPU_KEYS, ("257", "260", "261", "262", "420", "317", "350")):
        _get(gpu, key, where, line)
    if _int(gpu["id"], where, "id") != rank:
        _fail(
            where,
            f'id {gpu["id"]} is not its position {rank} ("GPU rank does not match", '
            f"{cite(PLAN)}:256-259)",
        )
    chunks = [
        _int(gpu[k], where, k, 0, UINT32_MAX)
        for k in ("input_chunks", "output_chunks", "scratch_chunks")
    ]
    if chunks[0] == 0 and chunks[1] == 0:
        _fail(where, f"input_chunks and output_chunks are both 0 ({cite(PLAN)}:603-604)")
    flat = {"memory": [], "port": []}
    for c, ch in enumerate(_list(gpu["channels"], where, "channels")):
        cw = f"{where} channel {c}"
        _dict(ch, cw, "channel")
        ctype = _get(ch, "channel_type", cw, "318")
        if ctype not in CHANNEL_TYPES:
            _fail(
                cw,
                f'channel_type {json.dumps(ctype)[:30]} ("Invalid channel type", {cite(PLAN)}:103-115)',
            )
        if ctype == "switch":
            _get(ch, "buffer_type", cw, "322")
            _get(ch, "rank_groups", cw, "323")
            continue
        for peer in _list(_get(ch, "connected_to", cw, "334"), cw, "connected_to"):
            _int(peer, cw, "connected_to peer", 0, n - 1)
            if peer == rank:
                _fail(cw, "a channel connects the rank to itself")
            if ctype in flat:
                flat[ctype].append(peer)
    nbuf = 0
    for b, rb in enumerate(_list(gpu["remote_buffers"], where, "remote_buffers")):
        bw = f"{where} remote_buffer {b}"
        _dict(rb, bw, "remote buffer")
        _int(_get(rb, "rank", bw, "352"), bw, "rank", 0, n - 1)
        if _get(rb, "type", bw, "353") not in BUFFER_TYPES:
            _fail(
                bw,
                f'type {json.dumps(rb["type"])[:20]} ("Invalid buffer type", {cite(PLAN)}:91-101)',
            )
        for t in _list(_get(rb, "access_channel_types", bw, "355"), bw, "access_channel_types"):
            if t not in CHANNEL_TYPES:
                _fail(bw, f"access channel type {json.dumps(t)[:20]} ({cite(PLAN)}:103-115)")
        nbuf += 1
    for s, sem in enumerate(_list(gpu.get("semaphores", []), where, "semaphores")):
        _int(
            _get(_dict(sem, where, "semaphore"), "init_value", f"{where} semaphore {s}", "452"),
            f"{where} semaphore {s}",
            "init_value",
            -(2**31),
            2**31 - 1,
        )
    nsem = len(gpu.get("semaphores", []))
    tbs = _list(gpu["threadblocks"], where, "threadblocks")
    if len(tbs) > resident:
        _fail(
            where,
            f"{len(tbs)} threadblocks: the kernel runs one 1024-thread block per SM "
            f"({cite(KERNEL)}:794) and its blocks wait on each other, so all must be resident at "
            f"once; this check allows {resident} (--max-threadblocks: the GPU's SMs/CUs"
            f"{', default an A100' if resident == RESIDENT_THREADBLOCKS else ''})",
        )
    for t, tb in enumerate(tbs):
        tw = f"{where} tb {t}"
        _dict(tb, tw, "threadblock")
        if _int(_get(tb, "id", tw, "460"), tw, "id") != t:
            _fail(
                tw,
                f"id {tb['id']} is not its position {t}: the executor indexes its per-threadblock "
                f"tables by id and runs them by position ({cite(PLAN)}:405-409, 459-475)",
            )
        counts = {"memory": 0, "port": 0, "switch": 0}
        for ch in _list(_get(tb, "channels", tw, "396"), tw, "channels"):
            _dict(ch, tw, "channel")
            ctype = _get(ch, "channel_type", tw, "397")
            if ctype not in CHANNEL_TYPES:
                _fail(tw, f"channel_type {json.dumps(ctype)[:30]} ({cite(PLAN)}:103-115)")
            for cid in _list(_get(ch, "channel_ids", tw, "402"), tw, "channel_ids"):
                if ctype in flat:
                    _int(cid, tw, f"{ctype} channel id", 0, len(flat[ctype]) - 1)
                counts[ctype] = counts.get(ctype, 0) + 1
        for ctype in ("memory", "port"):
            if counts[ctype] > MAX_CHANNEL:
                _fail(
                    tw,
                    f"{counts[ctype]} {ctype} channels, more than the device plan holds "
                    f"(MAX_CHANNEL {MAX_CHANNEL}, {cite(COMMON)}:15, 74-75)",
                )
        refs = {"memory": 0, "port": 0}
        for ref in _list(tb.get("remote_buffer_refs", []), tw, "remote_buffer_refs"):
            _dict(ref, tw, "remote buffer ref")
            at = _get(ref, "access_channel_type", tw, "428")
            if at not in CHANNEL_TYPES:
                _fail(tw, f"access_channel_type {json.dumps(at)[:20]} ({cite(PLAN)}:103-115)")
            for bid in _list(_get(ref, "remote_buffer_ids", tw, "430"), tw, "remote_buffer_ids"):
                _int(bid, tw, "remote buffer id", 0, max(0, nbuf - 1))
                if nbuf == 0:
                    _fail(tw, "refers to a remote buffer but the gpu has none")
                if at in refs:
                    refs[at] += 1
        for at, count in refs.items():
            if count > MAX_CHANNEL:
                _fail(
                    tw,
                    f"{count} remote buffers through {at} channels, more than the device plan "
                    f"holds (MAX_CHANNEL {MAX_CHANNEL}, {cite(COMMON)}:79-86)",
                )
        ops = _list(_get(tb, "ops", tw, "462"), tw, "ops")
        total = 0
        for o, op in enumerate(ops):
            total += 1 + _op(_dict(op, tw, "op"), f"{tw} op {o}", nsem)
        if total > MAX_OPERATION:
            _fail(
                tw,
                f'{total} operations, more than the device plan holds ("exceeding device '
                f'execution plan support", MAX_OPERATION {MAX_OPERATION}, {cite(EXECUTOR)}:457-461)',
            )


def _op(op: dict, where: str, nsem: int) -> int:
    """Checks one op; returns the inner ops a pipeline adds to the threadblock's count."""
    name = _get(op, "name", where, "506")
    if name not in OP_NAMES:
        _fail(
            where,
            f'unknown operation {json.dumps(name)[:30]} ("Invalid operation type", {cite(PLAN)}:86-88)',
        )
    if "channel_type" in op and op["channel_type"] not in CHANNEL_TYPES:
        _fail(where, f"channel_type {json.dumps(op['channel_type'])[:30]} ({cite(PLAN)}:507-509)")
    if "channel_ids" in op:
        ids = _list(op["channel_ids"], where, "channel_ids")
        if len(ids) > MAX_CHANNEL_PER_OPERATION:
            _fail(
                where,
                f"{len(ids)} channel_ids, more than an operation holds "
                f"(MAX_CHANNEL_PER_OPERATION {MAX_CHANNEL_PER_OPERATION}, {cite(COMMON)}:16, 114)",
            )
        for cid in ids:
            _int(cid, where, "channel id", 0, 255)  # uint8_t channelIndexes
    for side, line in (("src_buff", "520-548"), ("dst_buff", "550-578")):
        if side not in op:
            continue
        buffs = _list(op[side], where, side)
        if len(buffs) > MAX_BUFFERS_PER_OPERATION:
            _fail(
                where,
                f"{len(buffs)} {side} entries, more than an operation holds "
                f"({MAX_BUFFERS_PER_OPERATION}, {cite(COMMON)}:13-16, 98)",
            )
        for buff in buffs:
            _dict(buff, where, side)
            if "type" in buff and buff["type"] not in BUFFER_TYPES:
                _fail(where, f"{side} type {json.dumps(buff['type'])[:20]} ({cite(PLAN)}:91-101)")
            if "type" not in buff and "buffer_id" not in buff and "switch_channel_id" not in buff:
                _fail(
                    where,
                    f"a {side} entry names no buffer (type, buffer_id or switch_channel_id; "
                    f"{cite(PLAN)}:{line})",
                )
            if "buffer_id" in buff:
                _int(buff["buffer_id"], where, "buffer_id", 0, 255)
            _int(_get(buff, "index", where, line), where, "index", 0, UINT32_MAX)
            _int(_get(buff, "size", where, line), where, "size", 0, UINT32_MAX)
    if "semaphore_ids" in op:
        ids = _list(op["semaphore_ids"], where, "semaphore_ids")
        if len(ids) > MAX_DEVICE_SEMAPHORES:
            _fail(
                where,
                f"{len(ids)} semaphore_ids (MAX_DEVICE_SEMAPHORES {MAX_DEVICE_SEMAPHORES}, "
                f"{cite(COMMON)}:20, 134)",
            )
        for s in ids:
            _int(s, where, "semaphore id", 0, max(0, nsem - 1))
            if nsem == 0:
                _fail(where, "uses a semaphore but the gpu declares none")
    inner = 0
    if name == "pipeline":
        _dict(_get(op, "iter_context", where, "592"), where, "iter_context")
        for i, sub in enumerate(_list(_get(op, "ops", where, "467"), where, "ops")):
            _op(_dict(sub, where, "op"), f"{where} inner op {i}", nsem)
            inner += 1
    return inner


def plan_stats(doc: dict) -> dict[str, int]:
    """Sizes of a plan: ranks, threadblocks (most on a rank, total), ops, channels."""
    gpus = doc["gpus"]
    tbs = [len(g["threadblocks"]) for g in gpus]
    return {
        "ranks": len(gpus),
        "max_threadblocks": max(tbs),
        "threadblocks": sum(tbs),
        "ops": sum(len(tb["ops"]) for g in gpus for tb in g["threadblocks"]),
        "max_ops": max((len(tb["ops"]) for g in gpus for tb in g["threadblocks"]), default=0),
        "channels": sum(len(c.get("connected_to", [])) for g in gpus for c in g["channels"]),
    }


def size_granularity(doc: dict) -> int:
    """The smallest message size step the plan runs at: checkMessageSize needs the buffer sizes to
    be multiples of buffer_alignment x chunks (execution_plan.cc:299-304)."""
    align = doc.get("buffer_alignment", 16)
    step = 1
    for g in doc["gpus"]:
        for c in (g["input_chunks"], g["output_chunks"]):
            if c:
                step = math.lcm(step, c)
    return align * step
