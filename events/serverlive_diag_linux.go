package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"
)

// The kernel's socket table by sock_diag (netlink), listening TCP sockets
// only. /proc/net/tcp lists every socket of the network namespace, the
// closed ones waiting out TIME_WAIT included, and the kernel formats the
// whole table for every read: on a busy host that was most of a command's
// connect (a serve.json check reads it on every connect). A dump asked for
// listening sockets alone is a few dozen bytes per socket.
const (
	netlinkSockDiag   = 4  // NETLINK_SOCK_DIAG
	sockDiagByFamily  = 20 // SOCK_DIAG_BY_FAMILY
	tcpListenState    = 10 // TCP_LISTEN
	inetDiagReqLen    = 56 // struct inet_diag_req_v2
	inetDiagMsgLen    = 72 // struct inet_diag_msg
	diagReadDeadline  = 2 * time.Second
	diagMaxDumpBytes  = 4 << 20 // a bound on one dump, whatever the kernel says
	diagReceiveBuffer = 64 << 10
)

// errDiagUnavailable: the kernel did not answer the dump (no sock_diag, a
// seccomp filter, an unexpected reply): read /proc/net/tcp instead.
var errDiagUnavailable = errors.New("sock_diag unavailable")

// listenersDiag returns the TCP sockets listening on port, IPv4 and IPv6,
// from sock_diag dumps.
func listenersDiag(port int) ([]listenSocket, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkSockDiag)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDiagUnavailable, err)
	}
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(diagReadDeadline.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return nil, fmt.Errorf("%w: %v", errDiagUnavailable, err)
	}
	var out []listenSocket
	for i, family := range []uint8{syscall.AF_INET, syscall.AF_INET6} {
		seq := uint32(i + 1)
		if err := syscall.Sendto(fd, diagRequest(family, seq), 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
			return nil, fmt.Errorf("%w: %v", errDiagUnavailable, err)
		}
		socks, err := readDiagDump(fd, seq, port)
		if err != nil {
			return nil, err
		}
		out = append(out, socks...)
	}
	return out, nil
}

// diagRequest is a dump request for family's listening TCP sockets.
func diagRequest(family uint8, seq uint32) []byte {
	b := make([]byte, syscall.NLMSG_HDRLEN+inetDiagReqLen)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(b[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(b[8:], seq)
	r := b[syscall.NLMSG_HDRLEN:]
	r[0], r[1] = family, syscall.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], 1<<tcpListenState)
	return b
}

// readDiagDump reads the answers to dump seq until its end, keeping the
// sockets listening on port. Only the kernel's answers are read.
func readDiagDump(fd int, seq uint32, port int) ([]listenSocket, error) {
	buf := make([]byte, diagReceiveBuffer)
	var out []listenSocket
	for total := 0; total <= diagMaxDumpBytes; {
		n, from, err := syscall.Recvfrom(fd, buf, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errDiagUnavailable, err)
		}
		if sa, ok := from.(*syscall.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // not the kernel
		}
		total += n
		socks, done, err := parseDiagAnswer(buf[:n], seq, port)
		if err != nil {
			return nil, err
		}
		out = append(out, socks...)
		if done {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: a dump of more than %d bytes", errDiagUnavailable, diagMaxDumpBytes)
}

// parseDiagAnswer reads one datagram of netlink messages answering dump
// seq: the listening sockets on port it lists, and whether the dump ended.
// Anything that is not a well-formed answer is an error.
func parseDiagAnswer(b []byte, seq uint32, port int) (socks []listenSocket, done bool, err error) {
	for len(b) > 0 {
		if len(b) < syscall.NLMSG_HDRLEN {
			return nil, false, fmt.Errorf("%w: a short netlink header", errDiagUnavailable)
		}
		l := int(binary.NativeEndian.Uint32(b[0:]))
		typ := binary.NativeEndian.Uint16(b[4:])
		if l < syscall.NLMSG_HDRLEN || l > len(b) {
			return nil, false, fmt.Errorf("%w: a netlink message of %d bytes in %d", errDiagUnavailable, l, len(b))
		}
		if binary.NativeEndian.Uint32(b[8:]) != seq {
			return nil, false, fmt.Errorf("%w: an answer to another request", errDiagUnavailable)
		}
		body := b[syscall.NLMSG_HDRLEN:l]
		switch typ {
		case syscall.NLMSG_DONE:
			return socks, true, nil
		case syscall.NLMSG_ERROR:
			return nil, false, fmt.Errorf("%w: the kernel refused the dump", errDiagUnavailable)
		case sockDiagByFamily:
			if len(body) < inetDiagMsgLen {
				return nil, false, fmt.Errorf("%w: a short socket record", errDiagUnavailable)
			}
			state := body[1]
			sport := int(binary.BigEndian.Uint16(body[4:]))
			uid := binary.NativeEndian.Uint32(body[64:])
			inode := binary.NativeEndian.Uint32(body[68:])
			if state == tcpListenState && sport == port {
				socks = append(socks, listenSocket{uid: uid, inode: strconv.FormatUint(uint64(inode), 10)})
			}
		default:
			return nil, false, fmt.Errorf("%w: netlink message type %d", errDiagUnavailable, typ)
		}
		// Messages are aligned to 4 bytes.
		next := (l + syscall.NLMSG_ALIGNTO - 1) &^ (syscall.NLMSG_ALIGNTO - 1)
		if next >= len(b) {
			break
		}
		b = b[next:]
	}
	return socks, false, nil
}
