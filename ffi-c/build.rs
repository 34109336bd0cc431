//! Names the shared library for C users (its soname), and writes include/ferroflake.h with
//! cbindgen, but only when FERROFLAKE_WRITE_HEADER=1, so ordinary builds never touch the
//! committed header. scripts/test-c.sh sets the variable and then fails on
//! `git diff --exit-code -- include/`.

use std::path::PathBuf;

fn main() {
    set_soname();
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
    // The version macros, then the config's own lines (the struct initialiser macros).
    config.after_includes = Some(version_macros() + config.after_includes.as_deref().unwrap_or(""));
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
         #define FERROFLAKE_VERSION_PATCH {}\n\
         \n/* Leases and segments exist on Unix-like systems only (they need flock and user ids). */\n\
         #if !defined(FERROFLAKE_UNIX) && (defined(__unix__) || defined(__APPLE__))\n\
         #define FERROFLAKE_UNIX 1\n\
         #endif\n",
        var("CARGO_PKG_VERSION"),
        var("CARGO_PKG_VERSION_MAJOR"),
        var("CARGO_PKG_VERSION_MINOR"),
        var("CARGO_PKG_VERSION_PATCH"),
    )
}

/// C programs link `-lferroflake` (ffi-c/build-c.sh installs the library under that name),
/// so the shared library records that name, versioned: 0.x releases may break at each minor.
fn set_soname() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let var = |name: &str| std::env::var(name).expect("set by cargo");
    let (major, minor) = (
        var("CARGO_PKG_VERSION_MAJOR"),
        var("CARGO_PKG_VERSION_MINOR"),
    );
    let soname = if major == "0" {
        format!("libferroflake.so.0.{minor}")
    } else {
        format!("libferroflake.so.{major}")
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}
