//! Test-only builds of this crate, chosen by the environment instead of RUSTFLAGS:
//! `FERROFLAKE_CFG=ferroflake_loom[,ferroflake_loom_mutant]` (the loom models and their
//! mutant, with the `loom` feature) or `FERROFLAKE_CFG=ferroflake_portable` (the build other
//! platforms get). A cfg set here recompiles this crate and its dependents only; one set in
//! RUSTFLAGS recompiles every dependency. Ordinary builds leave the variable unset.

const KNOWN: [&str; 4] = [
    "ferroflake_loom",
    "ferroflake_loom_mutant",
    "ferroflake_loom_mutant_switch",
    "ferroflake_portable",
];

fn main() {
    println!("cargo:rerun-if-env-changed=FERROFLAKE_CFG");
    let wanted = std::env::var("FERROFLAKE_CFG").unwrap_or_default();
    let cfgs: Vec<&str> = wanted
        .split(',')
        .map(str::trim)
        .filter(|cfg| !cfg.is_empty())
        .collect();
    let loom = cfgs.contains(&"ferroflake_loom");
    for cfg in cfgs {
        assert!(
            KNOWN.contains(&cfg),
            "FERROFLAKE_CFG: unknown cfg {cfg:?}; known: {KNOWN:?}"
        );
        assert!(
            !loom || std::env::var_os("CARGO_FEATURE_LOOM").is_some(),
            "FERROFLAKE_CFG=ferroflake_loom needs the `loom` feature"
        );
        // A mutant breaks the generator on purpose: only inside the loom model, whose
        // atomics work nowhere else, so it can never reach a build that issues IDs.
        assert!(
            loom || !cfg.starts_with("ferroflake_loom_mutant"),
            "FERROFLAKE_CFG: {cfg} only together with ferroflake_loom"
        );
        println!("cargo:rustc-cfg={cfg}");
    }
}
