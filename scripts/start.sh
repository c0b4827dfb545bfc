#!/usr/bin/env sh
# `npm start`: Outpost on its embedded defaults with the sample manifests, on the containerd lab
# when it runs (`npm run lab`), else on the runtime endpoint from OUTPOST_RUNTIME_ENDPOINT or the
# system containerd. Extra arguments go to `outpost serve`.
set -eu
cd "$(dirname "$0")/.."
[ -f dist/outpost.mjs ] || npm run build
lab="unix://${OUTPOST_LAB_DIR:-/tmp/outpost-lab}/containerd.sock"
if [ -z "${OUTPOST_RUNTIME_ENDPOINT:-}" ] && [ -S "${lab#unix://}" ]; then
  export OUTPOST_RUNTIME_ENDPOINT="$lab"
fi
exec node dist/outpost.mjs serve --manifests examples/manifests "$@"
