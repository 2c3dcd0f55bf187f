"""What a new user meets with real data (stop 47's audit): a DataFrame with text columns is
refused naming the columns and the remedy (on the client for Dask, before any task), and a
step refused on a row too large to learn (±1e300) gives the CLI's warning instead of nothing."""

from __future__ import annotations

import re
import subprocess
import warnings

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from sketchlearn import FMRegressor, OnlineClassifier, OnlineRegressor
from sketchlearn.dask import fit
from sketchlearn.river import Classifier as RiverClassifier
from sketchlearn.river import Regressor
from sketchlearn.sketch import FrequentDirections


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "age": rng.normal(size=n),
            "color": rng.choice(["red", "blue"], size=n),
            "size": pd.Categorical(rng.choice(["S", "M", "L"], size=n)),
            "flag": rng.random(n) > 0.5,
            "label": np.arange(n) % 2,
        }
    )


def test_text_columns_are_named_with_the_remedy():
    X = _frame().drop(columns="label")
    y = np.arange(len(X)) % 2
    with pytest.raises(ValueError, match=r"'color' \(\w+\), 'size' \(category\)") as e:
        OnlineClassifier().fit(X, y)
    assert "pd.get_dummies(X, columns=['color', 'size'])" in str(e.value)
    assert "'age'" not in str(e.value) and "'flag'" not in str(e.value)
    clf = OnlineClassifier().fit(X[["age", "flag"]], y)  # numbers and booleans learn
    with pytest.raises(ValueError, match="'color'"):
        clf.predict(X)
    with pytest.raises(ValueError, match="'color'"):
        FrequentDirections(size=2).fit(X)
    # Numbers in an object column (Decimal from read_sql, astype(object)) learn, as in
    # scikit-learn; a text value among them does not.
    from decimal import Decimal

    objects = pd.DataFrame({"a": [Decimal(i) / 4 for i in range(10)], "b": np.arange(10.0)})
    OnlineRegressor().fit(objects.astype({"b": object}), np.arange(10.0))
    objects.loc[3, "a"] = "x"
    with pytest.raises(ValueError, match=r"'a' \(object\)"):
        OnlineRegressor().fit(objects, np.arange(10.0))
    # A category of numbers is numbers, as before.
    numeric = pd.DataFrame({"a": pd.Categorical([1.0, 2.0] * 5), "b": np.arange(10.0)})
    OnlineRegressor().fit(numeric, np.arange(10.0))


def test_dask_frame_with_text_columns_is_refused_on_the_client(client):
    frame = dd.from_pandas(_frame(), npartitions=2)
    before = len(client.who_has())
    with pytest.raises(ValueError, match=r"'color' \(\w+\), 'size' \(category\)"):
        fit(OnlineClassifier(), frame, "label", client=client)
    assert len(client.who_has()) == before  # nothing was computed


def test_refused_steps_warn_once_as_the_cli_does():
    """A single learner (``sketchlearn train --algo adagrad`` says ``warning: 1 steps refused``)
    refuses the step of a row of 1e300s; the estimators said nothing. (The default mixture counts
    its members' refused steps: the next test.)"""
    X = np.ones((20, 3))
    X[5] = 1e300
    y = np.arange(20) % 2
    for algo in ("adagrad", "ogd"):
        with pytest.warns(RuntimeWarning, match=r"^1 step refused .* scale the features") as got:
            OnlineClassifier(algo=algo).fit(X, y)
        assert len(_refused_records(got)) == 1  # (and the pass diverged: the loss is 1e298)
    with pytest.warns(RuntimeWarning, match="refused") as got:
        OnlineRegressor(algo="adagrad").partial_fit(X, np.arange(20.0))
    assert got[0].filename == __file__  # the warning points at the user's line
    river = Regressor(algo="ogd")
    river.learn_one({"a": 1.0}, 1.0)
    with pytest.warns(RuntimeWarning, match="1 step refused"):
        river.learn_one({"a": 1e300, "b": -1e300}, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OnlineClassifier(algo="adagrad").fit(np.ones((20, 3)), y)  # ordinary rows: no warning


def test_the_default_mixture_tells_the_steps_its_members_refused(cli, tmp_path):
    """On rows of ±1e300·u whose label is the sign of the first feature, every member of the
    default refuses every step and the mixture goes on: nothing is learned (every prediction
    0.5). The mixture absorbed the refusals, so ``sketchlearn train`` said only that the
    learner "has not learned; the features may not predict the labels", and the estimators
    and River models said nothing of the refusals. Now the count is the members' refused
    steps, as ``--algo adagrad`` on the same rows tells its own."""
    rng = np.random.default_rng(0)
    U = rng.uniform(-1, 1, size=(100, 3))
    y = np.where(U[:, 0] > 0, 1, -1)
    X = U * 1e300
    path = tmp_path / "huge.libsvm"
    rows = [f"{t} 1:{a!r} 2:{b!r} 3:{c!r}" for (a, b, c), t in zip(X.tolist(), y)]
    path.write_text("\n".join(rows) + "\n")
    run = subprocess.run([str(cli), "train", str(path)], capture_output=True, text=True)
    assert re.search(r"warning: \d+ steps refused", run.stderr), run.stderr
    for model, learn in [
        (OnlineClassifier(), lambda m: m.fit(X, y)),
        (OnlineClassifier(), lambda m: m.partial_fit_file(path, n_features=3)),
        (OnlineRegressor(), lambda m: m.fit(X, U[:, 0])),
        (RiverClassifier(), lambda m: _learn_dicts(m, X, y)),
    ]:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            learn(model)
        assert _refused_records(got), (model, [str(w.message) for w in got])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ordinary rows: no member refuses
        OnlineClassifier().fit(U, y)
        _learn_dicts(RiverClassifier(), U, y)


def _learn_dicts(model, X, y):
    """``learn_one`` of each row of ``X`` as a dict, with the label ``y > 0``."""
    for x, t in zip(X, y):
        model.learn_one(dict(enumerate(x)), t > 0)


def _refused_records(got) -> list:
    return [w for w in got if issubclass(w.category, RuntimeWarning) and "refused" in str(w)]


def test_refused_steps_warn_once_per_call_over_every_pass():
    """Several passes refuse the 1e300 row's step once each: one warning for the call, with
    the total (it came once per pass before; counted with every warning shown)."""
    X = np.ones((20, 3))
    X[5] = 1e300
    y = np.arange(20) % 2
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        OnlineClassifier(algo="adagrad", n_passes=3).fit(X, y)
    records = _refused_records(got)
    assert [str(w.message).split(" (")[0] for w in records] == ["3 steps refused"]
    assert records[0].filename == __file__  # still the user's line
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        FMRegressor(n_passes=3).fit(X, np.arange(20.0))
    records = _refused_records(got)
    assert len(records) == 1 and str(records[0].message).startswith("3 steps refused"), records
    assert records[0].filename == __file__


def test_dask_fit_tells_the_client_the_refused_steps_of_every_task(client, tmp_path):
    """The tasks' refused steps reach the client as one warning with their total, over both
    workers and every round (they were only in the workers' logs): the default schedule (one
    round, merged on the client), two rounds of one block a task (merged on the workers),
    and files (the Rust reader's runs)."""
    X, y = np.ones((400, 3)), np.arange(400) % 2
    X[[5, 150, 250, 399]] = 1e300  # blocks of 100: blocks 0, 1, 2 and 3
    Xd, yd = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    for schedule in ({}, {"blocks_per_task": 1}):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            model = fit(OnlineClassifier(algo="adagrad"), Xd, yd, client=client, **schedule)
        records = _refused_records(got)
        assert [str(w.message).split(" (")[0] for w in records] == ["4 steps refused"], schedule
        assert records[0].filename == __file__
        assert not hasattr(model, "_refused_in_fit")  # told, not kept
    paths = []
    for i in range(2):
        paths.append(tmp_path / f"part{i}.libsvm")
        rows = [f"{2 * (j % 2) - 1} 1:{1e300 if j == 3 else 1.0} 2:1 3:1" for j in range(20)]
        paths[-1].write_text("\n".join(rows) + "\n")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fit(OnlineClassifier(algo="adagrad"), [str(p) for p in paths], n_features=3, client=client)
    assert [str(w.message).split(" (")[0] for w in _refused_records(got)] == ["2 steps refused"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ordinary rows: no warning
        fit(
            OnlineClassifier(algo="adagrad"), da.from_array(np.ones((200, 3)), chunks=100), yd[:200]
        )


def _huge_rows(path):
    """200 rows of three features, every seventh with ±1e300 in the first two (what a new
    user's raw file may hold), written as LIBSVM to ``path``; ``(X, y)``."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    X[5::7, :2] *= 1e300
    y = np.where(np.arange(200) % 2 == 1, 1, -1)
    rows = [
        f"{y[i]} " + " ".join(f"{j + 1}:{float(X[i, j])!r}" for j in range(3)) for i in range(200)
    ]
    path.write_text("\n".join(rows) + "\n")
    return X, y


def _loss_told(text: str) -> float:
    """The progressive loss in a divergence warning's text."""
    return float(re.search(r"pass diverged \(progressive loss ([^)]+)\)", text).group(1))


def _diverged_records(got) -> list:
    return [w for w in got if issubclass(w.category, RuntimeWarning) and "diverged" in str(w)]


def test_the_default_mixture_tells_a_diverged_fit_as_the_cli_does(cli, tmp_path):
    """The estimators said nothing where ``sketchlearn train`` warns that the default's pass
    diverged on ±1e300 rows: now one ``RuntimeWarning``, the
    core's text with the same progressive loss as the CLI's, naming the rows' scale and
    ``StandardScaler``, at the user's line."""
    X, y = _huge_rows(tmp_path / "huge.libsvm")
    run = subprocess.run(
        [str(cli), "train", str(tmp_path / "huge.libsvm")], capture_output=True, text=True
    )
    cli_loss = _loss_told(run.stderr)
    for passes in (1, 2):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            model = OnlineClassifier(n_passes=passes).fit(X, y)
        records = _diverged_records(got)
        assert len(records) == 1, [str(w.message) for w in got]
        text = str(records[0].message)
        assert "too large for rows of this scale" in text and "StandardScaler" in text
        assert _loss_told(text) == pytest.approx(model.progressive_score_["loss"], rel=1e-3)
        assert records[0].filename == __file__
    # A stream of partial_fit calls: told at the call that diverged, not at every later one.
    est = OnlineRegressor()
    with pytest.warns(RuntimeWarning, match="diverged"):
        est.partial_fit(X, y.astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(X[:5], y[:5].astype(float))
        # Ordinary rows, default learners: no warning.
        OnlineClassifier().fit(np.ones((200, 3)) * (np.arange(200) % 2)[:, None], y)
        OnlineRegressor().fit(X[:5], np.arange(5.0))
    with pytest.warns(RuntimeWarning, match="diverged") as got:  # a file: the CLI's run
        OnlineClassifier().partial_fit_file(tmp_path / "huge.libsvm", n_features=3)
    assert _loss_told(str(got[0].message)) == cli_loss


def test_dask_fit_tells_the_client_a_divergence_once(client, tmp_path):
    """A Dask fit whose learning diverges tells the client, once, with the text a plain ``fit``
    gives (it said nothing: the tasks' metrics stay on the workers): the default on ±1e300
    rows in one task, a constant-step OGD far too large in two tasks merged on the client
    and in two rounds merged on the workers (four blocks, one a task), the default with the
    ±1e300 rows in its second task only, and LIBSVM files (the Rust reader's runs); an
    ordinary fit gives no warning. The default on ±1e300 rows also runs in two tasks: that
    merge failed ("matrix contains a non-finite value") while its FD members' Gram matrices
    overflowed; they now refuse such rows."""
    X, y = _huge_rows(tmp_path / "huge.libsvm")
    rng = np.random.default_rng(1)
    Xo = 10 * rng.uniform(-1, 1, size=(200, 3))
    yd = da.from_array(y, chunks=100)
    cases = [
        (OnlineClassifier(), da.from_array(X, chunks=200), da.from_array(y, chunks=200), {}),
        (OnlineClassifier(), da.from_array(X, chunks=100), yd, {}),
        (OnlineClassifier(algo="ogd", learning_rate=1e6), da.from_array(Xo, chunks=100), yd, {}),
    ]
    # Four blocks of 50 rows on two workers, one a task: two rounds, merged on the workers.
    Xq, yq = da.from_array(Xo, chunks=50), da.from_array(y, chunks=50)
    cases.append((cases[2][0], Xq, yq, {"blocks_per_task": 1}))
    # The ±1e300 rows only in the second of two tasks: the merge keeps the second's text.
    Xb = np.where(np.arange(200)[:, None] < 100, np.clip(X, -1, 1), X)
    cases.append((OnlineClassifier(), da.from_array(Xb, chunks=100), yd, {}))
    for est, Xd, yd_, schedule in cases:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            model = fit(est, Xd, yd_, client=client, **schedule)
        records = _diverged_records(got)
        assert len(records) == 1, (est, schedule, [str(w.message) for w in got])
        text = str(records[0].message)
        assert "too large for rows of this scale" in text and "StandardScaler" in text, text
        assert records[0].filename == __file__
        assert not hasattr(model, "_diverged_in_fit")  # told, not kept
    paths = [str(tmp_path / "huge.libsvm")] * 2
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fit(OnlineClassifier(algo="adagrad"), paths, n_features=3, client=client)
    assert len(_diverged_records(got)) == 1, [str(w.message) for w in got]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ordinary rows, the default learner: no warning
        ones = np.ones((200, 3)) * (np.arange(200) % 2)[:, None]
        fit(OnlineClassifier(), da.from_array(ones, chunks=100), yd, client=client)
