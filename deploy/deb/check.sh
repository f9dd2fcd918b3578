#!/usr/bin/env bash
# Checks a built shield .deb without installing it: unpacks it with dpkg-deb and checks every
# expected file's mode and owner, the conffiles, the maintainer scripts, that nothing in it is
# writable by group or others or set-user-ID, and that the packaged binary accepts the packaged
# configuration and unit. Prints each check; exits 1 if any failed.
#   deploy/deb/check.sh dist/shield_*.deb
set -uo pipefail

deb="${1:?usage: check.sh FILE.deb}"
command -v dpkg-deb >/dev/null || { echo "check.sh: dpkg-deb not installed (Debian package dpkg)" >&2; exit 2; }
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

listing="$(dpkg-deb --contents "$deb")" || { echo "check.sh: cannot read $deb" >&2; exit 2; }
# "MODE OWNER/GROUP SIZE DATE TIME PATH" → "PATH MODE OWNER/GROUP"
table="$(awk '{print $6, $1, $2}' <<<"$listing")"

expect() { # path mode owner
	local got
	got="$(awk -v p="$1" '$1 == p {print $2, $3}' <<<"$table")"
	if [ "$got" = "$2 $3" ]; then ok "$1 $2 $3"; else bad "$1: got '${got:-missing}', want '$2 $3'"; fi
}
expect ./usr/bin/shield                        -rwxr-xr-x root/root
expect ./usr/lib/systemd/system/shield.service -rw-r--r-- root/root
expect ./usr/lib/sysusers.d/shield.conf        -rw-r--r-- root/root
expect ./usr/lib/tmpfiles.d/shield.conf        -rw-r--r-- root/root
expect ./etc/shield/                           drwxr-x--- root/root
expect ./etc/shield/shield.yaml                -rw-r----- root/root
expect ./usr/share/shield/policies/default/    drwxr-xr-x root/root
expect ./usr/share/shield/policies/default/defaults.yaml -rw-r--r-- root/root
expect ./usr/share/doc/shield/README.md        -rw-r--r-- root/root
expect ./usr/share/doc/shield/copyright        -rw-r--r-- root/root

# Nothing owned by anyone but root, nothing group/world-writable, no set-id bits, every
# directory traversable.
while read -r path mode owner; do
	[ "$owner" = root/root ] || bad "$path owned by $owner"
	case "$mode" in ?????w????|????????w?) bad "$path is writable by group or others ($mode)" ;; esac
	case "$mode" in *[sStT]*) bad "$path has a set-id or sticky bit ($mode)" ;; esac
	case "$mode" in d*) [ "${mode:3:1}" = x ] || bad "directory $path is not traversable ($mode)" ;; esac
done <<<"$table"
ok "owners, write bits, set-id bits and directory modes of $(wc -l <<<"$table") entries"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --control "$deb" "$tmp/DEBIAN"
dpkg-deb --extract "$deb" "$tmp/root"

if [ "$(cat "$tmp/DEBIAN/conffiles")" = /etc/shield/shield.yaml ]; then ok "conffiles: /etc/shield/shield.yaml"; else bad "conffiles: $(cat "$tmp/DEBIAN/conffiles")"; fi
for s in postinst prerm postrm; do
	if [ -x "$tmp/DEBIAN/$s" ] && sh -n "$tmp/DEBIAN/$s"; then ok "$s present, executable, parses"; else bad "$s missing, not executable or not valid sh"; fi
done
grep -q 'systemd-sysusers /usr/lib/sysusers.d/shield.conf' "$tmp/DEBIAN/postinst" && ok "postinst runs systemd-sysusers" || bad "postinst does not run systemd-sysusers"
grep -q 'systemd-tmpfiles --create /usr/lib/tmpfiles.d/shield.conf' "$tmp/DEBIAN/postinst" && ok "postinst runs systemd-tmpfiles" || bad "postinst does not run systemd-tmpfiles"
for d in libseccomp2 libc6 systemd; do
	grep -q "^Depends:.*\b$d\b" "$tmp/DEBIAN/control" && ok "depends on $d" || bad "does not depend on $d"
done

# The packaged binary must accept the packaged configuration.
if out="$("$tmp/root/usr/bin/shield" config check "$tmp/root/etc/shield/shield.yaml" 2>&1)" && [ "$out" = ok ]; then
	ok "packaged shield accepts packaged shield.yaml"
else
	bad "shield config check of the packaged config: $out"
fi
# The binary's dynamic libraries must be the ones the package depends on.
if command -v ldd >/dev/null; then
	libs="$(ldd "$tmp/root/usr/bin/shield" | awk '/=>/ {print $1}' | sort | tr '\n' ' ')"
	extra=""
	for l in $libs; do
		case "$l" in libc.so.* | libseccomp.so.* | libpthread.so.* | libdl.so.* | libresolv.so.* | libm.so.*) ;; *) extra="$extra $l" ;; esac
	done
	if [ -z "$extra" ]; then ok "links only libc6 and libseccomp2 libraries: $libs"; else bad "links libraries no Depends covers:$extra"; fi
fi
# The packaged unit must still rate 2.0 or lower.
if command -v systemd-analyze >/dev/null; then
	score="$(systemd-analyze security --offline=true --no-pager "$tmp/root/usr/lib/systemd/system/shield.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for shield.service: \([0-9.]*\).*/\1/p')"
	if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then ok "unit exposure $score"; else bad "unit exposure '${score:-unknown}' > 2.0"; fi
else
	echo "skip unit exposure: systemd-analyze not installed"
fi

[ "$fail" = 0 ] && echo "PASS $deb" || echo "FAIL $deb"
exit "$fail"
