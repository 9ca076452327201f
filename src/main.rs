//! The `pipewright` binary: parse the command line and hand off.

fn main() -> std::process::ExitCode {
    pipewright_cli::main()
}
