//! The two languages a pipeline file speaks: `${…}` [`reference`](mod@reference)s in
//! arguments and [`jq`] programs in `transform`, `when` and `expect`.
//! Both are compiled at load and evaluated at run time, against a
//! [`snapshot`] of what a node can see.

pub mod jq;
pub mod reference;
pub mod snapshot;
