#!/bin/sh
# The consensus parameters a tor source tree reads (outside its tests), one
# per line: the "# tor" part of consensus-params.txt.
#   tor-patches/list-consensus-params.sh path/to/tor-source
set -eu
find "$1/src" -name '*.c' -not -path '*/test/*' | xargs perl -0ne '
  while (/(?:networkstatus_get_param|networkstatus_get_overridable_param|[a-z_]*_get_param)\s*\([^;]*?"([A-Za-z0-9_-]+)"/gs) {
    print "$1\n"
  }' | sort -u
