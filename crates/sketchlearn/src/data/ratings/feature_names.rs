//! The names of a fitted [`RatingsEncoder`]'s features, in feature order (see the
//! [encoding](super) of the module documentation): `user=<id>`, `item=<id>`, the MovieLens side
//! features' names (`gender=F`, `genre=Comedy`), then the side columns'
//! ([`SideColumns::feature_names`](crate::data::side_columns::SideColumns::feature_names)).
//! `sketchlearn inspect` shows them beside an FM model's weights.

use super::RatingsEncoder;

impl RatingsEncoder {
    /// The name of each feature, `dim()` of them (see the [module](self) documentation).
    ///
    /// ```
    /// use sketchlearn::data::ratings::{parse_ratings, RatingsEncoder, RatingsOptions};
    /// let table = parse_ratings("1 10 4\n2 11 3\n".as_bytes(), "r", &RatingsOptions::default()).unwrap();
    /// let enc = RatingsEncoder::fit(&table, 0..2, None);
    /// assert_eq!(enc.feature_names(), ["user=1", "user=2", "item=10", "item=11"]);
    /// ```
    pub fn feature_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(self.dim());
        names.extend(id_names("user", &self.users, self.n_users));
        names.extend(id_names("item", &self.items, self.n_items));
        if let Some(side) = &self.side {
            names.extend(side.users.names.iter().cloned());
            names.extend(side.items.names.iter().cloned());
        }
        if let Some(columns) = &self.side_columns {
            names.extend(columns.feature_names());
        }
        names
    }
}

/// `what=<id>` for the ids of `map` (id → index below `n`), in index order.
fn id_names(what: &str, map: &std::collections::HashMap<String, u32>, n: usize) -> Vec<String> {
    let mut names = vec![String::new(); n];
    for (id, &k) in map {
        if let Some(slot) = names.get_mut(k as usize) {
            *slot = format!("{what}={id}");
        }
    }
    names
}
