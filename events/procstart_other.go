//go:build !linux

package events

// processStart uses ps -o lstart where there is no /proc, bounded to one
// second (PSProcessStart).
func processStart(pid int) (string, ProcState) { return PSProcessStart(pid) }
