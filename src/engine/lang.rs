//! The two languages a pipeline file speaks: `${…}` [`reference`]s in
//! arguments and [`jq`] programs in `transform`, `when` and `expect`.
//! Both are compiled at load and evaluated at run time.

pub mod jq;
pub mod reference;
pub mod snapshot;
