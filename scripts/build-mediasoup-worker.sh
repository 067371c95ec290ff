#!/usr/bin/env bash
# Builds mediasoup's C++ worker ("mediasoup-worker") OFFLINE on Debian 12 (bookworm) from the
# mediasoup npm tarball against Debian's libraries, and caches it. A cached binary is reused:
# the build (4-5 min on 2 cores) runs only when the cache lacks it.
#
# Why: `npm install mediasoup` downloads a prebuilt worker from GitHub, or builds it with meson
# and ninja fetched from PyPI plus sources fetched by meson's wraps. None of that works on a
# machine that reaches only the npm registry and Debian's packages. Here the sources come from
# `npm pack mediasoup@<version>`, and every meson subproject is replaced by a stand-in that
# wraps the Debian -dev package (pkg-config). Adapted from the team's tested recipe
# (shared/tools/build-mediasoup-worker.sh); this copy supports the 3.19.x line the project pins.
#
# Usage:
#   bash scripts/build-mediasoup-worker.sh            build unless cached; copy into node_modules
#   bash scripts/build-mediasoup-worker.sh --print-bin   print the cached binary's path; exit 1 if absent
#   eval "$(bash scripts/build-mediasoup-worker.sh --env)"   build unless cached, then export
#                                                        MEDIASOUP_WORKER_BIN in this shell
# Env:
#   MEDIASOUP_VERSION  version to build (default: the exact pin in package.json)
#   MEDIASOUP_WORKER_CACHE  cache folder (default ${XDG_CACHE_HOME:-~/.cache}/mediasoup-worker)
#   JOBS               ninja parallelism (default: nproc)
#   SKIP_APT=1         do not install Debian packages (they must already be there)
#   KEEP_BUILD=1       keep the scratch build folder (default: removed after a build)
#
# The binary lands in $MEDIASOUP_WORKER_CACHE/<version>/mediasoup-worker. Install the JS
# package with MEDIASOUP_WORKER_BIN pointing at it, so mediasoup's postinstall skips its
# download/build:  MEDIASOUP_WORKER_BIN=<that path> npm ci
# At run time the media server finds the binary by itself (src/media-server/worker-bin.ts:
# ROOMS_MEDIA_WORKER_BIN, MEDIASOUP_WORKER_BIN, node_modules, then this cache).
set -euo pipefail

PROJECT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=build
case "${1:-}" in
  '') ;;
  --print-bin) MODE=print ;;
  --env) MODE=env ;;
  -h | --help) sed -n '2,29p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
esac

# Progress goes to stderr so that `--env` can print only the export line on stdout.
log() { printf '\n=== %s\n' "$*" >&2; }

pinned_version() {
  node -e '
    const pkg = require(process.argv[1]);
    const v = (pkg.dependencies || {}).mediasoup || "";
    if (/^\d+\.\d+\.\d+$/.test(v)) console.log(v);
  ' "$PROJECT_DIR/package.json" 2>/dev/null || true
}

MEDIASOUP_VERSION="${MEDIASOUP_VERSION:-$(pinned_version)}"
MEDIASOUP_VERSION="${MEDIASOUP_VERSION:-3.19.3}"
CACHE="${MEDIASOUP_WORKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediasoup-worker}"
OUT_BIN="$CACHE/$MEDIASOUP_VERSION/mediasoup-worker"
# Marks a binary built by this script with the DTLS fix; a binary without it would crash on
# the first DTLS handshake against Debian's OpenSSL, so it is not reused.
STAMP="$OUT_BIN.built-by-echochat"
JOBS="${JOBS:-$(nproc)}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

if [ "$MODE" = print ]; then
  if [ -x "$OUT_BIN" ]; then echo "$OUT_BIN"; exit 0; fi
  echo "no cached mediasoup-worker $MEDIASOUP_VERSION at $OUT_BIN" >&2
  exit 1
fi

# Debian's runtime libraries of the worker come with these -dev packages.
BUILD_PACKAGES=(build-essential pkg-config ninja-build libuv1-dev libssl-dev libsrtp2-dev
  libusrsctp-dev libabsl-dev flatbuffers-compiler libflatbuffers-dev)

apt_install() {
  [ "${SKIP_APT:-0}" = 1 ] && return 0
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q >&2
  if [ "${1:-}" = with-meson ]; then
    # mediasoup needs meson >= 1.1; bookworm has 1.0.1, bookworm-backports has newer.
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      local mirror
      mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n1 || true)"
      [ -n "$mirror" ] || mirror="$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
      [ -n "$mirror" ] || { echo "no bookworm apt source to derive backports from" >&2; exit 1; }
      echo "deb $mirror bookworm-backports main" |
        $SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
      $SUDO apt-get update -q >&2
    fi
    $SUDO apt-get install -y -q --no-install-recommends -t bookworm-backports meson >&2
  fi
  $SUDO apt-get install -y -q --no-install-recommends "${BUILD_PACKAGES[@]}" >&2
}

binary_links() { ! ldd "$1" 2>/dev/null | grep -q 'not found'; }

# A binary this script installed in node_modules survives until the next `npm ci`; mediasoup
# looks there when MEDIASOUP_WORKER_BIN is unset.
install_into_node_modules() {
  local pkg="$PROJECT_DIR/node_modules/mediasoup/package.json" installed dest
  [ -f "$pkg" ] || return 0
  installed="$(node -p 'require(process.argv[1]).version' "$pkg")"
  if [ "$installed" != "$MEDIASOUP_VERSION" ]; then
    echo "node_modules has mediasoup $installed, not $MEDIASOUP_VERSION: not copying the worker" >&2
    return 0
  fi
  dest="$PROJECT_DIR/node_modules/mediasoup/worker/out/Release/mediasoup-worker"
  mkdir -p "$(dirname "$dest")"
  cp "$OUT_BIN" "$dest.tmp" && mv -f "$dest.tmp" "$dest"
  echo "installed as $dest" >&2
}

finish() {
  install_into_node_modules
  if [ "$MODE" = env ]; then
    printf 'export MEDIASOUP_WORKER_BIN=%q\n' "$OUT_BIN"
  else
    echo "mediasoup-worker $MEDIASOUP_VERSION: $OUT_BIN" >&2
    echo "install with: MEDIASOUP_WORKER_BIN=$OUT_BIN npm ci" >&2
  fi
  exit 0
}

# ---------------------------------------------------------------------------
# 0. Cached binary: reuse it (installing its runtime libraries if this machine lacks them)
# ---------------------------------------------------------------------------
if [ -x "$OUT_BIN" ] && { [ -f "$STAMP" ] || [ -f "$OUT_BIN.prebuilt-by-mediasoup" ]; }; then
  if ! binary_links "$OUT_BIN"; then
    log "cached worker misses shared libraries; installing Debian's"
    apt_install
  fi
  if binary_links "$OUT_BIN"; then
    log "reusing cached mediasoup-worker $MEDIASOUP_VERSION"
    finish
  fi
  echo "cached worker still misses libraries; rebuilding" >&2
fi

case "$MEDIASOUP_VERSION" in
  3.19.*) ;;
  *) echo "this script builds mediasoup 3.19.x (the project's pin), not $MEDIASOUP_VERSION" >&2; exit 1 ;;
esac

# ---------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------
log "apt: meson (bookworm-backports) and the worker's build dependencies"
apt_install with-meson

# ---------------------------------------------------------------------------
# 2. Sources from the npm registry (no install scripts run)
# ---------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mediasoup-worker-build.XXXXXX")"
[ "${KEEP_BUILD:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
log "fetching mediasoup@$MEDIASOUP_VERSION sources from npm into $WORK"
cd "$WORK"
TGZ="$(npm pack --silent "mediasoup@$MEDIASOUP_VERSION" | tail -n1)"
tar xzf "$TGZ"
W="$WORK/package/worker"
SP="$W/subprojects"

# ---------------------------------------------------------------------------
# 2b. DTLS fix for kTLS-enabled OpenSSL (Debian's; mediasoup normally bundles its own): the
# BIO callback must return OpenSSL's own result for every "after" call. Returning 1 for
# BIO_CB_CTRL|BIO_CB_RETURN makes BIO_get_ktls_send() report kTLS on the memory BIO; libssl
# then never allocates its write buffer and the worker crashes (SIGSEGV in do_dtls1_write)
# on the first DTLS handshake.
# ---------------------------------------------------------------------------
DTLS_SRC="$W/src/RTC/DtlsTransport.cpp"
BAD='(operationType == BIO_CB_RETURN) ? static_cast<long>(ret) : 1'
if grep -qF "$BAD" "$DTLS_SRC"; then
  sed -i 's/(operationType == BIO_CB_RETURN) ? static_cast<long>(ret) : 1/(operationType \& BIO_CB_RETURN) ? static_cast<long>(ret) : 1/' "$DTLS_SRC"
  grep -qF '(operationType & BIO_CB_RETURN)' "$DTLS_SRC" || { echo "DTLS patch failed" >&2; exit 1; }
  log "patched DtlsTransport.cpp BIO callback"
elif ! grep -qF '(operationType & BIO_CB_RETURN)' "$DTLS_SRC"; then
  echo "DtlsTransport.cpp: BIO callback line not found; check the kTLS fix by hand" >&2
  exit 1
fi

# ---------------------------------------------------------------------------
# 3. System-library stand-ins for meson's downloaded subprojects
# ---------------------------------------------------------------------------
log "writing stand-in subprojects"
rm -f "$SP"/*.wrap
mk() { mkdir -p "$SP/$1"; cat >"$SP/$1/meson.build"; }
placeholder() { echo 'int ms_placeholder_symbol_unused(void);' >"$SP/$1/$2"; }

mk openssl <<'EOF'
project('openssl', 'c')
openssl_dep = declare_dependency(dependencies: [dependency('libssl'), dependency('libcrypto')])
# Only referenced by the libmediasoup-worker target, which is not built.
libssl_lib = static_library('ssl_placeholder', 'placeholder.c', build_by_default: false)
libcrypto_lib = static_library('crypto_placeholder', 'placeholder.c', build_by_default: false)
EOF
placeholder openssl placeholder.c

mk libuv <<'EOF'
project('libuv', 'c')
libuv_dep = dependency('libuv')
libuv = static_library('uv_placeholder', 'placeholder.c', build_by_default: false)
EOF
printf "option('build_tests', type: 'boolean', value: false)\noption('build_benchmarks', type: 'boolean', value: false)\n" \
  >"$SP/libuv/meson_options.txt"
placeholder libuv placeholder.c

# Debian has libsrtp 2.5; mediasoup 3.19 is written against the libsrtp 3 API (size_t
# lengths, separate in/out buffers). compat/srtp.h adds C++ overloads with the libsrtp 3
# signatures on top of libsrtp 2's in-place functions.
mk libsrtp3 <<'EOF'
project('libsrtp3', 'c')
libsrtp3_dep = declare_dependency(
  dependencies: [dependency('libsrtp2')],
  include_directories: include_directories('compat'),
)
libsrtp3 = static_library('srtp3_placeholder', 'placeholder.c', build_by_default: false)
EOF
printf "option('crypto-library', type: 'string', value: 'openssl')\noption('crypto-library-kdf', type: 'string', value: 'disabled')\noption('tests', type: 'string', value: 'disabled')\n" \
  >"$SP/libsrtp3/meson_options.txt"
placeholder libsrtp3 placeholder.c
mkdir -p "$SP/libsrtp3/compat"
cat >"$SP/libsrtp3/compat/srtp.h" <<'EOF'
// libsrtp 3 API over Debian's libsrtp 2.x: copy into the output buffer, then call the
// libsrtp 2 in-place function.
#ifndef MS_LIBSRTP3_COMPAT_SRTP_H
#define MS_LIBSRTP3_COMPAT_SRTP_H

#include <srtp2/srtp.h>

#ifdef __cplusplus
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

// Error codes that exist only in libsrtp 3.
#define srtp_err_status_buffer_small (static_cast<srtp_err_status_t>(28))
#define srtp_err_status_cryptex_err (static_cast<srtp_err_status_t>(29))

namespace ms_srtp3_compat
{
	inline srtp_err_status_t copyIn(
	  const uint8_t* in, size_t inLen, uint8_t* out, size_t outCap, size_t trailer, int* len)
	{
		if (inLen > static_cast<size_t>(INT_MAX) - trailer || inLen + trailer > outCap)
			return srtp_err_status_buffer_small;
		if (out != in)
			std::memmove(out, in, inLen);
		*len = static_cast<int>(inLen);
		return srtp_err_status_ok;
	}
} // namespace ms_srtp3_compat

inline srtp_err_status_t srtp_stream_remove(srtp_t session, uint32_t ssrc)
{
	return srtp_remove_stream(session, ssrc);
}

inline srtp_err_status_t srtp_protect(
  srtp_t ctx, const uint8_t* rtp, size_t rtp_len, uint8_t* srtp, size_t* srtp_len, size_t mki_index)
{
	int len = 0;
	srtp_err_status_t err = ms_srtp3_compat::copyIn(rtp, rtp_len, srtp, *srtp_len, SRTP_MAX_TRAILER_LEN, &len);
	if (err != srtp_err_status_ok)
		return err;
	err = (mki_index == 0) ? srtp_protect(ctx, static_cast<void*>(srtp), &len)
	                       : srtp_protect_mki(ctx, static_cast<void*>(srtp), &len, 1, static_cast<unsigned int>(mki_index));
	if (err == srtp_err_status_ok)
		*srtp_len = static_cast<size_t>(len);
	return err;
}

inline srtp_err_status_t srtp_unprotect(
  srtp_t ctx, const uint8_t* srtp, size_t srtp_len, uint8_t* rtp, size_t* rtp_len)
{
	int len = 0;
	srtp_err_status_t err = ms_srtp3_compat::copyIn(srtp, srtp_len, rtp, *rtp_len, 0, &len);
	if (err != srtp_err_status_ok)
		return err;
	err = srtp_unprotect(ctx, static_cast<void*>(rtp), &len);
	if (err == srtp_err_status_ok)
		*rtp_len = static_cast<size_t>(len);
	return err;
}

inline srtp_err_status_t srtp_protect_rtcp(
  srtp_t ctx, const uint8_t* rtcp, size_t rtcp_len, uint8_t* srtcp, size_t* srtcp_len, size_t mki_index)
{
	int len = 0;
	srtp_err_status_t err =
	  ms_srtp3_compat::copyIn(rtcp, rtcp_len, srtcp, *srtcp_len, SRTP_MAX_TRAILER_LEN + 4, &len);
	if (err != srtp_err_status_ok)
		return err;
	err = (mki_index == 0)
	        ? srtp_protect_rtcp(ctx, static_cast<void*>(srtcp), &len)
	        : srtp_protect_rtcp_mki(ctx, static_cast<void*>(srtcp), &len, 1, static_cast<unsigned int>(mki_index));
	if (err == srtp_err_status_ok)
		*srtcp_len = static_cast<size_t>(len);
	return err;
}

inline srtp_err_status_t srtp_unprotect_rtcp(
  srtp_t ctx, const uint8_t* srtcp, size_t srtcp_len, uint8_t* rtcp, size_t* rtcp_len)
{
	int len = 0;
	srtp_err_status_t err = ms_srtp3_compat::copyIn(srtcp, srtcp_len, rtcp, *rtcp_len, 0, &len);
	if (err != srtp_err_status_ok)
		return err;
	err = srtp_unprotect_rtcp(ctx, static_cast<void*>(rtcp), &len);
	if (err == srtp_err_status_ok)
		*rtcp_len = static_cast<size_t>(len);
	return err;
}
#endif // __cplusplus

#endif
EOF

mk usrsctp <<'EOF'
project('usrsctp', 'c')
usrsctp_dep = dependency('usrsctp')
usrsctp = static_library('usrsctp_placeholder', 'placeholder.c', build_by_default: false)
EOF
echo "option('sctp_build_programs', type: 'boolean', value: false)" >"$SP/usrsctp/meson_options.txt"
placeholder usrsctp placeholder.c

mk abseil-cpp <<'EOF'
project('abseil-cpp', 'cpp')
absl_container_dep = declare_dependency(dependencies: [
  dependency('absl_flat_hash_map'),
  dependency('absl_flat_hash_set'),
  dependency('absl_btree'),
  dependency('absl_inlined_vector'),
  dependency('absl_memory'),
  dependency('absl_optional'),
])
absl_strings_dep = declare_dependency(dependencies: [dependency('absl_strings')])
absl_types_dep = declare_dependency(dependencies: [
  dependency('absl_optional'),
  dependency('absl_bad_optional_access'),
])
absl_container_lib = static_library('absl_placeholder', 'placeholder.cpp', build_by_default: false)
EOF
placeholder abseil-cpp placeholder.cpp

# flatc (flatbuffers-compiler) regenerates the C++ headers; the wire format matches the JS
# side's flatbuffers code.
mk flatbuffers <<'EOF'
project('flatbuffers', 'cpp')
flatbuffers_dep = dependency('flatbuffers')
flatbuffers_lib = static_library('flatbuffers_placeholder', 'placeholder.cpp', build_by_default: false)
EOF
placeholder flatbuffers placeholder.cpp

# Only the worker's own unit tests use catch2; they are not built.
mk catch2 <<'EOF'
project('catch2', 'cpp')
catch2_dep = declare_dependency()
catch2_with_main_dep = declare_dependency()
EOF

# ---------------------------------------------------------------------------
# 4. Configure and build (the flags of mediasoup's own Release build)
# ---------------------------------------------------------------------------
cd "$W"
# On kernels >= 6 mediasoup wants liburing >= 2.4; bookworm has 2.3. io_uring is an optional
# send-path optimisation: without it the worker sends through libuv.
log "meson setup"
meson setup --wrap-mode=nodownload --buildtype release -Db_ndebug=true \
  -Dms_disable_liburing=true "$W/out/Release/build" >&2
log "compiling (-j$JOBS; about 4-5 min on 2 cores)"
start=$(date +%s)
meson compile -C "$W/out/Release/build" flatbuffers-generator >&2
meson compile -C "$W/out/Release/build" -j "$JOBS" mediasoup-worker >&2
echo "compile took $(($(date +%s) - start)) s" >&2

mkdir -p "$(dirname "$OUT_BIN")"
cp "$W/out/Release/build/mediasoup-worker" "$OUT_BIN.tmp"
strip "$OUT_BIN.tmp" || true
if ! binary_links "$OUT_BIN.tmp"; then
  ldd "$OUT_BIN.tmp" >&2
  echo "the built worker misses shared libraries" >&2
  exit 1
fi
mv -f "$OUT_BIN.tmp" "$OUT_BIN"
printf 'mediasoup %s, built %s from the npm tarball against Debian libraries, DTLS kTLS fix applied\n' \
  "$MEDIASOUP_VERSION" "$(date -u +%FT%TZ)" >"$STAMP"
log "built $OUT_BIN"
finish
