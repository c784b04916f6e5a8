//! Links the bare-metal image with `link.ld` (loaded at 1 MiB, one entry
//! for PVH and multiboot2). Host builds of the workspace build only the
//! stub `main` and need no linker script.

fn main() {
    println!("cargo:rerun-if-changed=link.ld");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        println!("cargo:rustc-link-arg-bins=-T{dir}/link.ld");
    }
}
