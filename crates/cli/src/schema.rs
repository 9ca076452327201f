//! `pipewright schema`: print the JSON Schema of the pipeline file.

/// Prints the schema; the repository keeps the same text in
/// `schema/pipewright.schema.json`.
pub fn schema() -> u8 {
    print!("{}", crate::engine::file::schema::json_schema());
    crate::engine::options::exit::OK
}
