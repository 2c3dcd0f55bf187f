"""The package's warnings about the data (``sketchlearn.DataWarning``), as ``sketchlearn
train`` warns of the same data: classes that differ only by case (the library's rule through
``_core.case_twins``, and the label error's case note), and a CSV column of numbers with other
values among them (the library's scan, once a fit) — through ``fit``/``partial_fit``,
``partial_fit_file`` on a CSV file and ``sketchlearn.dask`` from CSV files."""

from __future__ import annotations

import gzip
import re
import subprocess
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sketchlearn
from sketchlearn import DataWarning, OnlineClassifier, OnlineRegressor, _core


def data_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, DataWarning)]


def rows(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 3))


# -- classes that differ only by case -----------------------------------------------------------


def test_fit_warns_once_of_labels_that_differ_only_by_case():
    assert issubclass(DataWarning, UserWarning)
    y = np.array(["no", "yes", "no", "Yes", "yes", "YES", "no", "yes"])
    with pytest.warns(DataWarning) as record:
        est = OnlineClassifier().fit(rows(len(y)), y)
    told = data_warnings(record)
    assert len(told) == 1, told
    # The first pair in the order they first appear, with the rows where they first do.
    assert told[0].startswith(
        "the labels yes (first at row 1) and Yes (first at row 3) differ only by case: they "
        "are learned as two classes"
    ), told[0]
    assert record[0].filename == __file__  # at the user's line
    np.testing.assert_array_equal(est.classes_, ["YES", "Yes", "no", "yes"])
    # Labels whose case differs nowhere, and numbers, are not warned of.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        OnlineClassifier().fit(rows(4), ["no", "yes", "maybe", "yes"])
        OnlineClassifier().fit(rows(4), [0, 1, 1, 0])
        OnlineClassifier().fit(rows(4), np.array([2.0, 4.0, 4.0, 2.0]))


def test_partial_fit_warns_of_its_classes_on_the_first_call_only():
    X = rows(4)
    est = OnlineClassifier()
    with pytest.warns(DataWarning, match=r"the labels No and no in classes= differ only by case"):
        est.partial_fit(X, ["no", "yes", "No", "no"], classes=["no", "yes", "No"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        est.partial_fit(X, ["no", "yes", "No", "no"])


def test_an_unknown_label_that_differs_from_a_class_only_by_case_is_named():
    est = OnlineClassifier().fit(rows(4), ["no", "yes", "no", "yes"])
    with pytest.raises(ValueError) as e:
        est.partial_fit(rows(3), ["no", "yes", "Yes"])
    assert str(e.value).startswith(
        "row 2: label Yes is not one of the classes no,yes: Yes and yes differ only by case, "
        "and labels are compared exactly (the classes are fixed by the first fit"
    ), e.value
    # Another label gets no such note.
    with pytest.raises(ValueError) as e:
        est.partial_fit(rows(3), ["no", "maybe", "yes"])
    assert str(e.value).startswith(
        "row 1: label maybe is not one of the classes no,yes (the classes"
    ), e.value


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="aAbB1", min_size=1, max_size=3), min_size=1, max_size=8))
def test_the_binding_applies_the_librarys_rule(labels):
    """``_core.case_twins`` (the library's ``ClassScan::case_twins`` over
    ``differ_only_by_case``) finds a pair exactly when two distinct labels are equal ignoring
    case (ASCII here: Python's and Rust's lower cases agree), and gives the first pair in the
    order of first appearance."""
    distinct = list(dict.fromkeys(labels))
    got = _core.case_twins(distinct, list(range(len(distinct))))
    expected = None
    seen: dict[str, tuple[str, int]] = {}
    for row, label in enumerate(distinct):
        key = label.lower()
        if key in seen:
            expected = (seen[key], (label, row))
            break
        seen[key] = (label, row)
    assert got == expected


def test_the_warning_names_the_pair_the_cli_names(cli, tmp_path):
    """The same labels in the same order: ``sketchlearn train`` and ``fit`` warn of the same
    two spellings, seen first at the same place (the CLI's line is the row's plus 2: the
    header and 1-based lines)."""
    y = ["b", "a", "A", "B", "a", "b", "A", "a"]
    X = rows(len(y), seed=3)
    path = tmp_path / "case.csv"
    lines = ["x0,x1,x2,label"] + [f"{a},{b},{c},{label}" for (a, b, c), label in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    run = subprocess.run(
        [str(cli), "train", "--quiet", "--multiclass", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    cli_pair = re.search(
        r"the labels (\S+) \(first at line (\d+)\) and (\S+) \(first at line (\d+)\)", run.stderr
    )
    assert cli_pair is not None, run.stderr
    with pytest.warns(DataWarning) as record:
        OnlineClassifier().fit(X, y)
    mine = re.search(
        r"the labels (\S+) \(first at row (\d+)\) and (\S+) \(first at row (\d+)\)",
        data_warnings(record)[0],
    )
    assert (mine[1], mine[3]) == (cli_pair[1], cli_pair[3]) == ("a", "A")
    assert (int(mine[2]) + 2, int(mine[4]) + 2) == (int(cli_pair[2]), int(cli_pair[4]))


# -- CSV files: the mixed-column warning, the case warning, TSV ---------------------------------


def write_csv(path, X, y, sep=",", size=None):
    """``X``'s columns ``x0..``, an optional ``size`` column, and ``label``; numbers written
    with ``repr`` (exact)."""
    head = [f"x{j}" for j in range(X.shape[1])] + (["size"] if size is not None else [])
    lines = [sep.join(head + ["label"])]
    for i, (r, label) in enumerate(zip(X, y)):
        cells = [repr(float(v)) for v in r] + ([str(size[i])] if size is not None else [])
        lines.append(sep.join(cells + [str(label)]))
    path.write_text("\n".join(lines) + "\n")
    return path


def sizes(n: int, stray_at: int | None) -> list:
    """A column of numbers with ``XL`` at ``stray_at``: 1 other value in ``n`` (under the
    99 % of a refusal for ``n < 100``), so a warning."""
    return ["XL" if i == stray_at else i % 7 for i in range(n)]


def test_partial_fit_file_on_a_csv_file_warns_of_a_mixed_column_as_the_cli(cli, tmp_path):
    n = 60
    X = rows(n, seed=1)
    y = np.where(X[:, 0] > 0, "yes", "no")
    path = write_csv(tmp_path / "mixed.csv", X, y, size=sizes(n, 17))
    run = subprocess.run(
        [str(cli), "train", "--quiet", str(path)], capture_output=True, text=True, check=True
    )
    cli_told = [line[len("warning: ") :] for line in run.stderr.splitlines() if "'size'" in line]
    assert len(cli_told) == 1, run.stderr
    with pytest.warns(DataWarning) as record:
        est = OnlineClassifier().partial_fit_file(path)
    assert data_warnings(record) == cli_told
    assert "column 'size' is read as strings (one-hot)" in cli_told[0]
    assert "59 of its 60 values are numbers and 1 is not" in cli_told[0]
    assert f"{path}:19:" in cli_told[0]  # line 19: the header, then row 17
    np.testing.assert_array_equal(est.classes_, ["no", "yes"])
    assert est.learners_.examples_seen == n
    # A later file is read through the schema: no scan, no second warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        est.partial_fit_file(path)
    assert est.learners_.examples_seen == 2 * n


def test_partial_fit_file_on_a_csv_file_scans_it_as_train_does(tmp_path):
    n = 40
    X = rows(n, seed=2)
    y = np.where(X[:, 1] > 0, "Yes", "no")
    y[5] = "yes"
    path = write_csv(tmp_path / "labels.csv", X, y)
    # Each spelling named where it first appears: yes at row 5, the file's line 7.
    where = r"\S*labels\.csv:(\d+):\d+"
    told = rf"^{where}: the labels Yes \(first at {where}\) and yes \(first at {where}\) in column"
    with pytest.warns(DataWarning, match=told) as record:
        est = OnlineClassifier().partial_fit_file(path)
    lines = re.match(told, data_warnings(record)[0]).groups()
    assert lines == ("7", str(int(np.argmax(y == "Yes")) + 2), "7"), lines
    np.testing.assert_array_equal(est.classes_, ["Yes", "no", "yes"])
    assert est.n_features_in_ == 3
    # Options as the CLI's: the label by position, a column ignored; a regressor.
    target = X @ [1.0, 2.0, 3.0]
    reg_path = write_csv(tmp_path / "reg.csv", X, target)
    reg = OnlineRegressor().partial_fit_file(reg_path, label_column=3, ignore_columns=["x2"])
    assert reg.n_features_in_ == 2
    # Errors: a dimension that is not the columns', CSV options after the scan, no label.
    with pytest.raises(ValueError, match=r"n_features=7, but .*labels.csv's columns give 3"):
        OnlineClassifier().partial_fit_file(path, n_features=7)
    with pytest.raises(ValueError, match="apply to the first call on a CSV file"):
        reg.partial_fit_file(reg_path, label_column=3)
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text(reg_path.read_text().replace(",label\n", ",target\n", 1))
    with pytest.raises(ValueError, match="no label column"):
        OnlineClassifier().partial_fit_file(unlabelled)


@pytest.mark.parametrize("multiclass", [False, True])
def test_a_tsv_file_fits_and_predicts_as_its_csv_twin(tmp_path, multiclass):
    n = 300
    X = rows(n, seed=4)
    if multiclass:
        y = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    else:
        y = np.where(X @ [1.0, -1.0, 0.5] > 0, 1, 0)
    size = [("S", "M", "L")[i % 3] for i in range(n)]
    csv = write_csv(tmp_path / "twin.csv", X, y, size=size)
    tsv = write_csv(tmp_path / "twin.tsv", X, y, sep="\t", size=size)
    assert "\t" in tsv.read_text() and "," not in tsv.read_text()
    a = OnlineClassifier().partial_fit_file(csv)
    b = OnlineClassifier().partial_fit_file(tsv)
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.n_features_in_ == b.n_features_in_ == 3 + 3  # x0..x2, size one-hot
    test = np.column_stack([rows(50, seed=5), np.eye(3)[np.arange(50) % 3]])
    assert np.array_equal(a.predict_proba(test), b.predict_proba(test))  # bit for bit
    assert np.array_equal(a.coef_, b.coef_)
    # Compressed, the same (the name looked through its .gz).
    gz = tmp_path / "twin.tsv.gz"
    gz.write_bytes(gzip.compress(tsv.read_bytes()))
    c = OnlineClassifier().partial_fit_file(gz)
    assert np.array_equal(a.predict_proba(test), c.predict_proba(test))
    # A second pass reads each twin through its schema: still the same bits.
    a.partial_fit_file(csv)
    b.partial_fit_file(tsv)
    assert np.array_equal(a.predict_proba(test), b.predict_proba(test))


def test_dask_warns_once_a_fit_of_a_mixed_column_and_of_case_twins(client, tmp_path):
    """Four CSV files, the stray size in the third and a ``Yes`` beside ``yes`` in the second:
    one warning each for the fit, however many files and tasks."""
    from sketchlearn.dask import fit

    n, per = 80, 20
    X = rows(n, seed=6)
    y = np.where(X[:, 0] > 0, "yes", "no")
    y[30] = "Yes"
    size = sizes(n, 45)
    paths = []
    for k in range(n // per):
        lo = k * per
        part = slice(lo, lo + per)
        paths.append(str(write_csv(tmp_path / f"part{k}.csv", X[part], y[part], size=size[part])))
    with pytest.warns(DataWarning) as record:
        model = fit(OnlineClassifier(), paths, n_workers=2, blocks_per_task=1)
    told = data_warnings(record)
    assert len(told) == 2, told
    mixed = [t for t in told if "'size'" in t]
    assert len(mixed) == 1 and mixed[0].startswith(f"{paths[2]}: column 'size' is read as"), told
    assert "79 of its 80 values are numbers and 1 is not" in mixed[0]
    assert f"{paths[2]}:7:" in mixed[0]  # row 45 is the third file's 6th: line 7
    # Each spelling where it first appears: Yes is row 30, the second file's 11th row: line 12.
    case = [t for t in told if "differ only by case" in t]
    assert len(case) == 1 and case[0].startswith(f"{paths[1]}:12:"), told
    assert f"yes (first at {paths[0]}:" in case[0] and f"Yes (first at {paths[1]}:12:" in case[0]
    assert record[0].filename == __file__
    assert not hasattr(model, "_data_warnings_in_fit")
    assert model.learners_.examples_seen == n


def test_dask_fits_tsv_files_as_their_csv_twins(client, tmp_path):
    from sketchlearn.dask import fit

    n, per = 240, 60
    X = rows(n, seed=7)
    y = np.where(X @ [1.0, 0.5, -1.0] > 0, "pos", "neg")
    csvs, tsvs = [], []
    for k in range(n // per):
        lo = k * per
        csvs.append(str(write_csv(tmp_path / f"p{k}.csv", X[lo : lo + per], y[lo : lo + per])))
        tsvs.append(
            str(write_csv(tmp_path / f"p{k}.tsv", X[lo : lo + per], y[lo : lo + per], sep="\t"))
        )
    a = fit(OnlineClassifier(), csvs, n_workers=2)
    b = fit(OnlineClassifier(), tsvs, n_workers=2)
    np.testing.assert_array_equal(b.classes_, ["neg", "pos"])
    test = rows(50, seed=8)
    assert np.array_equal(a.predict_proba(test), b.predict_proba(test))  # bit for bit
    # And as the single stream of the plain estimator over the same files.
    single = OnlineClassifier().partial_fit_file(tsvs[0])
    assert single.n_features_in_ == b.n_features_in_ == 3


def test_data_warning_is_exported():
    assert "DataWarning" in sketchlearn.__all__
    assert sketchlearn.DataWarning is DataWarning
