#!/usr/bin/env bash
# Installs the system tools some tests drive, when they are missing and this
# machine lets us (root, or passwordless sudo, with apt-get):
#
#   chromium                    the console's browser tests (cmd/switchyard TestConsoleBrowser*)
#   bubblewrap, socat, ripgrep  the sandbox runtime's conformance test; Claude writers' sandbox
#   curl, jq                    the HTTP API example (examples/http)
#
# Without them those tests skip and say so, except under CI=true, where
# they fail: so under CI=true a tool this script cannot install is an
# error here, naming the packages, rather than minutes later in a test.
# make test and .ci/run both call it.
set -euo pipefail

missing=""
for tool in chromium:chromium bwrap:bubblewrap socat:socat rg:ripgrep curl:curl jq:jq; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || missing="$missing ${tool#*:}"
done
[ -z "$missing" ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo="sudo -n"
	fi
fi
if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
	echo "installing$missing for the tests that drive them"
	$sudo apt-get update -qq
	# shellcheck disable=SC2086 # a list of package names
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	exit 0
fi

if [ "${CI:-}" = "true" ]; then
	echo "test-tools: missing$missing and CI=true, and this machine cannot install them here (needs root or passwordless sudo, and apt-get): install them, then rerun" >&2
	exit 1
fi
echo "test-tools: missing$missing: the tests that drive them will skip (install them, e.g. apt-get install -y$missing)"
