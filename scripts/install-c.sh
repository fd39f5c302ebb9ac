#!/usr/bin/env bash
# Installs jit-client's C library under PREFIX (default /usr/local):
#   include/callgrind_jit.h
#   lib/libcallgrind_jit.so.VERSION, .so.MAJOR (the SONAME) and .so links
#   lib/libcallgrind_jit.a
#   lib/pkgconfig/callgrind-jit.pc (static link flags in Libs.private)
#   lib/libcallgrind_jit_gdb.so (preloaded under Valgrind: names the code
#     JITs register with gdb's JIT interface; `callgrind-jit record` finds it)
# A C JIT then builds with: cc jit.c $(pkg-config --cflags --libs callgrind-jit)
set -euo pipefail
prefix=${1:-/usr/local}
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# A target folder of its own: `cargo rustc` below rebuilds the library with
# other flags, which must not replace files a concurrent build is using.
export CARGO_TARGET_DIR=$PWD/target/install-c
cargo build --release --locked -p jit-client -p callgrind-jit-gdb
version=$(sed -n 's/^version = "\(.*\)"/\1/p' jit-client/Cargo.toml | head -n 1)
major=${version%%.*}
# The system libraries the static library needs, as rustc reports them.
private=$(cargo rustc --release --locked -q -p jit-client --lib --crate-type staticlib \
    -- --print native-static-libs 2>&1 | sed -n 's/.*native-static-libs: //p' | sed 's/ -lc$//')
built=$CARGO_TARGET_DIR/release

libdir="$prefix/lib"
install -d "$prefix/include" "$libdir/pkgconfig"
install -m 644 jit-client/include/callgrind_jit.h "$prefix/include/"
install -m 755 "$built/libjit_client.so" "$libdir/libcallgrind_jit.so.$version"
ln -sfn "libcallgrind_jit.so.$version" "$libdir/libcallgrind_jit.so.$major"
ln -sfn "libcallgrind_jit.so.$major" "$libdir/libcallgrind_jit.so"
install -m 644 "$built/libjit_client.a" "$libdir/libcallgrind_jit.a"
install -m 755 "$built/libcallgrind_jit_gdb.so" "$libdir/"
cat > "$libdir/pkgconfig/callgrind-jit.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: callgrind-jit
Description: Tell Valgrind and perf about JIT-compiled code (jitdump, perf map, client requests)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lcallgrind_jit
Libs.private: $private
PC
# A system prefix: refresh the loader's cache so programs find the library.
if [ "$(id -u)" -eq 0 ] && { [ "$prefix" = /usr/local ] || [ "$prefix" = /usr ]; }; then
  ldconfig
fi
echo "installed callgrind-jit $version under $prefix" >&2
