package events

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// listenSocket is one listening TCP socket: its owner and inode.
type listenSocket struct {
	uid   uint32
	inode string
}

// listeners returns the TCP sockets listening on port, IPv4 and IPv6:
// from sock_diag, or, where the kernel does not answer that, from
// /proc/net/tcp{,6}.
func listeners(port int) ([]listenSocket, error) {
	socks, err := listenersDiag(port)
	if errors.Is(err, errDiagUnavailable) {
		return listenersProc(port)
	}
	return socks, err
}

// listenersProc is listeners from the kernel's text tables, which list
// every socket of the network namespace.
func listenersProc(port int) ([]listenSocket, error) {
	var out []listenSocket
	read := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue // no IPv6, for one
		}
		read++
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			i := strings.LastIndexByte(fl[1], ':')
			p, err := strconv.ParseUint(fl[1][i+1:], 16, 16)
			if i < 0 || err != nil || int(p) != port {
				continue
			}
			uid, err := strconv.ParseUint(fl[7], 10, 32)
			if err != nil {
				continue
			}
			out = append(out, listenSocket{uid: uint32(uid), inode: fl[9]})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %v", table, err)
		}
	}
	if read == 0 {
		return nil, fmt.Errorf("no /proc/net/tcp to read")
	}
	return out, nil
}

// checkListener checks that pid holds a socket listening on port and that
// the socket belongs to this user.
func checkListener(pid int, port string) error {
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("pid %d: bad port %q", pid, port)
	}
	socks, err := listeners(p)
	if err != nil {
		return fmt.Errorf("pid %d: the owner of port %d cannot be read: %v", pid, p, err)
	}
	if len(socks) == 0 {
		return fmt.Errorf("pid %d does not listen on port %d", pid, p)
	}
	fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return fmt.Errorf("pid %d: its sockets cannot be read (%v), so it is not this user's process", pid, err)
	}
	held := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fdDir + "/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			held[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	me := uint32(os.Geteuid())
	for _, s := range socks {
		if !held[s.inode] {
			continue
		}
		if s.uid != me {
			return fmt.Errorf("pid %d listens on port %d with a socket owned by %s, not by this user (%s)", pid, p, ownerName(s.uid), ownerName(me))
		}
		return nil
	}
	return fmt.Errorf("pid %d does not hold the socket listening on port %d", pid, p)
}
