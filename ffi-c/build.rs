//! Writes include/ferroflake.h with cbindgen, only when FERROFLAKE_WRITE_HEADER=1, so
//! ordinary builds never touch the committed header. scripts/test-c.sh sets the variable
//! and then fails on `git diff --exit-code -- include/`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=FERROFLAKE_WRITE_HEADER");
    if std::env::var("FERROFLAKE_WRITE_HEADER").as_deref() != Ok("1") {
        return;
    }
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let header = crate_dir.join("../include/ferroflake.h");
    for input in ["src", "cbindgen.toml", "build.rs"] {
        println!("cargo:rerun-if-changed={}", crate_dir.join(input).display());
    }
    // Also regenerate when someone edits the header by hand.
    println!("cargo:rerun-if-changed={}", header.display());

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi-c/cbindgen.toml parses");
    config.after_includes = Some(version_macros());
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen understands ffi-c/src");
    // write_to_file leaves the file (and its mtime) alone when nothing changed.
    bindings.write_to_file(&header);
}

/// The version macros, from Cargo.toml's version (the workspace version).
fn version_macros() -> String {
    let var = |name: &str| std::env::var(name).expect("set by cargo");
    format!(
        "\n/* The version of this header; ferroflake_version() gives the library's. */\n\
         #define FERROFLAKE_VERSION \"{}\"\n\
         #define FERROFLAKE_VERSION_MAJOR {}\n\
         #define FERROFLAKE_VERSION_MINOR {}\n\
         #define FERROFLAKE_VERSION_PATCH {}\n",
        var("CARGO_PKG_VERSION"),
        var("CARGO_PKG_VERSION_MAJOR"),
        var("CARGO_PKG_VERSION_MINOR"),
        var("CARGO_PKG_VERSION_PATCH"),
    )
}
