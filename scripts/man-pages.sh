#!/usr/bin/env bash
# Writes docs/man/: one page per command (tether.1, tether-host.1, ...), from
# the command definitions by swift-argument-parser's manual generator, named
# as git names its pages. ManPageTests checks they are in step with the CLI;
# run this after changing a command, an option or its help.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
swift package generate-manual --multi-page --configuration debug \
    --date "$(git log -1 --format=%cs 2>/dev/null || date +%F)" --authors "The Tether developers" >&2
generated="$root/.build/plugins/GenerateManual/outputs/tether"
out="$root/docs/man"
rm -rf "$out"
mkdir -p "$out"
for page in "$generated"/*.1; do
    name=$(basename "$page" .1)
    [ "$name" = tether.help ] && continue  # ArgumentParser's own help command
    dashed=${name//./-}
    # tether.host(1) -> tether-host(1), TETHER.HOST -> TETHER-HOST, as git's pages are named.
    sed -E -e 's/tether\.([a-z.-]+)/tether-\1/g' -e 's/tether-([a-z-]+)\.([a-z-]+)/tether-\1-\2/g' \
        -e 's/TETHER\.([A-Z.-]+)/TETHER-\1/g' -e 's/TETHER-([A-Z-]+)\.([A-Z-]+)/TETHER-\1-\2/g' \
        -e '/^\.Xr tether-help 1/d' "$page" |
    # What man-db's whatis and groff want (lintian checks both): the NAME
    # section names the page's file (the synopsis keeps the command as
    # typed), a blank line is a paragraph, and a text line that starts
    # with an apostrophe is not a control line.
    awk -v page="$dashed" '
        /^\.Nm / && !named { typed = substr($0, 5); print ".Nm " page; named = 1; next }
        /^\.Nm$/ && named { print ".Nm " typed; next }
        /^\.Ex -std$/ && named { print ".Ex -std " typed; next }
        /^$/ { print ".Pp"; next }
        /^\x27/ { print "\\&" $0; next }
        { print }' > "$out/$dashed.1"
done
echo "wrote $(ls "$out" | wc -l) pages to docs/man" >&2
