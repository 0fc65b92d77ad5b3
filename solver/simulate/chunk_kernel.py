"""The numba kernels of the chunk-level simulator (the model is described in
:mod:`solver.simulate.engine`, which prepares the arrays and drives these kernels).

Every array is allocated by the caller and bundled in the named tuples below; the kernels allocate
nothing, so they run with numba's reference counting off (:data:`~solver.flow.jit.njit_noalloc`)
and reading a bundle's field inside the event loop costs nothing. Because the kernels cannot grow
the event heap themselves, :func:`run_events` returns :data:`NEED_ROOM` when the heap might not hold
the next event's pushes; the caller gives it a bigger heap and calls again, and the run resumes
where it stopped (its counters live in ``clock``, not in kernel locals).

Items are packed into int64: an event item is ``payload << 2 | type``; the payload of a chunk on
the move is ``(edge << 22 | chunk) << 10 | hop`` (READY) or ``edge << 22 | chunk`` (ARRIVE), that of
a KICK is the link. A link-queue key is ``priority << 36 | arrival number``, priority = dependency
stage + chunk / chunks of its flow, in units of 2**-20 (smallest first).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solver.flow.jit import njit_noalloc

READY = 0  # the head of a chunk reaches the next hop of its path
KICK = 1  # a link is free: it sends its highest-priority waiting chunk
ARRIVE = 2  # a whole chunk arrived at the far end of a tree edge
CBITS = 22
HBITS = 10
CMASK = (1 << CBITS) - 1
HMASK = (1 << HBITS) - 1
QSHIFT = 36
PSCALE = 1 << 20

# what run_events returns
FINISHED = 0
NEED_ROOM = 1
STOPPED = 2

# slots of ``clock``, the run's counters
PENDING = 0  # events in the heap
EVENT_SEQ = 1  # next event number (events at the same time are served first pushed, first out)
QUEUE_SEQ = 2  # next link-queue arrival number
EVENTS = 3  # events processed so far


class Flows(NamedTuple):
    """Per flow."""

    kind: np.ndarray  # 0 broadcast (root sends), 1 reduce (leaves send towards the root)
    root: np.ndarray  # compute-node index
    n_chunks: np.ndarray
    chunk_bytes: np.ndarray
    stage: np.ndarray  # dependency depth: a waiting flow ranks after the flows it waits for
    waits: np.ndarray  # 1: released by other flows, not at time 0
    done: np.ndarray  # out: when its last chunk arrived (s)


class Edges(NamedTuple):
    """Logical tree edges between compute nodes and their physical paths (CSR)."""

    n_nodes: int
    flow: np.ndarray  # flow of edge e
    dst: np.ndarray  # far end of edge e
    path_ptr: np.ndarray  # links of edge e: path_links[path_ptr[e]:path_ptr[e + 1]]
    path_links: np.ndarray
    out_ptr: np.ndarray  # edges out of node v in flow f: out_edges[out_ptr[f*N+v]:out_ptr[f*N+v+1]]
    out_edges: np.ndarray


class Reduce(NamedTuple):
    """Reduce counters and the flows released when a group of flows is done (all updated)."""

    count_ptr: np.ndarray  # per flow: start of its (node, chunk) counters
    count: np.ndarray  # contributions a node still waits for, per (flow, node, chunk)
    group_left: np.ndarray  # chunks to arrive at the root before group g releases its dependents
    member_group: np.ndarray  # per flow: its (first) group, -1 none
    member_chunkwise: np.ndarray  # per flow: 1 if it has one group per chunk
    dep_ptr: np.ndarray  # dependents of group g: dep_flow/dep_chunk[dep_ptr[g]:dep_ptr[g + 1]]
    dep_flow: np.ndarray
    dep_chunk: np.ndarray  # the chunk released, -1 every chunk


class Links(NamedTuple):
    """Directed links, each with a binary heap of waiting chunks."""

    bandwidth: np.ndarray  # bytes/s
    latency: np.ndarray  # s
    busy: np.ndarray  # sending, or a kick is pending
    busy_time: np.ndarray  # out: seconds spent serialising
    kicks: np.ndarray  # links that got work at the current instant and need a kick
    queue_off: np.ndarray  # link l's heap: slots queue_off[l]:queue_off[l + 1]
    queue_len: np.ndarray
    queue_key: np.ndarray
    queue_item: np.ndarray  # (edge, chunk, hop)
    queue_tail: np.ndarray  # when the chunk's last byte reaches the link (cut-through)


class EventHeap(NamedTuple):
    """Pending events, earliest (time, event number) on top."""

    time: np.ndarray
    seq: np.ndarray
    item: np.ndarray
    tail: np.ndarray  # READY/ARRIVE: when the chunk's last byte arrives


def new_heap(capacity: int) -> EventHeap:
    return EventHeap(
        np.empty(capacity, np.float64),
        np.empty(capacity, np.int64),
        np.empty(capacity, np.int64),
        np.empty(capacity, np.float64),
    )


def grown_heap(heap: EventHeap, capacity: int, n: int) -> EventHeap:
    """A heap of ``capacity`` slots holding the ``n`` pending events of ``heap``."""
    bigger = new_heap(capacity)
    for old, new in zip(heap, bigger, strict=True):
        new[:n] = old[:n]
    return bigger


@njit_noalloc
def _heap_push(heap, n, t, s, item, tail):
    """Add an event to the heap holding ``n``; returns the new size."""
    i = n
    while i > 0:
        par = (i - 1) >> 1
        if heap.time[par] < t or (heap.time[par] == t and heap.seq[par] < s):
            break
        heap.time[i] = heap.time[par]
        heap.seq[i] = heap.seq[par]
        heap.item[i] = heap.item[par]
        heap.tail[i] = heap.tail[par]
        i = par
    heap.time[i] = t
    heap.seq[i] = s
    heap.item[i] = item
    heap.tail[i] = tail
    return n + 1


@njit_noalloc
def _heap_pop(heap, n):
    """Remove the top event (read it first); returns the new size."""
    n -= 1
    t = heap.time[n]
    s = heap.seq[n]
    item = heap.item[n]
    tail = heap.tail[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (
            heap.time[c + 1] < heap.time[c]
            or (heap.time[c + 1] == heap.time[c] and heap.seq[c + 1] < heap.seq[c])
        ):
            c += 1
        if t < heap.time[c] or (t == heap.time[c] and s < heap.seq[c]):
            break
        heap.time[i] = heap.time[c]
        heap.seq[i] = heap.seq[c]
        heap.item[i] = heap.item[c]
        heap.tail[i] = heap.tail[c]
        i = c
    if n > 0:
        heap.time[i] = t
        heap.seq[i] = s
        heap.item[i] = item
        heap.tail[i] = tail
    return n


@njit_noalloc
def _queue_push(links, lk, key, item, tail):
    """Add a chunk to link ``lk``'s queue."""
    off = links.queue_off[lk]
    i = links.queue_len[lk]
    links.queue_len[lk] = i + 1
    while i > 0:
        par = (i - 1) >> 1
        if links.queue_key[off + par] < key:
            break
        links.queue_key[off + i] = links.queue_key[off + par]
        links.queue_item[off + i] = links.queue_item[off + par]
        links.queue_tail[off + i] = links.queue_tail[off + par]
        i = par
    links.queue_key[off + i] = key
    links.queue_item[off + i] = item
    links.queue_tail[off + i] = tail


@njit_noalloc
def _queue_pop(links, lk):
    """Remove link ``lk``'s highest-priority chunk; returns its (item, tail)."""
    off = links.queue_off[lk]
    top_item = links.queue_item[off]
    top_tail = links.queue_tail[off]
    n = links.queue_len[lk] - 1
    links.queue_len[lk] = n
    key = links.queue_key[off + n]
    item = links.queue_item[off + n]
    tail = links.queue_tail[off + n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and links.queue_key[off + c + 1] < links.queue_key[off + c]:
            c += 1
        if key < links.queue_key[off + c]:
            break
        links.queue_key[off + i] = links.queue_key[off + c]
        links.queue_item[off + i] = links.queue_item[off + c]
        links.queue_tail[off + i] = links.queue_tail[off + c]
        i = c
    if n > 0:
        links.queue_key[off + i] = key
        links.queue_item[off + i] = item
        links.queue_tail[off + i] = tail
    return top_item, top_tail


@njit_noalloc
def _enqueue(flows, edges, links, e, c, h, tail, qseq, n_kick):
    """Queue chunk c of edge e at hop h (arrival number ``qseq``); an idle link is marked for a
    kick. Returns the new number of kicks."""
    lk = edges.path_links[edges.path_ptr[e] + h]
    f = edges.flow[e]
    rank = flows.stage[f] * PSCALE + (c * PSCALE) // flows.n_chunks[f]
    _queue_push(links, lk, (rank << QSHIFT) | qseq, (((e << CBITS) | c) << HBITS) | h, tail)
    if not links.busy[lk]:
        links.busy[lk] = True
        links.kicks[n_kick] = lk
        n_kick += 1
    return n_kick


@njit_noalloc
def _send(flows, edges, links, f, v, c, t, qseq, n_kick):
    """Node v sends chunk c of flow f on every tree edge leaving it; returns (qseq, n_kick)."""
    at = f * edges.n_nodes + v
    for j in range(edges.out_ptr[at], edges.out_ptr[at + 1]):
        n_kick = _enqueue(flows, edges, links, edges.out_edges[j], c, 0, t, qseq, n_kick)
        qseq += 1
    return qseq, n_kick


@njit_noalloc
def _release(flows, edges, red, links, f, c, t, qseq, n_kick):
    """Chunk c of flow f starts: its root sends it (broadcast), or every node with no children
    to wait for does (reduce). Returns (qseq, n_kick)."""
    root = flows.root[f]
    if flows.kind[f] == 0:
        return _send(flows, edges, links, f, root, c, t, qseq, n_kick)
    base = red.count_ptr[f] + c
    for v in range(edges.n_nodes):
        if v != root and red.count[base + v * flows.n_chunks[f]] == 0:
            qseq, n_kick = _send(flows, edges, links, f, v, c, t, qseq, n_kick)
    return qseq, n_kick


@njit_noalloc
def _arrive(flows, edges, red, links, e, c, t, qseq, n_kick):
    """Chunk c has fully arrived at the far end of edge e: forward it, add it to the partial
    sum (sent on once complete), or, at a reduce's root, release the flows waiting for it."""
    f = edges.flow[e]
    v = edges.dst[e]
    if t > flows.done[f]:
        flows.done[f] = t
    if flows.kind[f] == 0:
        return _send(flows, edges, links, f, v, c, t, qseq, n_kick)
    idx = red.count_ptr[f] + v * flows.n_chunks[f] + c
    red.count[idx] -= 1
    if red.count[idx] != 0:
        return qseq, n_kick
    if v != flows.root[f]:
        return _send(flows, edges, links, f, v, c, t, qseq, n_kick)
    if red.member_group[f] < 0:
        return qseq, n_kick
    g = red.member_group[f] + (c if red.member_chunkwise[f] else 0)
    red.group_left[g] -= 1
    if red.group_left[g] != 0:
        return qseq, n_kick
    for j in range(red.dep_ptr[g], red.dep_ptr[g + 1]):
        f2 = red.dep_flow[j]
        c_lo = red.dep_chunk[j]
        c_hi = c_lo + 1
        if c_lo < 0:
            c_lo = 0
            c_hi = flows.n_chunks[f2]
        for c2 in range(c_lo, c_hi):
            qseq, n_kick = _release(flows, edges, red, links, f2, c2, t, qseq, n_kick)
    return qseq, n_kick


@njit_noalloc
def _start_sending(flows, edges, links, heap, lk, t, n, seq):
    """Link lk is free at time t: it sends its highest-priority chunk, or goes idle.
    Returns the heap's (size, next event number)."""
    if links.queue_len[lk] == 0:
        links.busy[lk] = False
        return n, seq
    item, tail_in = _queue_pop(links, lk)
    h = item & HMASK
    c = (item >> HBITS) & CMASK
    e = item >> (HBITS + CBITS)
    dur = flows.chunk_bytes[edges.flow[e]] / links.bandwidth[lk]
    end = t + dur
    if tail_in > end:  # cut-through: never ends before the last byte came in
        end = tail_in
    links.busy_time[lk] += dur
    n = _heap_push(heap, n, end, seq, (lk << 2) | KICK, 0.0)
    lat = links.latency[lk]
    if edges.path_ptr[e] + h + 1 < edges.path_ptr[e + 1]:
        ready = (((((e << CBITS) | c) << HBITS) | (h + 1)) << 2) | READY
        n = _heap_push(heap, n, t + lat, seq + 1, ready, end + lat)
    else:
        arrive = (((e << CBITS) | c) << 2) | ARRIVE
        n = _heap_push(heap, n, end + lat, seq + 1, arrive, end + lat)
    return n, seq + 2


@njit_noalloc
def _push_kicks(links, heap, n_kick, t, n, seq):
    """Schedule a kick at time t for each link marked; returns the heap's (size, next number)."""
    for i in range(n_kick):
        n = _heap_push(heap, n, t, seq, (links.kicks[i] << 2) | KICK, 0.0)
        seq += 1
    return n, seq


@njit_noalloc
def release_at_start(flows, edges, red, links, heap, clock):
    """Time 0: every flow that waits for nobody releases its chunks straight into the link
    queues, chunk-major (chunk 0 of every flow first). Sets ``clock``."""
    n_flows = flows.kind.shape[0]
    max_chunks = 0
    for f in range(n_flows):
        if flows.n_chunks[f] > max_chunks:
            max_chunks = flows.n_chunks[f]
    qseq = 0
    n_kick = 0
    for c in range(max_chunks):
        for f in range(n_flows):
            if flows.waits[f] == 0 and c < flows.n_chunks[f]:
                qseq, n_kick = _release(flows, edges, red, links, f, c, 0.0, qseq, n_kick)
    n, seq = _push_kicks(links, heap, n_kick, 0.0, 0, 0)
    clock[PENDING] = n
    clock[EVENT_SEQ] = seq
    clock[QUEUE_SEQ] = qseq
    clock[EVENTS] = 0


@njit_noalloc
def run_events(flows, edges, red, links, heap, clock, control):
    """Serve events in time order until none is left (:data:`FINISHED`), the heap might overflow
    (:data:`NEED_ROOM`: call again with a bigger heap) or ``control[0]`` asks to stop
    (:data:`STOPPED`). Every 65 536 events the count so far is written to ``control[1]``."""
    n = clock[PENDING]
    seq = clock[EVENT_SEQ]
    qseq = clock[QUEUE_SEQ]
    events = clock[EVENTS]
    room = heap.time.shape[0] - links.bandwidth.shape[0] - 8  # one event pushes <= a kick a link
    status = FINISHED
    while n > 0:
        if events & 0xFFFF == 0:  # every 65 536 events (~10 ms): report, obey a stop request
            control[1] = events
            if control[0] != 0:
                status = STOPPED
                break
        if n > room:
            status = NEED_ROOM
            break
        t = heap.time[0]
        item = heap.item[0]
        tail = heap.tail[0]
        n = _heap_pop(heap, n)
        events += 1
        typ = item & 3
        rest = item >> 2
        n_kick = 0
        if typ == READY:
            h = rest & HMASK
            rest >>= HBITS
            n_kick = _enqueue(flows, edges, links, rest >> CBITS, rest & CMASK, h, tail, qseq, 0)
            qseq += 1
        elif typ == KICK:
            n, seq = _start_sending(flows, edges, links, heap, rest, t, n, seq)
        else:
            qseq, n_kick = _arrive(
                flows, edges, red, links, rest >> CBITS, rest & CMASK, t, qseq, 0
            )
        n, seq = _push_kicks(links, heap, n_kick, t, n, seq)
    clock[PENDING] = n
    clock[EVENT_SEQ] = seq
    clock[QUEUE_SEQ] = qseq
    clock[EVENTS] = events
    return status
