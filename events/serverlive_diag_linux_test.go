package events

import (
	"encoding/binary"
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListenersDiagMatchesProc: the sock_diag dump finds the same
// listening sockets, owner and inode, as /proc/net/tcp{,6}, for an IPv4
// and an IPv6 listener of this process, and checkListener accepts this
// process as their holder and refuses another pid.
func TestListenersDiagMatchesProc(t *testing.T) {
	t.Parallel()
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		l, err := net.Listen(network, addr)
		if network == "tcp6" && err != nil {
			t.Logf("no IPv6 loopback here: %v", err)
			continue
		}
		require.NoError(t, err)
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		diag, err := listenersDiag(port)
		require.NoError(t, err)
		proc, err := listenersProc(port)
		require.NoError(t, err)
		require.Len(t, diag, 1, network)
		require.ElementsMatch(t, proc, diag, network)
		require.Equal(t, uint32(os.Geteuid()), diag[0].uid)
		require.NoError(t, checkListener(os.Getpid(), strconv.Itoa(port)))
		require.Error(t, checkListener(os.Getppid(), strconv.Itoa(port)))
	}
}

// diagRecord is one SOCK_DIAG_BY_FAMILY message for a socket in state on
// sport, owned by uid, with inode.
func diagRecord(seq uint32, state uint8, sport uint16, uid, inode uint32) []byte {
	b := make([]byte, syscall.NLMSG_HDRLEN+inetDiagMsgLen)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint32(b[8:], seq)
	m := b[syscall.NLMSG_HDRLEN:]
	m[0], m[1] = syscall.AF_INET, state
	binary.BigEndian.PutUint16(m[4:], sport)
	binary.NativeEndian.PutUint32(m[64:], uid)
	binary.NativeEndian.PutUint32(m[68:], inode)
	return b
}

func diagDone(seq uint32) []byte {
	b := make([]byte, syscall.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], syscall.NLMSG_DONE)
	binary.NativeEndian.PutUint32(b[8:], seq)
	return b
}

// TestParseDiagAnswer: the records of the port in LISTEN are kept, the
// dump's end is seen, and an answer that is short, to another request, of
// another type or an error is refused (so the /proc tables are read
// instead).
func TestParseDiagAnswer(t *testing.T) {
	t.Parallel()
	answer := slices.Concat(diagRecord(7, tcpListenState, 4222, 1000, 42), diagRecord(7, tcpListenState, 4223, 1000, 43),
		diagRecord(7, 1, 4222, 1000, 44), diagDone(7))
	socks, done, err := parseDiagAnswer(answer, 7, 4222)
	require.NoError(t, err)
	require.True(t, done)
	require.Equal(t, []listenSocket{{uid: 1000, inode: "42"}}, socks)

	socks, done, err = parseDiagAnswer(diagRecord(7, tcpListenState, 4222, 0, 9), 7, 4222)
	require.NoError(t, err)
	require.False(t, done, "no end yet: the next datagram continues the dump")
	require.Len(t, socks, 1)

	bad := map[string][]byte{
		"short header":    answer[:10],
		"short record":    diagRecord(7, tcpListenState, 4222, 0, 9)[:40],
		"another request": diagRecord(8, tcpListenState, 4222, 0, 9),
		"length past end": func() []byte { b := diagDone(7); binary.NativeEndian.PutUint32(b[0:], 99); return b }(),
		"error":           func() []byte { b := diagDone(7); binary.NativeEndian.PutUint16(b[4:], syscall.NLMSG_ERROR); return b }(),
		"other type":      func() []byte { b := diagDone(7); binary.NativeEndian.PutUint16(b[4:], 99); return b }(),
	}
	for name, b := range bad {
		_, _, err := parseDiagAnswer(b, 7, 4222)
		require.ErrorIs(t, err, errDiagUnavailable, name)
	}
}

// FuzzParseDiagAnswer: no datagram makes the parser panic, and whatever
// it accepts names only sockets of the port asked for.
func FuzzParseDiagAnswer(f *testing.F) {
	f.Add(slices.Concat(diagRecord(1, tcpListenState, 4222, 1000, 42), diagDone(1)), 4222)
	f.Add(diagDone(1), 80)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, port int) {
		socks, _, err := parseDiagAnswer(b, 1, port)
		if err != nil {
			require.Empty(t, socks)
		}
	})
}

// BenchmarkListeners: one serve.json check's socket lookup, by sock_diag
// and by the /proc tables, with as many sockets as the host has now.
func BenchmarkListeners(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(b, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name string
		read func(int) ([]listenSocket, error)
	}{{"diag", listenersDiag}, {"proc", listenersProc}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tc.read(port); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
