//go:build !linux

package events

// checkListener cannot see sockets' owners without /proc: pid and start
// identity decide there (CheckServer).
func checkListener(pid int, port string) error { return nil }
