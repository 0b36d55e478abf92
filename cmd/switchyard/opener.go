package main

import "runtime"

// browserOpener is the command that opens a URL in the desktop's browser
// on this platform, for the lines that tell the user to open one.
func browserOpener() string {
	return openerFor(runtime.GOOS)
}

// openerFor is browserOpener for goos: open on macOS, xdg-open on Linux
// and the other Unix desktops.
func openerFor(goos string) string {
	if goos == "darwin" {
		return "open"
	}
	return "xdg-open"
}
