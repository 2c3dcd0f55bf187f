"""Training on Dask: :func:`fit` learns any :class:`~sketchlearn.OnlineClassifier` or
:class:`~sketchlearn.OnlineRegressor` from a ``dask.array``, a ``dask.dataframe`` or a list of
LIBSVM/VW/CSV files, and :func:`sketch` computes a Frequent Directions sketch of a
``dask.array`` block by block.

Training runs in rounds (iterative parameter mixing, McDonald et al. 2010): in each round every
worker learns its next blocks (by default all of its share: one round) starting from the
current global model, the learned states are
tree-reduced with :meth:`~sketchlearn.OnlineClassifier.merge` (weights averaged by examples,
squared-gradient sums added, sketches merged by FD's merge, each over the round's common base)
and the result is the next global model (a fit of one round of one or two tasks — the default
on one or two workers — is finished on the client: the tasks send their deltas and the client
rebuilds them in parallel and merges them, as Spark's ``treeAggregate`` combines its last level
on the driver; the same merge, the same bytes, two hops fewer). A merge
is a pure function of the round's outputs, so when a worker dies Dask recomputes its task and the
result is the same as without the failure. A mixture member retired in every task of a round (the
default's slow starters, on a long enough shard) is left out of that round's deltas and merges,
for each class of a one-against-all model too: a retired member is never evaluated nor learned
again, so the predictions are the same bits (``_forgotten``).
The result is an ordinary fitted estimator.

>>> from dask.distributed import Client
>>> import dask.array as da
>>> from sketchlearn import OnlineClassifier
>>> from sketchlearn.dask import fit
>>> client = Client(processes=False)  # doctest: +SKIP
>>> X = da.random.random((10_000, 20), chunks=2_000)  # doctest: +SKIP
>>> model = fit(OnlineClassifier(), X, (X[:, 0] > 0.5).astype(int))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import copy
import pickle
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import clone

from sketchlearn import _core
from sketchlearn._csv_files import csv_scan, file_format, is_csv
from sketchlearn._data_warnings import case_warning, warn_data
from sketchlearn._diverged import warn_divergence
from sketchlearn._refused import warn_refused_count
from sketchlearn._validation import check_numeric_columns
from sketchlearn.sketch import FrequentDirections

__all__ = ["fit", "sketch"]


def _client(client):
    if client is not None:
        return client
    from distributed import get_client

    return get_client()


# Every task and block of one call gets a key of its own (``pure=False``): with Dask's default
# content-derived keys, two fits on the same data share keys, and a key released by the
# previous fit (its futures dropped) while the next one re-creates it can be forgotten under
# the new future (``FutureCancelledError: already forgotten``; dask/distributed#4612, #3703).
# Nothing is scattered either: scattered data has no lineage, so a worker killed while holding
# the only copy (the other one still restarting) cancelled every task depending on it (``lost
# dependencies``). Both seen with back-to-back fits and killed workers at load 13; with
# unique keys and every input a task, a lost result is always recomputed.


def _submit(client, fn, *args):
    return client.submit(fn, *args, pure=False)


def _compute_blocks(client, blocks: list) -> list:
    """Futures of the delayed ``blocks`` under keys of this call alone."""
    from dask import delayed

    return client.compute([delayed(np.asarray, pure=False)(b) for b in blocks])


# -- blocks -------------------------------------------------------------------------------------


def _is_files(X) -> bool:
    return isinstance(X, (list, tuple)) and all(isinstance(p, str) for p in X)


def _row_blocks(X, y):
    """The row blocks of a dask array or dataframe (and of ``y``) as lists of delayed
    objects, one per chunk of rows."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame):
        if isinstance(y, str):
            y, X = X[y], X.drop(columns=[y])
        check_numeric_columns(X)  # here, not in a worker's task
        xs = X.to_dask_array(lengths=True)
        ys = y.to_dask_array(lengths=True) if y is not None else None
        return _row_blocks(xs, ys)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise TypeError(
            "X must be a 2-D dask.array, a dask.dataframe or a list of file paths, "
            f"not {type(X).__name__}"
        )
    X = X.rechunk({1: -1})
    if y is None:
        return list(X.to_delayed().ravel()), None
    y = da.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    y = y.rechunk((X.chunks[0],))
    return list(X.to_delayed().ravel()), list(y.to_delayed().ravel())


# -- the work of one task -----------------------------------------------------------------------


def _worker_threads() -> int | None:
    """Threads of the Dask worker running this task (``None`` outside a worker). A worker of
    one thread owns one core: its tasks learn on one thread (no read-ahead thread, no second
    thread for the mixture's members), so that ``n`` such workers use ``n`` cores — as many
    as Dask was told."""
    try:
        from distributed import get_worker

        return get_worker().state.nthreads
    except (ImportError, ValueError, AttributeError):
        return None


@contextlib.contextmanager
def _profiler_paused():
    """Pauses the statistical profiler of the Dask worker of one thread running this task
    (``distributed.worker.profile``: every 10 ms its event loop takes every thread's Python
    stack) while the task runs one Rust call with the GIL released, and restarts it after: each
    sample of such a task is the same frame, so the profile loses nothing, and the samples cost
    the worker's event loop ~21 ms of CPU a second (docs/results/dask.md, dask18) — on a
    machine whose every core runs a task, CPU taken from the learning. Only in a worker of one
    thread (another thread's tasks keep their profile), only when the profiler was running (a
    worker configured without it is left as it is); outside a worker, nothing."""
    pc = worker = None
    try:
        from distributed import get_worker

        worker = get_worker()
        if worker.state.nthreads == 1:
            pc = worker.periodic_callbacks.get("profile")
    except (ImportError, ValueError, AttributeError):
        pass
    if pc is None or not pc.is_running():
        yield
        return
    worker.loop.add_callback(pc.stop)  # a tornado callback: stopped on its own loop
    try:
        yield
    finally:
        # Started only if stopped: tornado's PeriodicCallback.start has no guard, and a second
        # start (two pauses overlapping) would sample twice as often ever after.
        worker.loop.add_callback(_start_if_stopped, pc)


def _start_if_stopped(pc) -> None:
    """Restarts a paused profiler on its worker's loop unless it already runs."""
    if not pc.is_running():
        pc.start()


class _Delta:
    """A state as it moves between workers: the estimator without its learners, and the
    learners' delta against the round's base (``LinearLearners.delta_from``: the features
    learned on since the base). Every worker holds the base, so this is what moves between
    workers instead of the whole state; the state is rebuilt bit for bit (:meth:`state`), so
    the merge sees the same inputs as without deltas."""

    __slots__ = ("shell", "delta")

    def __init__(self, est, base):
        self.delta = est.learners_.delta_from(base.learners_)
        self.shell = copy.copy(est)
        del self.shell.learners_

    def state(self, base):
        """The estimator, rebuilt from ``base`` (the base it was made against)."""
        est = copy.copy(self.shell)
        est.learners_ = type(base.learners_).patched(base.learners_, self.delta)
        return est

    def __reduce_ex__(self, protocol):
        """Pickled with the delta's bytes as an out-of-band buffer under protocol 5 (PEP 574),
        which Dask's transfers use: the ~100 MB delta of a 2^20-feature state is sent from its
        array (``delta_from``'s bytes) as it is, not copied into the pickle stream first
        (0.15–0.2 s of a worker's event loop a copy; docs/results/dask.md, dask23). Other
        protocols, or a pickler without a buffer callback, write the array in the stream."""
        delta = pickle.PickleBuffer(self.delta) if protocol >= 5 else self.delta
        return _delta_back, (self.shell, delta)


def _delta_back(shell, delta) -> _Delta:
    """A :class:`_Delta` unpickled: ``delta`` is the bytes, or an out-of-band buffer holding
    them, kept where it is as a ``uint8`` array (``numpy.frombuffer``: no copy; the core reads
    a delta from either). A copy into ``bytes`` cost the client ~0.1 GB and a memory pass a
    2^20-feature delta, on the fit's last path (docs/results/dask.md, dask57)."""
    out = _Delta.__new__(_Delta)
    out.shell = shell
    out.delta = delta if isinstance(delta, bytes) else np.frombuffer(delta, dtype=np.uint8)
    return out


def _learn_blocks(model, Xs: list, ys, fmt: str, zero_based: bool):
    """One pass over each of the task's blocks in turn from the global ``model`` (left
    untouched: it is shared by every task of the round): the learned estimator, which stays
    on this worker (a merge placed here uses it as it is; :func:`_delta_of` makes what moves
    to another worker). Files are learned into a new state (``learned_files``: one copy of the
    state for all the task's files, not a copy and then one a file). In a worker of one
    thread, on that thread alone."""
    threads = 1 if _worker_threads() == 1 else None
    if ys is None:  # files
        est = copy.copy(model)
        with _profiler_paused():
            est.learners_ = model.learners_.learned_files(Xs, fmt, zero_based, threads=threads)
    else:
        est = copy.deepcopy(model)  # its learners' refused-step count starts at 0
        est._threads, est._warn_refused = threads, False  # the client tells the total
        for X, y in zip(Xs, ys):
            if hasattr(est, "classes_") and not est._regression:
                est.partial_fit(np.asarray(X), np.asarray(y), classes=est.classes_)
            else:
                est.partial_fit(np.asarray(X), np.asarray(y))
        del est._threads, est._warn_refused
    est._refused_in_fit = _refused_in_fit(model) + est.learners_.refused_steps
    est._diverged_in_fit = _diverged_in_fit(model) or est.learners_.divergence
    return est


def _refused_in_fit(est) -> int:
    """The steps refused in the fit's tasks that ``est`` (a task's result, a merge, a round's
    base) has learned from: kept on the estimator (``_refused_in_fit``, which pickles and
    travels with a :class:`_Delta`'s shell; the learners' own counter starts afresh in every
    copy), so that the client tells the fit's total (:func:`_told`); 0 for the initial
    estimator."""
    return getattr(est, "_refused_in_fit", 0)


def _diverged_in_fit(est) -> str | None:
    """The core's divergence text (``LinearLearners.divergence``) of the first of the fit's
    tasks that ``est`` has learned from whose learning diverged, or ``None``: carried beside
    :func:`_refused_in_fit`. A task judges its own rows (its copy of the learners counts from
    the copy on; the progressive metrics do not travel), by the rule a plain ``fit`` applies
    to all of them; rows of ``±1e300`` make every task that learns one diverge."""
    return getattr(est, "_diverged_in_fit", None)


def _count_merged(out, a, b, base) -> None:
    """Sets ``out``'s refused steps to those of ``a`` merged with ``b`` over ``base``: each
    counts ``base``'s once, as the merge counts its examples (:func:`_refused_in_fit`); and
    its divergence to ``a``'s, else ``b``'s (both hold ``base``'s; :func:`_diverged_in_fit`)."""
    out._refused_in_fit = _refused_in_fit(a) + _refused_in_fit(b) - _refused_in_fit(base)
    out._diverged_in_fit = _diverged_in_fit(a) or _diverged_in_fit(b)


def _told(est):
    """The fitted ``est`` returned to the user, after warning (``RuntimeWarning``, as
    ``partial_fit`` does) of the steps its tasks refused over every worker and round, and of
    a divergence, with the text a plain ``fit`` gives, once (both only in the tasks before);
    and (``DataWarning``) of what the initial estimator found in the data
    (:func:`_data_told`): once for the fit, not once a block. The counts and texts leave the
    estimator."""
    warn_data(est.__dict__.pop("_data_warnings_in_fit", ()), stacklevel=3)
    warn_refused_count(est.__dict__.pop("_refused_in_fit", 0), stacklevel=3)
    warn_divergence(est.__dict__.pop("_diverged_in_fit", None), stacklevel=3)
    return est


def _delta_of(est, base) -> _Delta:
    """``est`` as a delta against ``base``: what moves to another worker holding ``base``."""
    return _Delta(est, base)


def _merged_state(a, b: _Delta, base):
    """``a`` (a state held on this worker: a task's or a lower merge's result) merged with
    ``b`` (a delta against ``base``, from another worker): the merged estimator, a new one
    (``a`` is left as it is). ``a`` is not rebuilt from bytes: a state read back from its
    delta is the same state, and merging read-back states equals merging the learned ones
    to the bit (core test ``model_delta::merging_read_back_states_equals_merging_them_in_
    memory``)."""
    return _merged(a, b.state(base), base)


def _merged(a, b, base):
    """The estimator ``a`` merged with the estimator ``b`` over the round's ``base``: a new one
    (``a`` and ``b`` are left as they are)."""
    out = copy.copy(a)
    out.learners_ = a.learners_.merged(b.learners_, base.learners_)
    _count_merged(out, a, b, base)
    return out


def _learned_delta(model, Xs: list, ys, fmt: str, zero_based: bool) -> _Delta:
    """:func:`_learn_blocks`, returned as its delta against ``model`` (the round's base): what a
    task of a fit's only round sends to the client, in the same task (no hop of its own)."""
    return _delta_of(_learn_blocks(model, Xs, ys, fmt, zero_based), model)


#: Whether a fit leaves out of each round's deltas and merges (and so of the client's rebuilds
#: and merge, or of the workers' tree merge) the mixture members retired in every task of the
#: round (:func:`_forgotten`). The tests turn it off to compare with the fit that sends and
#: merges every member.
_FORGET_RETIRED = True


def _retired_members(est) -> frozenset:
    """The mixture members retired in ``est``'s learners (a task's result, read by a task of its
    own: a few bytes back, where its delta is ~200 MB at 2^20 features), as ``(mixture,
    member)`` pairs (``LinearLearners.retired_members``): mixture 0 of a binary or regression
    model, mixture ``c`` for class ``c`` of a one-against-all one (each class a default
    mixture). Empty for learners without a mixture (a single learner, softmax)."""
    return frozenset(est.learners_.retired_members)


def _forgotten(est, base, *retired):
    """``est`` (a task's result, on this worker) with ``base``'s learner put back for the
    members retired in every task of the round (``retired``: each task's
    :func:`_retired_members`) and not already in ``base`` (``LinearLearners.forget_retired``,
    in place: the task's result feeds only the round's merge, and every task reading it —
    its :func:`_retired_members` — has run, since this one waits for all of them).

    *Why the predictions are the same bits.* A member retired in every task of round ``r``
    stays retired in every merge of the round's tree (a merge keeps a member retired only where
    both sides retired it, and here every leaf did), so in the round's result; retirement is
    permanent, so it is retired in round ``r + 1``'s base and in every state learned from it,
    and a retired member is never learned nor evaluated again (``linear/mixture_retirement.rs``,
    "Saved models and merges"). Its state is therefore read by no prediction, no weight, no
    later step, in this round or any later one: the next round's warm start differs from the
    fit that merges it only in that state (the base's merged with itself, where it was the
    tasks' merge), and each later round starts from it with that member retired in its base,
    so there is nothing more to leave out (already retired in ``base``: skipped, its state
    is the base's). A one-against-all model's classes are learned, merged and predicted
    independently, each a mixture, so the same holds class by class
    (``OneVsAll::forget_retired``): a member is left out for a class when it retired for that
    class in every task. A member retired in some tasks only is sent whole: the merge may make
    it learn again, and its states are then read (a test checks the lever leaves it). What
    differs is only that member's saved state and what reads it alone: the verbose line's
    sketch error bound (largest over the members, a retired one's included) and ``inspect``.
    The deltas then hold nothing of it (~half of a 2^20-feature default's delta is the FD-SON
    member retired at ~157,000 rows), and its rebuilds and merges have nothing to do
    (docs/results/dask.md, dask55 and dask56)."""
    forget = frozenset.intersection(*retired) - _retired_members(base) if retired else None
    if forget:
        est.learners_.forget_retired(base.learners_, sorted(forget))
    return est


def _forgetting_delta(est, base, *retired) -> _Delta:
    """:func:`_forgotten`, returned as its delta against ``base``: what a task of a fit finished
    on the client sends (the member left out holds nothing of its own in it)."""
    return _Delta(_forgotten(est, base, *retired), base)


def _merged_on_client(client, deltas: list, base):
    """The fitted estimator of a fit of one round of at most two tasks, finished here: the
    client fetches the round's base (the initial learners, small; fetched while the tasks
    learn) and the tasks' deltas (made in the tasks, sent in parallel), gathers each delta and
    rebuilds its state on a thread of its own (the transfers overlap; the core decodes with
    the GIL released: the
    first task's state is rebuilt while the second still learns or sends, and two rebuilds of
    2^20-feature states overlap on a client whose workers have finished), and merges the
    second into the first, in place (the first is the client's own rebuild: no copy of it) —
    the merge the tree would run on a worker (:func:`_merged_state`), on the same states
    (rebuilt bit for bit), so the same bytes. A merge on a worker adds, on
    the path to the result, the second delta's rebuild there, the merged state's
    serialisation, a second transfer and its decoding here (docs/results/dask.md, dask13);
    the result comes here anyway (as Spark's ``treeAggregate`` combines its last level on
    the driver). Each delta is gathered straight from its worker (``direct``: one hop, where
    through the scheduler it is two; a delta of a 2^20-feature state is ~100 MB, 0.2–0.25 s
    sooner here — docs/results/dask.md, dask15); a result that is no longer there (its worker
    lost) is asked of the scheduler and recomputed, as without ``direct``."""
    from concurrent.futures import ThreadPoolExecutor

    base = base.result()

    def rebuilt(future):  # the delta is freed once rebuilt
        return client.gather(future, direct=True).state(base)

    # Each delta gathered and rebuilt on a thread of its own: the second transfer no longer
    # waits for the first to end (docs/results/dask.md, dask57).
    with ThreadPoolExecutor(len(deltas)) as pool:
        est, *others = pool.map(rebuilt, deltas)
    while others:  # each input freed once merged: the peak is the worker merge's
        _merge_into(est, others.pop(0), base)
    return est


def _merge_into(a, b, base) -> None:
    """:func:`_merged` into ``a`` itself, with no copy of it: for ``a`` that nothing else reads
    (the client's own rebuild; a task's result may be read by other tasks, so a merge on a
    worker copies). The same merge, the same bytes; a refused merge raises with ``a``
    unchanged (``LinearLearners.merge_in_place``)."""
    a.learners_.merge_in_place(b.learners_, base.learners_)
    _count_merged(a, a, b, base)


def _applied(base, part: _Delta):
    """The round's merged estimator, rebuilt from its delta on a worker holding ``base``."""
    return part.state(base)


def _submit_on(client, worker, fn, *args):
    """``fn(*args)`` preferably on ``worker`` (where its large argument, the round's base, is
    held); elsewhere when that worker is gone (``allow_other_workers``: a lost worker's tasks
    are recomputed by the others)."""
    if worker is None:  # no worker yet: wherever one comes
        return _submit(client, fn, *args)
    return client.submit(fn, *args, pure=False, workers=[worker], allow_other_workers=True)


def _tree_merge(client, parts: list) -> tuple:
    """Pairwise tree reduction of ``parts`` — ``(future of a learned estimator, (its worker,
    the round's base there))`` — with merge: each merge runs on its left part's worker, on
    that part as it is in memory and the right part's delta (made on the right part's
    worker, the one thing that moves). Returns the root's ``(future of the merged estimator,
    (its worker, the base there))``."""
    while len(parts) > 1:
        nxt = []
        for (a, (w, g)), (b, (wb, gb)) in zip(parts[::2], parts[1::2]):
            delta = _submit_on(client, wb, _delta_of, b, gb)
            nxt.append((_submit_on(client, w, _merged_state, a, delta, g), (w, g)))
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


# -- fit ----------------------------------------------------------------------------------------


def _initial(estimator, n_features: int, classes, profile=(False, None, None), csv=None) -> Any:
    """An unfitted clone with empty learners; ``profile = (hashed, avg_nnz, first_rows)`` of
    file input lets the library choose the sparse-time learners and the default's members as
    ``sketchlearn train`` does (they merge: FD/RFD curvatures). ``csv = (paths, options)``:
    CSV files, scanned here as one input by the Rust reader (``_csv_files.csv_scan``), whose
    schema the learners read every file through; the features and, unless given, the
    classes come from the scan. What to warn of about the data is kept on it
    (:func:`_data_told`)."""
    est = clone(estimator)
    scan = None
    if csv is not None:
        scan, classes = csv_scan(estimator, *csv, classes)
        if n_features is not None and n_features != scan.dim:
            raise ValueError(
                f"n_features={n_features}, but the CSV files' columns give {scan.dim} "
                "features (leave n_features out for CSV files)"
            )
        n_features = scan.dim
    if not estimator._regression:
        est._set_classes(classes)
    hashed, avg_nnz, first_rows = profile
    est._init_learners(n_features, hashed=hashed, avg_nnz=avg_nnz, first_rows=first_rows, csv=scan)
    est._data_warnings_in_fit = _data_told(est, scan)
    return est


def _data_told(est, scan) -> list:
    """What the fit is to warn of about its data (:mod:`sketchlearn._data_warnings`): the CSV
    scan's columns of numbers read as strings, and a classifier's classes that differ only by
    case. Found where the initial estimator is built (a task), kept on it and on every state
    learned from it (as ``_refused_in_fit``), and told on the client by :func:`_told`."""
    told = [] if scan is None else list(scan.warnings)
    if not est._regression:
        # CSV: the scan's, which names where each spelling first appears; else (or given
        # classes the files' labels do not pair) the classes'.
        found = None if scan is None else scan.case_warning
        told.append(found or case_warning(est.classes_.tolist()))
    return [t for t in told if t is not None]


def _scan_group(paths: list, fmt: str, zero_based: bool, labels: bool = True) -> list:
    """The Rust reader's scans of ``paths``, in order, in one task (``_core.scan_file``: the
    CLI's walk, values passed over; the labels when ``labels``; on the worker's one thread
    when it has one): a task a file cost a scheduler round trip each, serially on one worker
    (docs/results/dask.md, dask12: 8 files of a9a or r8 took 40-50 ms of a 0.3-0.6 s fit;
    one task a worker, 10-15 ms)."""
    from sketchlearn import _core

    threads = 1 if _worker_threads() == 1 else None
    with _profiler_paused():
        return [_core.scan_file(p, fmt, zero_based, labels=labels, threads=threads) for p in paths]


def _csv_files(paths: list, fmt: str) -> bool:
    """Whether ``paths`` are CSV files (all of them; a mix with LIBSVM/VW is an error: the
    files are one input, read through one model's format)."""
    csv = [is_csv(p, fmt) for p in paths]
    if any(csv) and not all(csv):
        mixed = paths[csv.index(True)], paths[csv.index(False)]
        raise ValueError(
            f"the files mix CSV ({mixed[0]}) with LIBSVM/VW ({mixed[1]}): one format per fit "
            "(format='csv' reads every file as CSV separated by commas, sep='\\t' by tabs)"
        )
    return all(csv) and bool(paths)


def _is_vw(path: str, fmt: str) -> bool:
    """Whether ``path`` is read as VW text (``format``, else its name: ``.vw``/``.vw.gz``; the
    library's rule, ``_core.resolved_format``)."""
    return _core.resolved_format(path, fmt) == "vw"


def _scan_tasks(client, paths: list, fmt: str, zero_based: bool, labels: bool, workers: list):
    """Futures of the Rust reader's scans of LIBSVM/VW files, one task a worker, each scanning
    a consecutive share of the files: every file when the labels are wanted (the classes are
    found across all files before anything is learned) or the files are LIBSVM (their stored
    features per row, averaged over every file as ``train`` averages over its whole input,
    choose the representation, whether or not ``classes`` is given), else — VW without its
    labels — the first only, read as far as its first rows (hashed input's choice needs no
    more). Not waited for: the initial learners are built from them on the workers
    (:func:`_initial_of_scans`), so that learning starts without a round trip to the client."""
    todo = paths if labels or not _is_vw(paths[0], fmt) else paths[:1]
    share = -(-len(todo) // len(workers))
    groups = [todo[i : i + share] for i in range(0, len(todo), share)]
    return [
        _submit_on(client, w, _scan_group, g, fmt, zero_based, labels)
        for w, g in zip(workers, groups)
    ]


def _scan_summary(groups: list, labels: bool):
    """Classes (``None`` unless ``labels``) and ``(hashed, avg_nnz, first_rows)`` of the scans
    of :func:`_scan_tasks` (``first_rows``: the first file's, the start of the stream)."""
    scans = [s for group in groups for s in group]
    rows, nnz = sum(s[1] for s in scans), sum(s[2] for s in scans)
    profile = (scans[0][3], nnz / rows if rows else None, scans[0][4])
    if not labels:
        return None, profile
    found = np.unique(np.concatenate([np.asarray(s[0], dtype=float) for s in scans]))
    if found.size and np.all(found == np.round(found)):
        found = found.astype(int)
    return found, profile


def _initial_of_scans(estimator, n_features: int, classes, groups: list, width: int):
    """:func:`_initial` of LIBSVM/VW files from their scans (:func:`_scan_tasks`; the classes
    found there unless ``classes`` is given), run as a task on each worker: every worker builds
    the same initial learners (a pure function of the same inputs, so the same bytes) from the
    small scans instead of fetching them from the worker that built them. Refuses an
    unmergeable fit (:func:`_refuse_unmergeable`) before anything is learned."""
    found, profile = _scan_summary(groups, classes is None and not estimator._regression)
    if classes is None and not estimator._regression:
        classes = [-1, 1] if found is None else found
    _refuse_unmergeable(estimator, classes, width)
    return _initial(estimator, n_features, classes, profile)


def _refuse_unmergeable(estimator, classes, width: int) -> None:
    """Refuses, before anything is learned, a fit whose round states cannot be merged: a
    softmax model of more than two classes learned by more than one task a round (the core
    refuses the merge too; here the error comes before the first round's learning)."""
    multiclass = classes is not None and len(classes) > 2
    if width > 1 and multiclass and getattr(estimator, "reduction", None) == "softmax":
        raise NotImplementedError(
            'softmax multiclass models cannot be merged (use reduction="oaa": one-against-'
            "all models merge class by class; or n_workers=1)"
        )


def _held_out_loss(est, holdout) -> float:
    Xh, yh = holdout
    if est._regression:
        return float(np.mean((est.predict(Xh) - yh) ** 2))
    return float(np.mean(est.predict(Xh) != yh))


def fit(
    estimator,
    X,
    y=None,
    *,
    client=None,
    n_features: int | None = None,
    classes: Sequence | None = None,
    format: str = "auto",
    zero_based: bool = False,
    n_workers: int | None = None,
    blocks_per_task: int | None = None,
    label_column: str | int | None = None,
    header: bool | None = None,
    ignore_columns: Sequence = (),
    sep: str | None = None,
    holdout=None,
    verbose: bool = False,
):
    """Trains ``estimator`` (not modified; an unfitted clone is used) on Dask in rounds.

    Parameters
    ----------
    X : dask.array (2-D), dask.dataframe, or list of str
        The rows, in blocks (a dask array's row chunks, a dataframe's partitions, one file per
        block). Files (LIBSVM, VW, CSV, ``.gz`` allowed) are read on the workers by the Rust
        reader: the paths must be readable there.
    y : dask.array, dask.Series, str or None
        Labels (a column name of the dataframe ``X``); ``None`` for files.
    client : distributed.Client, default=None
        The client (``None``: the current one).
    n_features : int, default=None
        Features of LIBSVM/VW file input (LIBSVM: one past the largest index; VW:
        ``2**bits``); CSV files give theirs from their columns.
    classes : sequence, default=None
        A classifier's classes (default: ``np.unique(y)`` computed first; for LIBSVM/VW files
        the labels of all files, scanned on the workers by the Rust reader before learning). More
        than two classes learn a one-against-all model (``reduction="oaa"``; softmax models
        do not merge).
    format, zero_based, sep : see :meth:`~sketchlearn.OnlineClassifier.partial_fit_file`
        (``format="auto"``: ``.csv`` names are CSV, ``.tsv`` names CSV separated by tabs;
        every file must have the same format). ``sep`` (``","`` or ``"\\t"``) reads every
        file as CSV separated by it, whatever its name: the scan and every task read all the
        files with the same separator.
    n_workers : int, default=None
        Tasks learning in parallel in each round (default: the cluster's workers).
    blocks_per_task : int, default=None
        Consecutive blocks each task learns, one after the other, before the round's merge.
        ``None``: one round — each of the ``n_workers`` tasks learns its ``len(blocks) /
        n_workers`` consecutive blocks, and the states are merged once (as VW's AllReduce
        averages once a pass); ``1``: one block a task a round (the most mixing). Fewer blocks
        per task mean more rounds, each with a tree merge and its transfers; the merged sketch
        keeps FD's bound for any split of the rows, only how often the weights are averaged
        changes (iterative parameter mixing, McDonald et al. 2010). The default is the
        fastest schedule measured (docs/results/dask.md, stop 39: 2 workers, 8 or 16 files),
        whose held-out error stayed within one standard error of the single stream's on a9a,
        r8 and the generated stream.
    label_column, header, ignore_columns : CSV files only
        As ``sketchlearn train``'s ``--label-column`` (a name or 0-based position; default:
        the column named ``label``), ``--header``/``--no-header`` (``None``: detected from the
        first file; when it has a header every file must start with the same one) and
        ``--ignore-columns``. Before learning, one worker scans every file with the Rust reader
        into one schema (numeric columns, one-hot categories seen in any file, hashed columns
        of more than 64 values; the classes when not given), and every task reads its files
        through it: a column is the same feature on every worker. Features come from the
        columns (``n_features`` not needed); ``holdout`` rows are in the schema's features.
    holdout : (X, y) numpy arrays, default=None
        Scored after every round in verbose mode (error rate, or mean squared error).
    verbose : bool, default=False
        One line per round: examples learned so far, held-out loss (error rate, or mean
        squared error), the merged curvature sketch's error bound (FD's total shrinkage
        ``Σδ``, largest over the members) and seconds. The round's tasks are shown by Dask's
        own diagnostics (the dashboard, ``distributed.progress`` on the returned futures).

    Returns
    -------
    A fitted estimator of the same class, which predicts, pickles and merges like one fitted
    on a single machine.

    Warns
    -----
    RuntimeWarning
        Once, when the tasks refused steps (rows too large to learn, such as ``1e300``s:
        scored, not learned, as in :meth:`~sketchlearn.OnlineClassifier.partial_fit`), with
        their total over every worker and round. Once, when a task's learning diverged
        (e.g. a default learner on rows of ``1e300``s, which it scores without refusing a
        step), with the text :meth:`~sketchlearn.OnlineClassifier.fit` gives. Each task
        judges its own rows: a fit whose whole loss crosses the line while no task's does
        is not told, and a task of a few rows may be told of its first confident mistakes.
    DataWarning
        Once for the fit (not once a block), as ``sketchlearn train`` warns of the same data:
        when the classes include two names that differ only by case (``yes`` and ``Yes``: two
        classes; from CSV files, with the file, line and column where each first appears), and
        for each CSV column of numbers with other values among them, read as
        strings (the library's scan of all the files).
    """
    format = file_format(format, sep)
    client = _client(client)
    workers = sorted(client.scheduler_info()["workers"]) or [None]
    files = _is_files(X)
    if files and not X:
        raise ValueError("X is an empty list of files: give at least one LIBSVM, VW or CSV file")
    csv = None
    csv_given = label_column is not None or header is not None or len(ignore_columns) > 0
    if files and _csv_files(list(X), format):
        blocks, labels, profile = list(X), None, (False, None, None)
        options = {"format": format, "has_header": header, "label_column": label_column}
        options["ignore_columns"] = list(ignore_columns)
        csv = (blocks, options)
    elif csv_given:
        raise ValueError("label_column, header and ignore_columns apply to CSV files only")
    elif files:
        if n_features is None:
            raise ValueError(
                "LIBSVM and VW files need n_features=: for LIBSVM one past the largest 0-based "
                "feature index (the largest index of a 1-based file; `sketchlearn train --json "
                'FILE` prints it as "dim"), for VW 2**bits; CSV files give theirs from '
                "their columns"
            )
        blocks, labels = list(X), None
        scan_labels = classes is None and not estimator._regression
        scans = _scan_tasks(client, blocks, format, zero_based, scan_labels, workers)
    else:
        blocks, labels = _row_blocks(X, y)
        if labels is None:
            raise ValueError("y is required for array and dataframe input")
        blocks, labels = _compute_blocks(client, blocks), _compute_blocks(client, labels)
        n_features = X.shape[1] if n_features is None else n_features
        if isinstance(y, str):
            n_features -= 1
        if classes is None and not estimator._regression:
            uniques = client.gather([_submit(client, np.unique, lab) for lab in labels])
            classes = np.unique(np.concatenate(uniques))
        profile = (False, None, None)
    width = n_workers or len(workers)
    if blocks_per_task is None:  # one round
        blocks_per_task = max(1, -(-len(blocks) // width))
    if blocks_per_task < 1:
        raise ValueError(f"blocks_per_task must be at least 1, got {blocks_per_task}")
    # The round's base on each worker: the tasks sent there learn from it, and the round's
    # merged delta is applied to it there, so that only deltas move between workers. Tasks,
    # not scattered data (see `_submit`): recomputed if every copy is lost.
    if files and csv is None:  # built on each worker from the scans, with no client hop
        bases = {
            w: _submit_on(
                client, w, _initial_of_scans, estimator, n_features, classes, scans, width
            )
            for w in workers
        }
    else:
        _refuse_unmergeable(estimator, classes, width)
        model = _submit(client, _initial, estimator, n_features, classes, profile, csv)
        bases = {w: model for w in workers}
    per_round = width * blocks_per_task
    # A fit of one round of at most two tasks (the default schedule on 1 or 2 workers) is
    # finished on the client from the tasks' deltas (`_merged_on_client`).
    on_client = len(blocks) <= per_round and len(blocks) <= 2 * blocks_per_task
    forget = _FORGET_RETIRED
    learn = _learned_delta if on_client and not forget else _learn_blocks
    for r, start in enumerate(range(0, len(blocks), per_round)):
        t0 = time.perf_counter()
        parts = []
        for i, lo in enumerate(range(start, min(start + per_round, len(blocks)), blocks_per_task)):
            hi = min(lo + blocks_per_task, len(blocks), start + per_round)
            task_labels = None if labels is None else labels[lo:hi]
            w = workers[i % len(workers)]
            args = (bases[w], blocks[lo:hi], task_labels, format, zero_based)
            parts.append((_submit_on(client, w, learn, *args), (w, bases[w])))
        if forget:
            # Each task's state once every task's retired members are known (a few bytes each):
            # the members retired in all of them are left out (`_forgotten`; on the client's
            # path, in the task that makes the delta). The first task's delta, or the tree's
            # first merges, now wait for the round's last learning, where they overlapped it;
            # what this saves (that member's deltas, rebuilds and merges) comes after.
            retired = [_submit_on(client, w, _retired_members, f) for f, (w, _) in parts]
            step = _forgetting_delta if on_client else _forgotten
            parts = [(_submit_on(client, w, step, f, g, *retired), (w, g)) for f, (w, g) in parts]
        if on_client:
            model = _merged_on_client(client, [f for f, _ in parts], parts[0][1][1])
            _progress(r, model, holdout, t0, verbose)
            return _told(model)
        model, (root, root_base) = _tree_merge(client, parts)
        if start + per_round < len(blocks):  # the next round's base on every worker
            others = [w for w in bases if w != root]
            if others:  # the root's worker holds the merged state; the others its delta
                delta = _submit_on(client, root, _delta_of, model, root_base)
                bases = {w: _submit_on(client, w, _applied, bases[w], delta) for w in others}
            else:
                bases = {}
            bases[root] = model
        if verbose:
            _progress(r, model.result(), holdout, t0, verbose)
    return _told(model.result())


def _progress(r: int, est, holdout, t0: float, verbose: bool) -> None:
    """Round ``r``'s line in verbose mode: examples so far, held-out loss, the merged sketch's
    error bound, seconds since ``t0``."""
    if not verbose:
        return
    seen = est.learners_.examples_seen
    held = "" if holdout is None else f"  held-out {_held_out_loss(est, holdout):.5f}"
    bound = est.learners_.sketch_error_bound()
    sketch_err = "" if bound is None else f"  merged-sketch error <= {bound:.4g}"
    print(
        f"round {r + 1}: {seen} examples{held}{sketch_err}  ({time.perf_counter() - t0:.2f} s)",
        flush=True,
    )


# -- sketch -------------------------------------------------------------------------------------


def _sketch_block(block, size: int, method: str, alpha0: float):
    return FrequentDirections(size, method, alpha0=alpha0).fit(np.asarray(block))


def _merge_sketches(a, b):
    out = copy.deepcopy(a)
    return out.merge(b)


def sketch(
    X,
    size: int = 10,
    *,
    method: str = "fd-fast",
    alpha0: float = 0.0,
    client=None,
    verbose: bool = False,
) -> FrequentDirections:
    """A Frequent Directions sketch of ``XᵀX`` computed block by block on the workers and
    tree-merged (FD is a mergeable summary: the result keeps FD's bound
    ``‖XᵀX − BᵀB‖₂ ≤ ‖X − X_k‖²_F/(m − k)`` for the whole matrix). ``X``: a 2-D dask array
    (or dataframe); ``method``: ``fd``, ``fd-fast``, ``rfd``, ``rfd-fast``. Returns a fitted
    :class:`~sketchlearn.FrequentDirections` (``components_``, ``singular_values_``,
    ``transform``). ``verbose``: one line with the blocks, rows and the error bound (total
    shrinkage)."""
    if method not in ("fd", "fd-fast", "rfd", "rfd-fast"):
        raise ValueError(f"method must be an FD or RFD sketch to merge, got {method!r}")
    client = _client(client)
    blocks, _ = _row_blocks(X, None)
    blocks = _compute_blocks(client, blocks)
    parts = [_submit(client, _sketch_block, b, size, method, alpha0) for b in blocks]
    while len(parts) > 1:
        nxt = [_submit(client, _merge_sketches, a, b) for a, b in zip(parts[::2], parts[1::2])]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    out = parts[0].result()
    if verbose:
        print(
            f"sketch: {len(blocks)} blocks, {out.n_samples_seen_} rows, "
            f"error bound {out.state_.total_shrinkage:.6g}",
            flush=True,
        )
    return out
