"""The walk over LIBSVM/VW files before a Dask fit (``_core.scan_file``, the CLI's walk with
values passed over, dask17): what it finds against an independent full parse, what it reads
when the labels are not needed, and the errors a user gets from a fit on a bad file — a bad
label or index from the walk, a bad value from the learning pass, each at its file, line and
column."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from sketchlearn import OnlineClassifier, OnlineRegressor, _core
from sketchlearn.dask import fit


def libsvm_text(n: int, zero_based: bool, seed: int = 0) -> str:
    """Rows of 1 to 9 features (increasing indices, non-zero values), labels -1/1/3 (3 first
    on a late line), a comment and blank lines here and there."""
    rng = np.random.default_rng(seed)
    lines = []
    first = 0 if zero_based else 1
    for k in range(n):
        idx = np.sort(rng.choice(5000, size=1 + k % 9, replace=False)) + first
        vals = rng.uniform(0.1, 2.0, size=idx.size)
        label = 3 if k == n - 5 else (1 if rng.random() < 0.5 else -1)
        feats = " ".join(f"{i}:{v:.6g}" for i, v in zip(idx, vals))
        extra = {7: "\n", 11: "\n# a comment line\n", 13: " # trailing"}.get(k % 97, "")
        lines.append(f"{label} {feats}{extra}")
    return "\n".join(lines) + "\n"


def full_parse(path: str, zero_based: bool):
    """The scan's fields from scikit-learn's parser: labels, rows, stored features, and the
    first 1000 rows' (rows, stored features, distinct features)."""
    X, y = load_svmlight_file(path, zero_based=zero_based, n_features=6000)
    head = X[:1000]
    first = (head.shape[0], head.nnz, np.unique(head.indices).size)
    return sorted(set(y.tolist())), X.shape[0], X.nnz, first


@pytest.mark.parametrize("zero_based", [False, True])
@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("n", [700, 60_000])
def test_the_walk_finds_what_a_full_parse_finds(tmp_path, zero_based, gz, n):
    """LIBSVM: labels, rows, stored features and the first rows' sample as scikit-learn's
    parser reads them, on one thread and (a plain file over 2 MiB) on two; without the
    labels the same counts."""
    text = libsvm_text(n, zero_based)
    path = tmp_path / ("f.libsvm.gz" if gz else "f.libsvm")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    labels, rows, nnz, first = full_parse(str(path), zero_based)
    for threads in [1, None]:
        got = _core.scan_file(str(path), "auto", zero_based, threads=threads)
        assert got == (labels, rows, nnz, False, first)
        got = _core.scan_file(str(path), "auto", zero_based, labels=False, threads=threads)
        assert got == ([], rows, nnz, False, first)


def test_vw_labels_are_all_read_and_features_only_of_the_first_rows(tmp_path):
    """VW: every label; rows, stored features and the sample of the first 1000 rows only (the
    file cut there gives the same); without the labels a bad label past them is not read."""
    n = 1500
    label = [1, -1, 3]
    lines = [f"{label[k % 3] if k < n - 2 else 7} |a x{k % 31} y:{k % 5 + 1}" for k in range(n)]
    full, head = tmp_path / "f.vw", tmp_path / "head.vw"
    full.write_text("\n".join(lines) + "\n")
    head.write_text("\n".join(lines[:1000]) + "\n")
    got = _core.scan_file(str(full))
    assert got[0] == [-1, 1, 3, 7]
    assert got[1:] == _core.scan_file(str(head))[1:]
    assert got[1:4] == (1000, 2000, True)
    bad = tmp_path / "bad.vw"
    bad.write_text("\n".join(lines + ["x1 |a b"]) + "\n")
    assert _core.scan_file(str(bad), labels=False)[1:] == got[1:]
    with pytest.raises(ValueError, match=rf"bad\.vw:{n + 1}:1: "):
        _core.scan_file(str(bad))


def test_a_bad_value_is_left_to_the_learning_pass(tmp_path):
    """The walk passes over values (the scan before dask17 parsed them and failed here)."""
    path = tmp_path / "v.libsvm"
    path.write_text("1 2:0.5 4:1\n-1 3:junk\n1 5:2\n")
    assert _core.scan_file(str(path)) == ([-1.0, 1.0], 3, 4, False, (3, 4, 4))


def good_files(tmp_path, n=400, files=3):
    """``files`` LIBSVM files of ``n`` rows each (labels ±1); their paths and lines."""
    paths, texts = [], []
    for i in range(files):
        text = libsvm_text(n, False, seed=10 + i).replace("\n3 ", "\n1 ")
        p = tmp_path / f"part{i}.libsvm"
        p.write_text(text)
        paths.append(str(p))
        texts.append(text.splitlines())
    return paths, texts


@pytest.mark.parametrize(
    "bad, column, message",
    [
        ("1 4:1 x:2", 7, 'cannot parse feature index "x"'),
        ("one 4:1", 1, 'cannot parse label "one"'),
        ("1 4:1 9:2x", 9, 'cannot parse value "2x"'),
    ],
)
@pytest.mark.parametrize("classes", [None, [-1, 1]])
def test_a_fit_on_a_bad_file_names_its_line_and_column(
    client, tmp_path, bad, column, message, classes
):
    """A bad label or index is the walk's error (with or without ``classes``: the first file
    is walked for its profile either way; a later one only for its labels, or by its
    learning pass); a bad value is the learning pass's. The user sees the same
    ``file:line:column: what`` whichever reports it."""
    paths, texts = good_files(tmp_path)
    for which, line in [(0, 5), (2, 350)]:
        lines = list(texts[which])
        lines[line - 1] = bad
        with open(paths[which], "w") as f:
            f.write("\n".join(lines) + "\n")
        where = rf"part{which}\.libsvm:{line}:{column}: {message}"
        with pytest.raises(ValueError, match=where):
            fit(OnlineClassifier(), paths, n_features=6000, classes=classes, n_workers=2)
        with open(paths[which], "w") as f:
            f.write("\n".join(texts[which]) + "\n")


def density_files(tmp_path):
    """Two LIBSVM files of 400 rows each over 6000 features: 5 stored features a row in the
    first, 300 in the second (averages 5 and 152.5: on either side of the default's cut
    between the sparse-time and the dense representation at this width)."""
    rng = np.random.default_rng(3)
    paths = []
    for i, width in enumerate([5, 300]):
        lines = []
        for _ in range(400):
            idx = np.sort(rng.choice(6000, size=width, replace=False)) + 1
            feats = " ".join(f"{j}:{v:.3f}" for j, v in zip(idx, rng.uniform(0.1, 2, width)))
            lines.append(f"{1 if rng.random() < 0.5 else -1} {feats}")
        p = tmp_path / f"dense{i}.libsvm"
        p.write_text("\n".join(lines) + "\n")
        paths.append(str(p))
    return paths


def test_given_classes_or_a_regressor_give_the_models_of_a_scan(client, tmp_path):
    """With ``classes`` given the labels are not collected, and a regressor's neither, but
    every LIBSVM file is still walked for its stored features per row, which choose the
    representation as ``train`` chooses it over its whole input: the models are those of a
    fit whose walk found the same classes, also when the first file's rows are far sparser
    than the rest (the average over the first file alone would choose the other
    representation: checked here, so the case tests what it claims)."""
    params = OnlineClassifier()._core_params()
    by_average = {
        a: _core.LinearLearners(params, 6000, [-1, 1], avg_nnz=a).sparse for a in [5.0, 152.5]
    }
    assert by_average[5.0] != by_average[152.5]
    for paths in [good_files(tmp_path)[0], density_files(tmp_path)]:
        found = fit(OnlineClassifier(), paths, n_features=6000, n_workers=2)
        given = fit(OnlineClassifier(), paths, n_features=6000, classes=[-1, 1], n_workers=2)
        assert found.learners_.state_bytes() == given.learners_.state_bytes()
        reg = fit(OnlineRegressor(), paths, n_features=6000, n_workers=2)
        assert reg.learners_.sparse == found.learners_.sparse
    assert reg.learners_.examples_seen == 2 * 400
    assert found.learners_.sparse == by_average[152.5]


@pytest.mark.parametrize("classes", [None, [1, 2, 3]])
@pytest.mark.parametrize("reduction", ["oaa", "softmax"])
def test_hashed_input_chooses_without_the_stored_features_per_row(classes, reduction):
    """VW text's walk counts the stored features of its first rows only: hashed input's
    learners (binary, one-against-all, softmax, regression) are the same whatever that
    average is."""
    from sketchlearn._base import _core as core

    params = OnlineClassifier()._core_params()
    states = {
        core.LinearLearners(
            params, 1 << 16, classes, reduction=reduction, hashed=True, avg_nnz=a
        ).state_bytes()
        for a in [None, 0.5, 30.0, 1e6]
    }
    assert len(states) == 1
    reg = OnlineRegressor()._core_params()
    states = {
        core.LinearLearners(reg, 1 << 16, hashed=True, avg_nnz=a, regression=True).state_bytes()
        for a in [None, 0.5, 1e6]
    }
    assert len(states) == 1


def _profiler_running_during_and_after():
    """In a task: whether the worker's profiler runs while ``_profiler_paused`` holds (after
    its loop has had up to 5 s to stop it) and once it has let go (up to 5 s to restart)."""
    import time

    from distributed import get_worker

    from sketchlearn.dask import _profiler_paused

    pc = get_worker().periodic_callbacks["profile"]
    before = pc.is_running()

    def settled(want: bool) -> bool:
        end = time.monotonic() + 5
        while pc.is_running() != want and time.monotonic() < end:
            time.sleep(0.01)
        return pc.is_running()

    with _profiler_paused():
        during = settled(False)
    return before, during, settled(True)


def test_the_profiler_pauses_during_a_rust_task_and_restarts(client):
    """A one-thread worker's statistical profiler stops while a file task runs its Rust call
    (its samples would all be the same frame) and runs again after (dask18)."""
    w = sorted(client.scheduler_info()["workers"])[0]
    fut = client.submit(_profiler_running_during_and_after, workers=[w], pure=False)
    assert fut.result() == (True, False, True)
    # outside a worker the context does nothing
    from sketchlearn.dask import _profiler_paused

    with _profiler_paused():
        pass
