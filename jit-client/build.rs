//! The shared library's SONAME: C programs link against the installed name
//! (`scripts/install-c.sh` installs `libcallgrind_jit.so.MAJOR`, named after
//! the header `callgrind_jit.h`), not cargo's `libjit_client.so`.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcallgrind_jit.so.{major}");
    println!("cargo:rerun-if-changed=build.rs");
}
