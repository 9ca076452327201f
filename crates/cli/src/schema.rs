//! `pipewright schema`: print the JSON Schema of the pipeline file.

/// Prints the schema; the repository keeps the same text in
/// `schema/pipewright.schema.json`.
pub fn schema() -> u8 {
    print!("{}", pipewright_engine::file::schema::json_schema());
    pipewright_engine::options::exit::OK
}
