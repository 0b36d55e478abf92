#!/usr/bin/env bash
# Installs the provider CLIs published on the npm registry (codex, claude,
# gemini, opencode and the sandbox runtime srt) for the conformance suite,
# never globally: into SWITCHYARD_REALCLI_DIR (default
# ${XDG_CACHE_HOME:-~/.cache}/switchyard/real-clis), from the committed
# testdata/realcli/package-lock.json. Install scripts run only where
# package.json's allowScripts allows them: @anthropic-ai/claude-code and
# opencode-ai, whose postinstall links the platform binary their optional
# package shipped into bin/ (without it bin/ holds a text stub: "exec format
# error"; neither downloads anything). Gemini's keytar and node-pty native
# builds are denied: gemini runs without them.
#
# Not `npm ci`: npm writes only this platform's optional packages of
# opencode-ai into a lockfile, and npm ci then refuses the lockfile on every
# platform ("Missing: opencode-darwin-arm64@ from lock file"). So npm install
# runs against the lockfile (which pins every version and integrity hash the
# tree has here), and `npm ls` afterwards fails the install if anything
# differs from package.json's exact pins.
#
#   scripts/real-clis.sh                 the pinned (verified) versions
#   VERSIONS="@openai/codex@0.172.0 opencode-ai@1.19.0" scripts/real-clis.sh
#                                        the pinned set with these releases
#                                        instead, into <dir>-custom (the
#                                        pinned install is left alone)
#
# The last line printed is the directory whose node_modules/.bin holds the
# CLIs; an install whose lockfile (and VERSIONS) did not change is reused.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/testdata/realcli"
cache="${XDG_CACHE_HOME:-$HOME/.cache}"
dir="${SWITCHYARD_REALCLI_DIR:-$cache/switchyard/real-clis}"
versions="${VERSIONS:-}"
if [ -n "$versions" ]; then
	dir="$dir-custom"
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "real-clis: npm is not installed; install Node.js and npm (apt-get install -y nodejs npm) and run make real-clis again" >&2
	exit 69
fi

stamp="$(cat "$src/package.json" "$src/package-lock.json" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1) $versions"
if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] && [ -d "$dir/node_modules/.bin" ]; then
	echo "real-clis: up to date in $dir" >&2
	echo "$dir"
	exit 0
fi

mkdir -p "$dir"
rm -rf "$dir/node_modules" "$dir/.stamp"
cp "$src/package.json" "$src/package-lock.json" "$dir/"
echo "real-clis: installing the pinned CLIs into $dir" >&2
(cd "$dir" && npm install --strict-allow-scripts --no-audit --no-fund --loglevel=error >&2)
if [ -n "$versions" ]; then
	echo "real-clis: replacing with $versions" >&2
	# shellcheck disable=SC2086 # VERSIONS is a list of package@version words
	(cd "$dir" && npm install --no-save --strict-allow-scripts --no-audit --no-fund --loglevel=error $versions >&2)
fi
if [ -z "$versions" ]; then
	(cd "$dir" && npm ls --omit=dev >/dev/null) || {
		echo "real-clis: the install in $dir does not match testdata/realcli/package.json" >&2
		exit 1
	}
fi
for cli in claude codex gemini opencode srt; do
	if ! "$dir/node_modules/.bin/$cli" --version >/dev/null 2>&1; then
		echo "real-clis: $cli from $dir/node_modules/.bin does not run (--version failed) after the install" >&2
		exit 1
	fi
done
echo "$stamp" >"$dir/.stamp"
echo "$dir"
