//! Where a node is defined and used, its renaming, the file's outline and
//! what a place is about (hover).
