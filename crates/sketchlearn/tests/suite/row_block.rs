//! A sparse row indexed `0..n` (dense data written sparsely) takes a contiguous fast path in
//! `Row::dot` and `Row::axpy_into`; it must give exactly the bits of the gather path, which the
//! same row shifted by one index (and the dense vector shifted with it) still takes.

use proptest::prelude::*;
use sketchlearn::Row;

fn finite() -> impl Strategy<Value = f64> {
    -1e3f64..1e3
}

proptest! {
    #[test]
    fn block_row_dot_and_axpy_match_the_gather_path(
        values in prop::collection::vec(finite(), 1..40),
        w in prop::collection::vec(finite(), 40..48),
        pad in finite(),
        scale in finite(),
    ) {
        let n = values.len();
        let block: Vec<u32> = (0..n as u32).collect();
        let shifted: Vec<u32> = (1..=n as u32).collect();
        let mut w1 = vec![pad];
        w1.extend_from_slice(&w);
        let fast = Row::Sparse { indices: &block, values: &values };
        let gather = Row::Sparse { indices: &shifted, values: &values };
        prop_assert_eq!(fast.dot(&w).to_bits(), gather.dot(&w1).to_bits());

        let (mut out, mut out1) = (w.clone(), w1.clone());
        fast.axpy_into(scale, &mut out);
        gather.axpy_into(scale, &mut out1);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&out), bits(&out1[1..]));
        prop_assert_eq!(out1[0].to_bits(), pad.to_bits());
    }

    #[test]
    fn a_block_longer_than_the_vector_ignores_the_excess(
        values in prop::collection::vec(finite(), 5..20),
        scale in finite(),
    ) {
        // Entries beyond the vector are ignored (dot) or dropped (axpy), as for any sparse row.
        let idx: Vec<u32> = (0..values.len() as u32).collect();
        let row = Row::Sparse { indices: &idx, values: &values };
        let w = vec![1.0; 4];
        let expect: f64 = values[..4].iter().sum();
        prop_assert!((row.dot(&w) - expect).abs() <= 1e-9 * (1.0 + expect.abs()));
        let mut out = vec![0.0; 4];
        row.axpy_into(scale, &mut out);
        for (o, v) in out.iter().zip(&values) {
            prop_assert_eq!(o.to_bits(), (scale * v).to_bits());
        }
    }
}
