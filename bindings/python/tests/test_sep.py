"""``sep=`` (pandas' name) on the package's file methods — ``partial_fit_file`` and
``sketchlearn.dask.fit`` — for a tab- or comma-separated file whose name does not say so
(``data.txt``, ``export.dat``, a ``.csv`` holding tabs), and where the CSV scan's case-twin
warning says each spelling first appears. One validation (``_core.file_format``) over the
library's formats; the library splits the fields and words the hints."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sketchlearn import DataWarning, OnlineClassifier, OnlineRegressor, _core

ALLOWED = r"sep must be ',' or '\\t' \(or None"


def table(n: int, seed: int, multiclass: bool = False) -> tuple[np.ndarray, list, np.ndarray]:
    """Rows of three numbers and a colour (one-hot), their labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    colours = [("red", "green", "blue")[i % 3] for i in range(n)]
    if multiclass:
        y = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    else:
        y = np.where(X @ [1.0, -1.0, 0.5] > 0, "pos", "neg")
    return X, colours, y


def write(path, X, colours, y, sep: str):
    lines = [sep.join(["x0", "x1", "x2", "colour", "label"])]
    for r, c, label in zip(X, colours, y):
        lines.append(sep.join([repr(float(v)) for v in r] + [c, str(label)]))
    path.write_text("\n".join(lines) + "\n")
    return path


def held_out() -> np.ndarray:
    rng = np.random.default_rng(99)
    return np.column_stack([rng.normal(size=(40, 3)), np.eye(3)[np.arange(40) % 3]])


@pytest.mark.parametrize("multiclass", [False, True])
def test_a_tab_file_named_txt_fits_as_its_tsv_and_its_comma_twin(tmp_path, multiclass):
    X, colours, y = table(300, seed=1, multiclass=multiclass)
    txt = write(tmp_path / "data.txt", X, colours, y, "\t")
    tsv = write(tmp_path / "data.tsv", X, colours, y, "\t")
    dat = write(tmp_path / "export.dat", X, colours, y, ",")
    tabs_csv = write(tmp_path / "tabs.csv", X, colours, y, "\t")  # a .csv holding tabs
    fits = {
        "txt": OnlineClassifier().partial_fit_file(txt, sep="\t"),
        "tsv": OnlineClassifier().partial_fit_file(tsv),
        "dat": OnlineClassifier().partial_fit_file(dat, sep=","),
        "tabs.csv": OnlineClassifier().partial_fit_file(tabs_csv, sep="\t"),
        "format=csv": OnlineClassifier().partial_fit_file(txt, format="csv", sep="\t"),
        "format=tsv": OnlineClassifier().partial_fit_file(txt, format="tsv", sep="\t"),
    }
    test = held_out()
    want = fits["tsv"]
    assert want.n_features_in_ == 6 and want.learners_.examples_seen == 300
    for name, est in fits.items():
        np.testing.assert_array_equal(est.classes_, want.classes_, err_msg=name)
        assert np.array_equal(est.predict_proba(test), want.predict_proba(test)), name
        assert np.array_equal(est.coef_, want.coef_), name
    # A second pass: each read through its schema with its separator, still the same bits.
    fits["txt"].partial_fit_file(txt, sep="\t")
    fits["dat"].partial_fit_file(dat, sep=",")
    want.partial_fit_file(tsv)
    assert fits["txt"].learners_.examples_seen == 600
    assert np.array_equal(fits["txt"].predict_proba(test), want.predict_proba(test))
    assert np.array_equal(fits["dat"].predict_proba(test), want.predict_proba(test))
    # A model keeps the columns, not the separator: the tab model learns the comma file.
    fits["tsv"].partial_fit_file(dat, sep=",")
    fits["txt"].partial_fit_file(tsv)
    assert np.array_equal(fits["tsv"].predict_proba(test), fits["txt"].predict_proba(test))


def test_sep_none_keeps_reading_by_the_name(tmp_path):
    X, colours, y = table(60, seed=2)
    tsv = write(tmp_path / "d.tsv", X, colours, y, "\t")
    csv = write(tmp_path / "d.csv", X, colours, y, ",")
    a = OnlineClassifier().partial_fit_file(tsv, sep=None)
    b = OnlineClassifier().partial_fit_file(csv)
    assert np.array_equal(a.coef_, b.coef_)
    # A .txt is LIBSVM by its name, as before: a new estimator asks for n_features.
    txt = write(tmp_path / "d.txt", X, colours, y, "\t")
    with pytest.raises(ValueError, match="n_features must be given"):
        OnlineClassifier().partial_fit_file(txt)
    assert _core.file_format("auto", None) == "auto"
    assert _core.file_format("libsvm", None) == "libsvm"
    assert _core.reads_as_csv("x.tsv.gz", "auto") and not _core.reads_as_csv("x.txt", "auto")
    names = ["x.vw", "x.vw.gz", "x.csv", "x.tsv.gz", "x.txt", "x.libsvm"]
    assert [_core.resolved_format(n) for n in names] == [
        "vw",
        "vw",
        "csv",
        "tsv",
        "libsvm",
        "libsvm",
    ]
    assert _core.resolved_format("x.vw", "libsvm") == "libsvm"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=4))
def test_a_sep_other_than_comma_or_tab_is_refused_naming_the_allowed_values(sep):
    if sep in (",", "\t"):
        assert _core.file_format("auto", sep) == {",": "csv", "\t": "tsv"}[sep]
        return
    with pytest.raises(ValueError, match=ALLOWED) as e:
        _core.file_format("auto", sep)
    assert repr(sep) in str(e.value)  # the value given, as Python writes it


@pytest.mark.parametrize("sep", ["|", ";", "tab", "\\t", " ", ", "])
def test_wrong_seps_and_formats_are_value_errors_before_reading(tmp_path, sep):
    missing = tmp_path / "absent.txt"  # never opened: the option is refused first
    with pytest.raises(ValueError, match=ALLOWED):
        OnlineClassifier().partial_fit_file(missing, sep=sep)
    with pytest.raises(ValueError, match="sep=',' applies to CSV files, but format='vw'"):
        OnlineClassifier().partial_fit_file(missing, format="vw", sep=",")
    with pytest.raises(ValueError, match="format='tsv' is separated by '\\\\t', but sep=','"):
        OnlineRegressor().partial_fit_file(missing, format="tsv", sep=",")
    with pytest.raises(ValueError, match="unknown format 'tab'"):
        OnlineClassifier().partial_fit_file(missing, format="tab")


def test_the_other_separator_names_the_sep_that_reads_it(tmp_path):
    X, colours, y = table(30, seed=3)
    tabs = write(tmp_path / "tabs.csv", X, colours, y, "\t")
    commas = write(tmp_path / "commas.txt", X, colours, y, ",")
    # A .csv holding tabs, read by its name (commas): the scan says sep='\t'.
    with pytest.raises(ValueError) as e:
        OnlineClassifier().partial_fit_file(tabs)
    told = str(e.value)
    assert told.startswith(f"{tabs}:1:1: the first line is one field holding a tab"), told
    assert "(in Python: sep='\\t')" in told, told
    # The same with sep=",", and for a comma file read with sep="\t": sep=',' named.
    with pytest.raises(ValueError, match=r"in Python: sep='\\t'"):
        OnlineClassifier().partial_fit_file(tabs, sep=",")
    with pytest.raises(ValueError, match=r"in Python: sep=','"):
        OnlineClassifier().partial_fit_file(commas, sep="\t")
    # A fitted estimator reading a later file with the wrong separator: the same hint.
    est = OnlineClassifier().partial_fit_file(commas, sep=",")
    with pytest.raises(ValueError, match=r"one field holding a tab.*in Python: sep='\\t'"):
        est.partial_fit_file(tabs)
    assert est.learners_.examples_seen == 30  # nothing learned from the refused file
    est.partial_fit_file(tabs, sep="\t")
    assert est.learners_.examples_seen == 60
    # A later .txt without sep= would be read as LIBSVM by its name: refused before reading,
    # naming the sep= (not a label error at line 1).
    txt = write(tmp_path / "more.txt", X, colours, y, "\t")
    with pytest.raises(ValueError, match=r"fitted on CSV, but this file is read as libsvm"):
        est.partial_fit_file(txt)
    with pytest.raises(ValueError, match=r"give sep=',' or sep='\\t'"):
        est.partial_fit_file(txt, format="vw")
    assert est.learners_.examples_seen == 60
    est.partial_fit_file(txt, sep="\t")
    assert est.learners_.examples_seen == 90


def twin_labels(n: int, at: int) -> np.ndarray:
    y = np.where(np.arange(n) % 3 == 0, "no", "yes")
    y[at] = "Yes"
    return y


def test_the_case_warning_names_the_file_line_and_column_of_each_spelling(tmp_path):
    n = 40
    X, colours, _ = table(n, seed=4)
    y = twin_labels(n, 17)  # "yes" first at row 1 (line 3), "Yes" at row 17 (line 19)
    path = write(tmp_path / "twins.txt", X, colours, y, "\t")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est = OnlineClassifier().partial_fit_file(path, sep="\t")
    told = [str(w.message) for w in record if issubclass(w.category, DataWarning)]
    assert len(told) == 1, told
    column = len("\t".join(repr(float(v)) for v in X[17]) + "\t" + colours[17] + "\t") + 1
    first_column = len("\t".join(repr(float(v)) for v in X[1]) + "\t" + colours[1] + "\t") + 1
    assert told[0].startswith(
        f"{path}:19:{column}: the labels yes (first at {path}:3:{first_column}) and Yes "
        f"(first at {path}:19:{column}) in column 'label' differ only by case"
    ), told[0]
    assert record[0].filename == __file__  # at the user's line
    np.testing.assert_array_equal(est.classes_, ["Yes", "no", "yes"])
    # Later files are read through the schema: no second warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        est.partial_fit_file(path, sep="\t")
    # A regressor is not told (its labels must be numbers anyway): no case warning here.
    reg_path = write(tmp_path / "reg.txt", X, colours, X[:, 0], "\t")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        OnlineRegressor().partial_fit_file(reg_path, sep="\t")


def parts(tmp_path, X, colours, y, per: int, sep: str, suffix: str) -> list[str]:
    out = []
    for k, lo in enumerate(range(0, len(y), per)):
        hi = lo + per
        out.append(str(write(tmp_path / f"p{k}{suffix}", X[lo:hi], colours[lo:hi], y[lo:hi], sep)))
    return out


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**16), per=st.sampled_from([30, 60, 120]))
def test_dask_reads_every_part_with_the_given_sep(client, tmp_path_factory, seed, per):
    from sketchlearn.dask import fit

    tmp_path = tmp_path_factory.mktemp("parts")
    X, colours, y = table(240, seed=seed)
    txts = parts(tmp_path, X, colours, y, per, "\t", ".txt")
    tsvs = parts(tmp_path, X, colours, y, per, "\t", ".tsv")
    dats = parts(tmp_path, X, colours, y, per, ",", ".dat")
    a = fit(OnlineClassifier(), txts, n_workers=2, sep="\t")
    b = fit(OnlineClassifier(), tsvs, n_workers=2)
    c = fit(OnlineClassifier(), dats, n_workers=2, sep=",")
    test = held_out()
    assert a.n_features_in_ == b.n_features_in_ == c.n_features_in_ == 6
    assert np.array_equal(a.predict_proba(test), b.predict_proba(test))  # bit for bit
    assert np.array_equal(c.predict_proba(test), b.predict_proba(test))
    assert a.learners_.examples_seen == 240


def test_dask_refuses_a_wrong_sep_and_names_the_fix_of_a_mismatched_one(client, tmp_path):
    from sketchlearn.dask import fit

    X, colours, y = table(80, seed=5)
    dats = parts(tmp_path, X, colours, y, 40, ",", ".dat")
    with pytest.raises(ValueError, match=ALLOWED):
        fit(OnlineClassifier(), dats, sep="|")
    with pytest.raises(ValueError, match=r"in Python: sep=','"):
        fit(OnlineClassifier(), dats, sep="\t")
    # A later part holding tabs where the first holds commas: named at that part's line 1.
    mixed = dats[:1] + parts(tmp_path, X[40:], colours[40:], y[40:], 40, "\t", ".tabs")
    with pytest.raises(ValueError, match=rf"{mixed[1]}:1:.*in Python: sep='\\t'"):
        fit(OnlineClassifier(), mixed, sep=",")


def test_dask_warns_once_of_case_twins_where_each_first_appears(client, tmp_path):
    from sketchlearn.dask import fit

    n, per = 120, 30
    X, colours, _ = table(n, seed=6)
    y = twin_labels(n, 70)  # "Yes" at row 70: the third part's row 10, its line 12
    paths = parts(tmp_path, X, colours, y, per, "\t", ".txt")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = fit(OnlineClassifier(), paths, n_workers=2, blocks_per_task=1, sep="\t")
    told = [str(w.message) for w in record if issubclass(w.category, DataWarning)]
    assert len(told) == 1, told
    assert told[0].startswith(f"{paths[2]}:12:"), told[0]
    assert f"yes (first at {paths[0]}:3:" in told[0], told[0]
    assert f"Yes (first at {paths[2]}:12:" in told[0], told[0]
    assert model.learners_.examples_seen == n
