#!/bin/sh
# Installs the Outpost release this script sits in: the bundle (outpost.cjs, outpost.mjs and their chunks/) and its
# native addon in /opt/outpost,
# the systemd unit in /etc/systemd/system, an empty manifests folder in /etc/outpost/manifests.
# Run as root from the unpacked tarball: sudo ./install.sh. It checks first that this board's Node
# can load the addon, so a board it cannot run on is left untouched. An upgrade replaces
# /opt/outpost in one rename and restarts a running unit; the metabase (/var/lib/outpost) is kept.
#
# Environment: NODE (default: node on PATH), OUTPOST_PREFIX (/opt/outpost),
# OUTPOST_UNIT_DIR (/etc/systemd/system), OUTPOST_CONFIG_DIR (/etc/outpost).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
prefix=${OUTPOST_PREFIX:-/opt/outpost}
unit_dir=${OUTPOST_UNIT_DIR:-/etc/systemd/system}
config_dir=${OUTPOST_CONFIG_DIR:-/etc/outpost}
node=${NODE:-$(command -v node || true)}

die() {
  echo "install.sh: $*" >&2
  exit 1
}

[ -n "$node" ] || die "no node on PATH: install Node.js 20 or 22 first (or set NODE=/path/to/node)"
abi=$("$node" -p process.versions.modules) || die "$node does not run"
arch=$("$node" -p process.arch)
binding="$here/node_modules/better-sqlite3/lib/binding/node-v$abi-linux-$arch"
if [ ! -d "$binding" ]; then
  have=$(cd "$here/node_modules/better-sqlite3/lib/binding" && ls | tr '\n' ' ')
  die "this release has no addon for Node $("$node" --version) on $arch (ABI $abi); it has: $have"
fi
# Loads the addon and opens a database: fails here (old glibc or libstdc++) rather than at boot.
"$node" -e "new (require('$here/node_modules/better-sqlite3'))(':memory:').close()" ||
  die "this board's Node cannot load the SQLite addon (it needs glibc >= 2.34 and libstdc++ from GCC >= 11)"

mkdir -p "$(dirname "$prefix")" "$unit_dir" "$config_dir/manifests"
rm -rf "$prefix.new"
mkdir "$prefix.new"
cp -R "$here/outpost.cjs" "$here/outpost.mjs" "$here/chunks" "$here/node_modules" "$prefix.new/"
# The bundle is an entry and chunks it imports when a command needs them (docs/architecture.md): an
# agent of the previous release that runs until its restart may still import one of its own. Keep
# that release's chunks (the ones its chunks.list names, one release back only) beside the new ones.
ls "$here/chunks" >"$prefix.new/chunks.list"
if [ -f "$prefix/chunks.list" ]; then
  while read -r chunk; do
    [ -e "$prefix.new/chunks/$chunk" ] || [ ! -f "$prefix/chunks/$chunk" ] ||
      cp "$prefix/chunks/$chunk" "$prefix.new/chunks/"
  done <"$prefix/chunks.list"
fi
if [ -e "$prefix" ]; then
  rm -rf "$prefix.old"
  mv "$prefix" "$prefix.old"
fi
mv "$prefix.new" "$prefix"
rm -rf "$prefix.old"

# The unit names /usr/bin/node and /opt/outpost; point it at this node and prefix.
sed -e "s|/usr/bin/node|$node|g" -e "s|/opt/outpost|$prefix|g" -e "s|/etc/outpost|$config_dir|g" \
  "$here/outpost.service" >"$unit_dir/outpost.service"

version=$("$node" "$prefix/outpost.cjs" version --client) || die "the installed bundle does not run"
echo "installed Outpost ${version#Client Version: } in $prefix"
echo "unit: $unit_dir/outpost.service (node: $node)"
if [ "$unit_dir" = /etc/systemd/system ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  if systemctl is-active --quiet outpost; then
    systemctl restart outpost
    echo "restarted the running outpost unit"
  else
    echo "next: systemctl enable --now outpost"
  fi
fi
