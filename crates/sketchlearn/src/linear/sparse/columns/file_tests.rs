//! Unit tests of the column store's model-file form (`columns.rs`, `Stored`): what a save reads
//! and writes, and that a loaded store goes on as the one that was saved.

use super::*;

/// A store of `d` columns (`m = 3`) with `cols` touched in that order, a rebase with a
/// transform and a transfer after every `every` of them.
fn touched_store(d: usize, cols: &[usize], every: usize) -> LazyColumns {
    let mut c = LazyColumns::new(d, 3, Init::Structured { seed: 5 });
    for (k, &j) in cols.iter().enumerate() {
        let slot = c.current(j);
        slot[W] += 0.25 + k as f64;
        slot[Z + k % 3] -= 0.5;
        if k % every == every - 1 {
            let mat = [1.0, 0.1, 0.0, 0.0, 0.9, 0.2, 0.3, 0.0, 1.1];
            c.rebase(Some(&mat), &[0.01, -0.02, 0.03]);
        }
    }
    c
}

/// The columns with a non-zero stamp, by a scan of all `d` slots (the reference).
fn scanned(c: &LazyColumns) -> Vec<u32> {
    let s = c.stride();
    (0..c.dim)
        .filter(|&j| c.data[j * s + STAMP] != 0.0)
        .map(|j| j as u32)
        .collect()
}

/// A pseudo-random order of `n` distinct columns below `d` (not increasing).
fn shuffled(n: usize, d: usize) -> Vec<usize> {
    (0..n).map(|k| (k * 7919 + 13) % d).collect()
}

/// The touched columns come from the epochs' member lists, and equal a scan of every stamp,
/// through rebases, closed groups and flushes (more than `MAX_EPOCHS` rebases), and both with
/// the short list of first touches (`≤ FEW` columns) and without it.
#[test]
fn touched_columns_from_members_equal_a_scan_of_the_stamps() {
    for (n, every) in [(40, 1), (FEW + 300, 1), (3 * MAX_EPOCHS, 2)] {
        let d = 9973;
        let mut cols = shuffled(n, d);
        // Touch most columns again later (re-stamped: listed in older epochs too).
        cols.extend(shuffled(n, d).iter().step_by(3));
        let c = touched_store(d, &cols, every);
        assert!(c.rebases() > 0);
        assert_eq!(c.touched_columns(), scanned(&c), "n = {n}");
        assert_eq!(c.touched.is_some(), n <= FEW, "n = {n}");
        let back: LazyColumns = postcard::from_bytes(&postcard::to_allocvec(&c).unwrap()).unwrap();
        assert_eq!(back.touched_columns(), scanned(&back), "n = {n}, loaded");
    }
}

/// A save never reads a column that was not touched: garbage written into untouched slots
/// leaves the file's bytes unchanged (so its cost is the touched columns, not `d`).
#[test]
fn a_save_reads_only_the_touched_columns() {
    for n in [30, FEW + 100] {
        let d = 20011;
        let mut c = touched_store(d, &shuffled(n, d), 4);
        let bytes = postcard::to_allocvec(&c).unwrap();
        let touched = scanned(&c);
        let s = c.stride();
        let mut poisoned = 0;
        for j in (0..d).filter(|j| touched.binary_search(&(*j as u32)).is_err()) {
            c.data[j * s..(j + 1) * s].fill(f64::NAN);
            poisoned += 1;
        }
        assert!(poisoned > d / 2);
        assert_eq!(postcard::to_allocvec(&c).unwrap(), bytes, "n = {n}");
    }
}

/// A loaded store keeps the order in which columns were first touched (the order the exact
/// Gram matrix sums in), and after the same steps its Gram matrix and file equal, to the bit,
/// those of the store that was never saved.
#[test]
fn a_loaded_store_sums_in_the_order_of_first_touch() {
    let d = 5003;
    let first = shuffled(200, d);
    let mut live = touched_store(d, &first, 7);
    let mut back: LazyColumns =
        postcard::from_bytes(&postcard::to_allocvec(&live).unwrap()).unwrap();
    let order: Vec<u32> = first.iter().map(|&j| j as u32).collect();
    assert_eq!(back.touched.as_deref(), Some(&order[..]));
    let more: Vec<usize> = (0..150).map(|k| (k * 104_729 + 1) % d).collect();
    for (k, &j) in more.iter().enumerate() {
        for c in [&mut live, &mut back] {
            c.current(j)[Z + k % 3] += 0.125 * k as f64;
            if k % 5 == 0 {
                c.rebase(
                    Some(&[1.0, 0.0, 0.2, 0.1, 1.0, 0.0, 0.0, 0.3, 0.8]),
                    &[0.1, 0.0, -0.1],
                );
            }
        }
        let (a, b) = (live.exact_gram(FEW).unwrap(), back.exact_gram(FEW).unwrap());
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b), "step {k}");
    }
    assert_eq!(
        postcard::to_allocvec(&live).unwrap(),
        postcard::to_allocvec(&back).unwrap()
    );
}

/// A file listing a column twice, or storing a column that was never touched (stamp 0), is
/// refused.
#[test]
fn files_with_repeated_or_untouched_columns_are_refused() {
    let c = touched_store(1009, &[5, 2, 9], 2);
    let good: Stored = postcard::from_bytes(&postcard::to_allocvec(&c).unwrap()).unwrap();
    let load =
        |st: &Stored| postcard::from_bytes::<LazyColumns>(&postcard::to_allocvec(st).unwrap());
    assert!(load(&good).is_ok());
    let s = c.stride();
    let mut twice: Stored = postcard::from_bytes(&postcard::to_allocvec(&c).unwrap()).unwrap();
    twice.touched.push(twice.touched[0]);
    twice.slots.extend_from_within(..s);
    assert!(load(&twice).is_err(), "a column stored twice");
    let mut unstamped: Stored = postcard::from_bytes(&postcard::to_allocvec(&c).unwrap()).unwrap();
    unstamped.touched.push(7);
    let mut slot = vec![0.0; s];
    slot[W] = 1.0;
    unstamped.slots.extend_from_slice(&slot);
    assert!(load(&unstamped).is_err(), "a stored column stamped 0");
}
