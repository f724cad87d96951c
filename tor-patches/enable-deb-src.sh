#!/bin/sh
# Adds deb-src entries mirroring the machine's Debian deb entries, so that
# `apt-get source tor` works. Does nothing when source entries already exist.
set -eu
if apt-cache showsrc tor 2>/dev/null | grep -q '^Package: tor'; then
    exit 0
fi
dir=/etc/apt/sources.list.d
for f in "$dir"/*.sources; do
    [ -f "$f" ] || continue
    case "$f" in *tornet-deb-src*) continue ;; esac
    if grep -q '^Types: deb$' "$f" && grep -q 'debian' "$f"; then
        sed 's/^Types: deb$/Types: deb-src/' "$f" > "$dir/tornet-deb-src.sources"
        break
    fi
done
if [ ! -f "$dir/tornet-deb-src.sources" ] && [ -f /etc/apt/sources.list ]; then
    grep -E '^deb [^ ]*debian' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
        > "$dir/tornet-deb-src.list"
fi
apt-get -o DPkg::Lock::Timeout=300 update -q
