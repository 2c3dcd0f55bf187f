//! Unit tests of the lazily corrected column store (`columns.rs`).

use super::*;

#[test]
fn initial_rows_orthonormal_including_m_above_d() {
    for (d, m) in [(7, 3), (10, 10), (3, 5), (1, 1), (12, 4)] {
        let v = initial_directions(d, m, 3);
        for a in 0..m {
            for b in 0..m {
                let g: f64 = (0..d).map(|j| v[a * d + j] * v[b * d + j]).sum();
                let want = if a == b && a < d { 1.0 } else { 0.0 };
                assert!((g - want).abs() < 1e-14, "d={d} m={m} ({a},{b}): {g}");
            }
        }
    }
}

#[test]
fn lazy_rebase_equals_eager() {
    let (d, m) = (9, 3);
    let mut c = LazyColumns::new(d, m, Init::Structured { seed: 5 });
    let z0 = initial_directions(d, m, 5);
    // Touch column 2 and modify it; then rebase twice with different matrices.
    c.current(2)[Z + 1] += 0.5;
    let mut eager = z0.clone();
    eager[d + 2] += 0.5;
    let m1 = [1.0, 0.0, 0.0, 0.5, 2.0, 0.0, -1.0, 0.25, 3.0];
    let m2 = [0.5, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0];
    for mat in [m1, m2] {
        c.rebase(Some(&mat), &[0.0; 3]);
        rotate_eager(&mut eager, &mat, d, m);
        c.current(4)[Z] += 1.0;
        eager[4] += 1.0;
    }
    let mut z = vec![0.0; m];
    for j in 0..d {
        c.peek(j, &mut z);
        let slot = c.current(j).to_vec();
        for i in 0..m {
            assert!((z[i] - eager[i * d + j]).abs() < 1e-14);
            assert!((slot[Z + i] - eager[i * d + j]).abs() < 1e-14);
        }
    }
}

#[test]
fn many_rebases_drop_epochs_without_columns() {
    let (d, m) = (5, 2);
    let mut c = LazyColumns::new(d, m, Init::Structured { seed: 1 });
    let mut eager = initial_directions(d, m, 1);
    // Norm-preserving (a rotation), so that thousands of rebases stay in range.
    let mat = [0.6, -0.8, 0.8, 0.6];
    for round in 0..(2 * MAX_EPOCHS + 5) {
        let j = round % d;
        c.current(j)[Z] += 1.0;
        eager[j] += 1.0;
        c.rebase(Some(&mat), &[0.0; 2]);
        rotate_eager(&mut eager, &mat, d, m);
        assert!(c.live_epochs() <= MAX_EPOCHS);
    }
    assert_matches_eager(&c, &eager, d, m);
}

/// Epochs dropped near the front (flushes of the oldest epochs owning the fewest columns), inside
/// and near the back (their only column re-stamped) leave the ring of live epochs in
/// increasing id order, each at the position its id index gives, and every column's value as an
/// eager store has it.
#[test]
fn epochs_dropped_anywhere_stay_ordered_and_found() {
    let (d, m) = (3 * MAX_EPOCHS, 2);
    let mut c = LazyColumns::new(d, m, Init::Structured { seed: 3 });
    let mut eager = initial_directions(d, m, 3);
    let mat = [0.6, -0.8, 0.8, 0.6];
    let (mut flushed, mut dropped_inside) = (false, false);
    for round in 0..(2 * MAX_EPOCHS + 200) {
        // A new column each round (an epoch of one column); every third round the column of
        // an epoch 5 or 40 rounds old is touched again, which drops that epoch.
        let mut touch = vec![round];
        if round % 3 == 0 && round >= 40 {
            touch.push(round - if round % 2 == 0 { 5 } else { 40 });
        }
        let before = c.live_epochs();
        for &j in &touch {
            c.current(j)[Z] += 1.0;
            eager[j] += 1.0;
        }
        dropped_inside |= c.live_epochs() < before;
        let full = c.live_epochs() == MAX_EPOCHS;
        c.rebase(Some(&mat), &[0.0; 2]);
        // A full store gained an epoch and flushed one.
        flushed |= full && c.live_epochs() == MAX_EPOCHS;
        rotate_eager(&mut eager, &mat, d, m);
        assert!(c
            .epochs
            .iter()
            .zip(c.epochs.iter().skip(1))
            .all(|(a, b)| a.id < b.id));
        for (k, e) in c.epochs.iter().enumerate() {
            assert_eq!((c.ids[k], c.epoch_index(e.id)), (e.id, k));
        }
    }
    assert!(
        flushed && dropped_inside,
        "the test must flush epochs and drop others inside"
    );
    assert_matches_eager(&c, &eager, d, m);
}

/// Many columns touched at random between thousands of rebases with random transforms and
/// transfers (so epochs live in closed groups, the open group and flushed ones), against an
/// eager store that applies every rebase to every column at once.
#[test]
fn grouped_lazy_store_equals_eager_with_transfers() {
    let (d, m) = (2500, 3);
    let mut c = LazyColumns::new(d, m, Init::Structured { seed: 9 });
    let mut z = initial_directions(d, m, 9);
    let mut w = vec![0.0; d];
    let mut state = 12345u64;
    let mut rnd = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let rounds = MAX_EPOCHS + 400;
    let mut most_epochs = 0;
    for round in 0..rounds {
        // Touch a few columns (one uniformly, two by a skewed choice: some columns are
        // touched often, most rarely, so old epochs keep a few columns for a long time and
        // the cap on live epochs forces flushes).
        for k in 0..3 {
            let u = rnd();
            let u = if k == 0 { u } else { u * u * u };
            let j = (u * d as f64) as usize % d;
            let delta = rnd() - 0.5;
            let slot = c.current(j);
            slot[W] += delta;
            slot[Z + round % m] += delta;
            w[j] += delta;
            z[(round % m) * d + j] += delta;
        }
        // A near-orthogonal random transform (keeps the scale over thousands of rounds)
        // and a small transfer; every fifth rebase has no transform.
        let theta = rnd() * std::f64::consts::TAU;
        let (cs, sn) = (theta.cos(), theta.sin());
        let mat = [cs, -sn, 0.0, sn, cs, 0.0, 0.1 * rnd(), 0.0, 1.0];
        let b = [
            0.01 * (rnd() - 0.5),
            0.01 * (rnd() - 0.5),
            0.01 * (rnd() - 0.5),
        ];
        let mat = if round % 5 == 0 { None } else { Some(&mat[..]) };
        c.rebase(mat, &b);
        for j in 0..d {
            w[j] += (0..m).map(|i| z[i * d + j] * b[i]).sum::<f64>();
        }
        if let Some(mm) = mat {
            let old = z.clone();
            for j in 0..d {
                for i in 0..m {
                    z[i * d + j] = (0..m).map(|k| mm[i * m + k] * old[k * d + j]).sum();
                }
            }
        }
        assert!(c.live_epochs() <= MAX_EPOCHS);
        most_epochs = most_epochs.max(c.live_epochs());
    }
    assert!(!c.groups.is_empty(), "the test must exercise closed groups");
    assert_eq!(most_epochs, MAX_EPOCHS, "the test must exercise flushes");
    // A model-file round trip keeps the lazy state usable.
    let bytes = postcard::to_allocvec(&c).unwrap();
    let c2: LazyColumns = postcard::from_bytes(&bytes).unwrap();
    for store in [c, c2] {
        let mut got = vec![0.0; m];
        for j in 0..d {
            let wj = store.peek(j, &mut got);
            let scale = 1.0 + w[j].abs();
            assert!(
                (wj - w[j]).abs() <= 1e-9 * scale,
                "w̄ of column {j}: {wj} vs {}",
                w[j]
            );
            for i in 0..m {
                let e = z[i * d + j];
                assert!((got[i] - e).abs() <= 1e-9 * (1.0 + e.abs()), "z[{i},{j}]");
            }
        }
    }
}

#[test]
fn transfer_moves_zb_into_wbar() {
    let (d, m) = (6, 2);
    let mut c = LazyColumns::new(d, m, Init::Structured { seed: 4 });
    let z0 = initial_directions(d, m, 4);
    c.current(1)[W] = 0.5;
    let b = [2.0, -1.0];
    let mat = [1.0, 0.0, 3.0, 1.0];
    c.rebase(Some(&mat), &b);
    let mut z = vec![0.0; m];
    for j in 0..d {
        let w = c.peek(j, &mut z);
        let zj = [z0[j], z0[d + j]];
        let want_w = if j == 1 { 0.5 } else { 0.0 } + zj[0] * b[0] + zj[1] * b[1];
        assert!((w - want_w).abs() < 1e-15, "column {j}");
        assert!((z[0] - zj[0]).abs() < 1e-15);
        assert!((z[1] - (3.0 * zj[0] + zj[1])).abs() < 1e-15);
        let slot = c.current(j).to_vec();
        assert!((slot[W] - want_w).abs() < 1e-15);
    }
    assert_eq!(
        c.live_epochs(),
        0,
        "every column of the old epoch was refreshed"
    );
}

#[test]
fn transposed_pass_equals_row_dot_products_to_the_bit() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(99);
    let mut next = || rng.random_range(-2.0..2.0);
    for m in [1, 3, 4, 5, 9, 10, 11, 19, 20, 21] {
        let t: Vec<f64> = (0..m * m).map(|_| next()).collect();
        let mut e = Epoch {
            id: 1,
            tt: Some(transpose(&t, m)),
            a: vec![0.0; m],
            count: 1,
            members: Vec::new(),
            group: 0,
        };
        let tt = e.tt.clone().unwrap();
        let z0: Vec<f64> = (0..m).map(|_| next()).collect();
        let want: Vec<f64> = (0..m)
            .map(|i| (0..m).map(|k| t[i * m + k] * z0[k]).sum::<f64>())
            .collect();
        let mut z = z0.clone();
        let mut tmp = vec![0.0; m];
        apply(&tt, m, &mut z, &mut tmp);
        for i in 0..m {
            assert_eq!(z[i].to_bits(), want[i].to_bits(), "m = {m}, row {i}");
        }
        // The baseline copy of the specialised sizes too (the dispatch takes AVX2 here).
        if matches!(m, 5 | 10 | 20) {
            let mut z = z0.clone();
            match m {
                5 => apply_fixed::<5>(&tt, &mut z),
                10 => apply_fixed::<10>(&tt, &mut z),
                _ => apply_fixed::<20>(&tt, &mut z),
            }
            for i in 0..m {
                assert_eq!(z[i].to_bits(), want[i].to_bits(), "baseline, m = {m}");
            }
        }
        // A never-touched column (one non-zero) in O(m): the same as the full pass.
        for r in [0, m - 1] {
            let mut full = vec![0.0; m + 2];
            full[Z + r] = 0.75;
            let mut fast = vec![0.0; m + 2];
            e.a = (0..m).map(|_| next()).collect();
            e.apply(&mut full, &mut tmp, m);
            e.apply_initial(r, 0.75, &mut fast, m);
            assert_eq!(full[W], fast[W]);
            assert_eq!(&full[Z..], &fast[Z..]);
        }
    }
}

/// Model files keep an epoch's `T` row-major (the layout of files written before memory held
/// `Tᵀ`), and reading one back gives the same epoch.
#[test]
fn epoch_files_store_t_row_major() {
    #[derive(Serialize, Deserialize)]
    struct Plain {
        id: u32,
        t: Option<Vec<f64>>,
        a: Vec<f64>,
        count: u64,
        members: Vec<u32>,
    }
    let t: Vec<f64> = (0..9).map(|i| i as f64 * 1.5 - 4.0).collect();
    let e = Epoch {
        id: 3,
        tt: Some(transpose(&t, 3)),
        a: vec![1.0, 2.0, 3.0],
        count: 2,
        members: vec![4, 5],
        group: 0,
    };
    let bytes = postcard::to_allocvec(&e).unwrap();
    let plain: Plain = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(plain.t.as_deref(), Some(&t[..]));
    assert_eq!((plain.id, plain.count), (3, 2));
    let back: Epoch = postcard::from_bytes(&postcard::to_allocvec(&plain).unwrap()).unwrap();
    assert_eq!(back.tt, e.tt);
    // Identity epochs stay `None`.
    let id = Epoch { tt: None, ..e };
    let back: Epoch = postcard::from_bytes(&postcard::to_allocvec(&id).unwrap()).unwrap();
    assert!(back.tt.is_none());
}

/// The batched catch-up (`refresh_stale`, four columns at a time) leaves every slot and the
/// whole stored state (epochs, groups, counts, member lists) the same to the bit as bringing
/// the columns up to date one by one, over enough rebases (some with the identity) to close
/// groups and across never-touched, current and stale columns.
#[test]
fn batched_catch_up_equals_one_at_a_time() {
    use rand::{Rng, SeedableRng};
    let (d, m) = (400, 10);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    let mut one = LazyColumns::new(d, m, Init::Structured { seed: 9 });
    let mut batched = one.clone();
    for step in 0..120 {
        let mut idx: Vec<u32> = (0..d as u32).filter(|_| rng.random_bool(0.05)).collect();
        if step % 7 == 0 {
            idx.push(idx.first().copied().unwrap_or(0)); // a repeated index
        }
        for &j in &idx {
            one.current(j as usize);
        }
        batched.refresh_stale::<10>(&idx);
        for &j in &idx {
            let v: f64 = rng.random_range(-1.0..1.0);
            for c in [&mut one, &mut batched] {
                let slot = c.current(j as usize);
                slot[W] += v;
                slot[Z + (j as usize) % m] += 0.5 * v;
            }
        }
        let mat: Option<Vec<f64>> =
            (step % 5 != 0).then(|| (0..m * m).map(|_| rng.random_range(-1.0..1.0)).collect());
        let b: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
        one.rebase(mat.as_deref(), &b);
        batched.rebase(mat.as_deref(), &b);
    }
    assert!(one.live_epochs() > GROUP, "the test should close groups");
    assert_eq!(
        postcard::to_allocvec(&one).unwrap(),
        postcard::to_allocvec(&batched).unwrap()
    );
    let all: Vec<u32> = (0..d as u32).collect();
    for &j in &all {
        one.current(j as usize);
    }
    batched.refresh_stale::<10>(&all);
    for j in 0..d {
        let (a, b) = (one.slot(j).to_vec(), batched.slot(j).to_vec());
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "column {j}"
        );
    }
    assert_eq!(
        postcard::to_allocvec(&one).unwrap(),
        postcard::to_allocvec(&batched).unwrap()
    );
}

/// The catch-up scans the stamps `SCAN` (`columns/batch.rs`) columns at a time before catching
/// them up: rows longer than a scan, with indices repeated inside a scan and across scans (a
/// column caught up in an earlier scan of the same row, or waiting in a batch when its repeat
/// is scanned), leave the same slots and stored state as one column at a time.
#[test]
fn batched_catch_up_of_long_rows_with_repeats_equals_one_at_a_time() {
    use rand::{Rng, SeedableRng};
    let (d, m) = (3000, 10);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(17);
    let mut one = LazyColumns::new(d, m, Init::Structured { seed: 4 });
    let mut batched = one.clone();
    for step in 0..80 {
        let mut idx: Vec<u32> = (0..d as u32).filter(|_| rng.random_bool(0.07)).collect();
        // A repeat in the second scan of a column the first scan left waiting in a batch
        // (position 62 is among the first scan's last stale columns, so its batch of four is
        // not yet caught up when the second scan, positions 64.., reports it again).
        if idx.len() > 65 {
            let j = idx[62];
            idx.insert(65, j);
        }
        // Repeats: the previous index (same scan, same or next batch) at even positions, the
        // row's first index at odd ones (3, 63: the same scan; 65: the next, caught up in the
        // first), and the row's first again at its end.
        for at in [3usize, 60, 63, 64, 65, 130] {
            if at < idx.len() {
                let j = idx[at.saturating_sub(if at % 2 == 0 { 1 } else { 70.min(at) })];
                idx.insert(at, j);
            }
        }
        idx.push(idx[0]);
        assert!(idx.len() > 130, "rows span several scans");
        for &j in &idx {
            one.current(j as usize);
        }
        batched.refresh_stale::<10>(&idx);
        for &j in idx.iter().skip(1).step_by(4) {
            let v: f64 = rng.random_range(-1.0..1.0);
            for c in [&mut one, &mut batched] {
                let slot = c.current(j as usize);
                slot[W] += v;
                slot[Z + (j as usize) % m] -= 0.25 * v;
            }
        }
        let mat: Option<Vec<f64>> =
            (step % 4 != 0).then(|| (0..m * m).map(|_| rng.random_range(-1.0..1.0)).collect());
        let b: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
        one.rebase(mat.as_deref(), &b);
        batched.rebase(mat.as_deref(), &b);
        for j in 0..d {
            let (a, b) = (one.slot(j), batched.slot(j));
            assert!(
                a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "step {step}, column {j}"
            );
        }
    }
    assert!(one.live_epochs() > GROUP, "the test should close groups");
    assert_eq!(
        postcard::to_allocvec(&one).unwrap(),
        postcard::to_allocvec(&batched).unwrap()
    );
}

/// The size-specialised products of a rebase (m = 5, 10, 20) give the generic loop's bits, with
/// zero entries (skipped) among the factors.
#[test]
fn specialised_matmul_matches_the_generic_loop_to_the_bit() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
        if u < 0.2 {
            0.0
        } else {
            (u - 0.6) * 3.0
        }
    };
    for m in [4, 5, 9, 10, 11, 20] {
        for _ in 0..20 {
            let a: Vec<f64> = (0..m * m).map(|_| next()).collect();
            let b: Vec<f64> = (0..m * m).map(|_| next()).collect();
            let mut got = vec![0.0; m * m];
            matmul_into(&a, &b, m, &mut got);
            let mut want = vec![0.0; m * m];
            for i in 0..m {
                for k in 0..m {
                    if a[i * m + k] != 0.0 {
                        for j in 0..m {
                            want[i * m + j] += a[i * m + k] * b[k * m + j];
                        }
                    }
                }
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "m = {m}");
            if m == 10 {
                let mut base = vec![0.0; m * m];
                matmul_fixed_rows(&a, &b, 10, &mut base);
                assert_eq!(bits(&base), bits(&want), "baseline copy");
            }
        }
    }
}

/// `Z ← M·Z` on an eager `m × d` store (row-major), as a rebase with `mat` does lazily.
fn rotate_eager(eager: &mut [f64], mat: &[f64], d: usize, m: usize) {
    let old = eager.to_vec();
    for j in 0..d {
        for i in 0..m {
            eager[i * d + j] = (0..m).map(|k| mat[i * m + k] * old[k * d + j]).sum();
        }
    }
}

/// Every column of the lazy store `c` equals the eager store's, to rounding.
fn assert_matches_eager(c: &LazyColumns, eager: &[f64], d: usize, m: usize) {
    let mut z = vec![0.0; m];
    for j in 0..d {
        c.peek(j, &mut z);
        for i in 0..m {
            let e = eager[i * d + j];
            assert!(
                (z[i] - e).abs() <= 1e-12 * e.abs().max(1.0),
                "{} vs {e}",
                z[i]
            );
        }
    }
}

/// A clone of the store is the same bits, whichever pages hold non-zeros: untouched pages,
/// pages with a single `-0.0` (non-zero bits, so copied), and a page boundary's neighbours.
#[test]
fn aligned_clone_is_the_same_bits_page_by_page() {
    let len = 5 * PAGE + 3;
    for marks in [
        vec![],
        vec![0],
        vec![PAGE - 1, PAGE],
        vec![3 * PAGE + 7],
        vec![len - 1],
        (0..len).step_by(97).collect::<Vec<_>>(),
    ] {
        let mut a = Aligned::zeroed(len);
        for (k, &i) in marks.iter().enumerate() {
            a[i] = if k % 2 == 0 { -0.0 } else { 1.5 + i as f64 };
        }
        let c = a.clone();
        assert_eq!(c.len(), a.len());
        let bits = |s: &[f64]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&c), bits(&a), "marks {marks:?}");
    }
}
