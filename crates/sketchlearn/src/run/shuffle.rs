//! [`ShuffleBuffer`]: a seeded shuffle of a stream through a buffer of `n` examples (the
//! shuffle buffer of TensorFlow's `Dataset.shuffle` and of River's `stream.shuffle`): the buffer
//! is filled with the first `n` examples; then each example handed on is a uniformly drawn
//! slot of the buffer, refilled with the next example of the stream; at the end the buffer is
//! emptied in random order. Memory is `n` examples whatever the stream's length; a file sorted by
//! label comes out mixed over windows of about `n` examples (a buffer as large as the file is a
//! uniform random permutation). The draws come from `Xoshiro256++` seeded with `seed`, so the
//! order is the same on every run with the same seed.

use crate::Example;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seeded shuffle buffer over an example stream (see the [module](self) documentation).
///
/// ```
/// use sketchlearn::run::ShuffleBuffer;
/// use sketchlearn::Example;
/// let mut rows = (0..10).map(|i| Example { label: i as f64, ..Example::default() });
/// let mut next = |ex: &mut Example| {
///     Ok::<_, std::convert::Infallible>(rows.next().map(|e| *ex = e).is_some())
/// };
/// let mut shuffle = ShuffleBuffer::new(4, 7);
/// let (mut ex, mut labels) = (Example::default(), Vec::new());
/// while shuffle.next(&mut ex, &mut next)? {
///     labels.push(ex.label as u32);
/// }
/// let mut sorted = labels.clone();
/// sorted.sort();
/// assert_eq!(sorted, (0..10).collect::<Vec<_>>()); // every example once
/// assert_ne!(labels, sorted); // in another order
/// # Ok::<(), std::convert::Infallible>(())
/// ```
pub struct ShuffleBuffer {
    buf: Vec<Example>,
    capacity: usize,
    rng: Xoshiro256PlusPlus,
    ended: bool,
}

impl ShuffleBuffer {
    /// A buffer of `capacity ≥ 1` examples, draws seeded by `seed`.
    pub fn new(capacity: usize, seed: u64) -> Self {
        ShuffleBuffer {
            buf: Vec::new(),
            capacity: capacity.max(1),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            ended: false,
        }
    }

    /// The next example of the shuffled stream into `ex`; `Ok(false)` at the end.
    pub fn next<E>(
        &mut self,
        ex: &mut Example,
        inner: &mut impl FnMut(&mut Example) -> Result<bool, E>,
    ) -> Result<bool, E> {
        while !self.ended && self.buf.len() < self.capacity {
            let mut e = Example::default();
            if inner(&mut e)? {
                self.buf.push(e);
            } else {
                self.ended = true;
            }
        }
        if self.buf.is_empty() {
            return Ok(false);
        }
        let j = self.rng.random_range(0..self.buf.len());
        std::mem::swap(ex, &mut self.buf[j]);
        // Refill the slot from the stream (reusing the handed-back example's memory).
        if self.ended || !inner(&mut self.buf[j])? {
            self.ended = true;
            self.buf.swap_remove(j);
        }
        Ok(true)
    }
}
