//! The `interfere` command-line tool.

fn main() {}
